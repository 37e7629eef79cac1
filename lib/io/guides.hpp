// Finding the guides of a render for bilateral and atrous in the input's own EXR layers, by
// the names renderers give them (run/input_stream.cpp reads them, or the files a spec names).
#pragma once

#include <string>
#include <vector>

#include "io/image_io.hpp"

namespace halo {

// The channels of the input that hold each guide, by the names renderers use: Blender
// ViewLayer.Normal.X/Y/Z, ViewLayer.Depth.Z, ViewLayer.DiffCol.R/G/B; also N.x/y/z,
// normal.x/y/z, Z, depth, albedo.R/G/B (case-insensitive). Empty where not found.
struct GuideChannels {
  std::vector<std::string> normal, depth, albedo;
};
GuideChannels find_guide_channels(const std::vector<std::string>& names);

// The channels of a render's motion in pixels: Blender's ViewLayer.Vector.X and .Y towards the
// previous frame (any layer's Vector.X/Y, case-insensitive), whose previous position of pixel
// (x, y) is (x + X, y - Y), then .Z and .W towards the next, where the file has them (next
// position (x - Z, y + W)). Empty where not found.
std::vector<std::string> find_motion_channels(const std::vector<std::string>& names);

}  // namespace halo
