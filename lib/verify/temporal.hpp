// How a frame sequence changes from frame to frame, as temporal denoising is measured: the
// measures `halo compare --metrics temporal` reports, so CI can hold a denoiser to them.
// Colour is compared in display space: float samples through clip(x, 0, 1)^(1/2.2) (renders
// are scene-linear and unbounded), 8/16-bit ones (display-encoded already) as they are.
#pragma once

#include <cstddef>

#include "core/image.hpp"

namespace halo {

// A frame's colour in display space (its first three channels, or its first for grey), and
// what reprojects it: the motion towards the previous frame in pixels (Blender's Vector.X and
// Y: the previous frame's position of pixel (x, y) is (x + X, y - Y), its y pointing up), and
// the depth and normals that say whether a surface is the one seen before (each optional).
struct TemporalFrame {
  Image colour;  // display space, 1 or 3 channels
  Image motion;  // 2 channels, or empty
  Image depth;   // 1 channel, or empty
  Image normal;  // 3 channels, or empty
};

// `image`'s colour channels in display space: `linear` for float samples.
Image display_colour(const Image& image, bool linear);

// The temporal error: mean |(a_t - a_(t-1)) - (b_t - b_(t-1))| over pixels and channels, the
// change a sequence makes between two frames beyond the reference's own. Frames of one size
// and channel count (Error(NotComparable) else).
double temporal_error(const Image& a_prev, const Image& a, const Image& b_prev, const Image& b);

// The warping error (Lai et al., ECCV 2018): mean |c_t - warp(c_(t-1))| over the pixels seen
// in both frames. Each pixel of `current` is followed back through its motion to the previous
// frame and the previous colour sampled there (bilinear); it is seen in both when that
// position lies inside the frame and, where given, the depth there is within 5% of its own
// and the normals within 25 degrees (a surface uncovered by the motion has another depth or
// facing). Without motion vectors, nothing moved. `pixels`: how many were seen in both.
struct Flicker {
  double mean = 0;
  std::size_t pixels = 0;
};
Flicker flicker(const TemporalFrame& previous, const TemporalFrame& current);

}  // namespace halo
