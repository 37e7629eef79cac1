// Finding and reading the guides of a render for bilateral and atrous: files named in a spec
// (normal=n.exr[N.X,N.Y,N.Z]), else the input's own EXR layers.
#pragma once

#include <string>
#include <vector>

#include "filters/guides.hpp"
#include "io/image_io.hpp"

namespace halo {

// The channels of the input that hold each guide, by the names renderers use: Blender
// ViewLayer.Normal.X/Y/Z, ViewLayer.Depth.Z, ViewLayer.DiffCol.R/G/B; also N.x/y/z,
// normal.x/y/z, Z, depth, albedo.R/G/B (case-insensitive). Empty where not found.
struct GuideChannels {
  std::vector<std::string> normal, depth, albedo;
};
GuideChannels find_guide_channels(const std::vector<std::string>& names);

// Reads what `sources` asks for: "auto" takes the input's channels when it has them, "off"
// nothing, anything else is a file with an optional channel list. Errors (missing file or
// channel, wrong size or channel count) name the guide and the file, before any GPU work.
Guides load_guides(const GuideSources& sources, const std::string& input_path,
                   const LoadedImage& input);

}  // namespace halo
