// FLIP, the perceptual difference of Andersson et al., "FLIP: A Difference Evaluator for
// Alternating Images" (HPG 2020), and HDR-FLIP (Eurographics 2021): an error in [0, 1] per
// pixel for a reference and a test image seen at `ppd` pixels per degree, from colour (the
// images filtered by contrast sensitivity functions in YCxCz, then HyAB distance in CIELAB
// with the Hunt adjustment) raised to a power that features (edges and points of the
// luminance) lower. HDR-FLIP is the largest LDR-FLIP over exposures from the reference's
// brightest pixel to its median, each exposure tone-mapped. Constants, filters, edge clamping
// and exposure choice are those of NVIDIA's reference implementation (BSD-3-Clause), so that
// its figures are what halo reports.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/image.hpp"
#include "kernels/contract.h"

namespace halo {

enum class FlipToneMapper {
  aces = FLIP_TONEMAP_ACES,
  hable = FLIP_TONEMAP_HABLE,
  reinhard = FLIP_TONEMAP_REINHARD
};
FlipToneMapper parse_flip_tonemapper(const std::string& name);  // Usage error else

// The fewest pixels per degree FLIP can weigh: below about 1.8 its feature filters' Gaussian
// (sd 0.041 ppd) gives a pixel's neighbours no weight in float's range, and their derivatives
// divide 0 by 0.
inline constexpr double kLeastFlipPpd = 2;

struct FlipOptions {
  // 0.7 m from a 0.7 m wide monitor of 3840 pixels: FLIP's default viewing condition.
  double ppd = 67.02064327658226;
  bool hdr = false;                   // HDR-FLIP (float images) rather than LDR-FLIP
  std::optional<double> start, stop;  // exposures in stops (empty: from the reference)
  int exposures = 0;                  // 0: max(2, ceil(stop - start))
  FlipToneMapper tonemapper = FlipToneMapper::aces;
};

struct Flip {
  double mean = 0;
  double weighted_median = 0, q1 = 0, q3 = 0;  // FLIP's percentiles weighted by the errors
  double min = 0, max = 0;
  bool hdr = false;
  double start = 0, stop = 0;  // HDR: the exposures used
  int exposures = 0;
  int width = 0, height = 0;
  std::vector<float> errors;  // per pixel, row by row
  // HDR: per pixel, the exposure whose error was the largest, from 0 (the first) to 1 (the
  // last); 0 where every exposure gave 0.
  std::vector<float> exposure_at;
};

// FLIP of `test` against `reference`: 1 channel (grey, as RGB), 3 (RGB) or 4 (RGBA; alpha
// left out). LDR inputs are sRGB-encoded values in [0, 1] (clamped); HDR inputs are linear
// Rec.709 radiance, of which NaN and infinities become 0 and 1 after tone mapping, as in the
// reference tool. Error(NotComparable) for other channel counts or sizes that differ.
Flip flip(const Image& reference, const Image& test, const FlipOptions& options);
// The host memory flip() takes for a width x height pair beside the images (its maps, their
// sorted copy, each core's rows) and the heat map written from it.
std::size_t flip_bytes(int width, int height, const FlipOptions& options);

class Device;

// flip() on an OpenCL device, the image streamed through it in strips of rows whose largest
// buffer stays within `strip_bytes` (and a quarter of the device's largest allocation): the
// same figures within float rounding of the device's pow and exp (--verify says how far).
Flip flip_device(Device& device, const Image& reference, const Image& test,
                 const FlipOptions& options, std::size_t strip_bytes = std::size_t(256) << 20);

// FLIP's heat map: each error through the magma colour map, as 8-bit sRGB codes (3 a pixel).
std::vector<unsigned char> flip_heat_map(const Flip& flip);
// HDR-FLIP's exposure map: each pixel's exposure_at through the viridis colour map, likewise.
std::vector<unsigned char> flip_exposure_map(const Flip& flip);

}  // namespace halo
