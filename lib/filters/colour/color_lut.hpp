// Colour transforms that a colour library computes on the CPU (OpenColorIO's processors,
// LittleCMS's transforms), run on a device from a table baked from the library's own results:
// a 3x4 matrix when the transform is one, three curves when no channel feeds another, curves
// then a matrix then curves when the library's steps split so (a gamma-encoded space to
// another's primaries, matrix-shaper ICC profiles), else a cube (tetrahedral interpolation,
// OpenColorIO's own GPU fallback). The reference is the
// library itself, so --verify checks the device against it; the table's error is measured on
// probes when it is baked and is what --verify allows beyond the tolerance given.
#pragma once

#include <array>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "filters/filter.hpp"
#include "kernels/contract.h"

namespace halo {

// Applies a colour transform in place to `pixels` packed RGB triples.
using ColorTransform = std::function<void(float* rgb, std::size_t pixels)>;

// How input values spread over a table's entries. Linear: [lo, hi] evenly (display-referred
// values, lo 0 and hi 1). Log: 0 to 2^lo evenly over the first `toe` of the table, then 2^lo to
// 2^hi by equal stops (scene-linear values, where a stop of shadows matters as one of
// highlights). Values outside clamp to the ends; NaN reads as 0. With `neg` > 0 the first
// `neg` of the table holds negative values, -2^neg_hi..0 spaced as their magnitudes would be
// (curves: half the table, as transforms mirror, clamp or extend negatives each their own way;
// cubes: a few cells for a resampled render's ringing), and the rest the others.
struct Shaper {
  enum class Kind { linear = SHAPER_LINEAR, log = SHAPER_LOG };
  Kind kind = Kind::linear;
  float lo = 0, hi = 1;
  float toe = 1.0f / 64;
  float neg = 0.0f, neg_hi = 0.0f;

  float operator()(float x) const;  // the table coordinate, 0..1
  float inverse(float u) const;     // the value at table coordinate u
  std::string describe() const;
};

struct ColorLut {
  enum class Kind { matrix = 0, curves = 1, split = 2, cube = 3 };
  Kind kind = Kind::matrix;
  Shaper shaper;       // curves, cube: the input's; split: the input curves'
  Shaper post_shaper;  // split: the output curves'
  int size = 0;        // curves, split: entries a curve; cube: entries along each axis
  // matrix: 12 floats, rows of (r, g, b, offset); curves: size entries of (r, g, b, 0); split:
  // the input curves, the output curves (size entries each) and the matrix's 3 rows; cube:
  // size^3 entries of (r, g, b, 0), red varying fastest.
  std::vector<float> table;
  // The largest difference from the transform on the probes, relative to max(1, |value|) as
  // --verify measures it.
  double error = 0;

  void apply(float* rgb, std::size_t pixels) const;  // on the host, as the device does
  std::string describe() const;
};

// Scene values for curves: 2^-12 to 2^14 by stops, and their negatives. The halves have 2048
// cells each of the 4097-entry curves, the toe's end (1/64) on one.
inline constexpr Shaper kSignedLogShaper{
    .kind = Shaper::Kind::log, .lo = -12, .hi = 14, .toe = 1.0f / 64, .neg = 0.5f, .neg_hi = 14};

// A transform as the library's steps split it: per-channel steps, a matrix, per-channel steps.
struct SplitTransform {
  ColorTransform before, after;  // each channel by itself
  std::array<double, 12> matrix;
  Shaper before_shaper = kSignedLogShaper;  // the inputs
  Shaper after_shaper = kSignedLogShaper;   // the matrix's results, linear light
};

// A colour library's own GPU code for a transform, as OpenCL C defining
// `float4 ocio_transform(float4, __global const float* halo_textures)` (kernels/color_program.cl
// runs it), and the data of the LUT textures it samples, one after the other.
struct DeviceProgram {
  std::string code;  // empty: none (the device bakes a table)
  std::vector<float> textures;

  bool empty() const { return code.empty(); }
};

// What a stage knows of its transform, for baking it.
struct ColorBake {
  ColorTransform exact;
  Shaper shaper;                            // the cube's
  Shaper curves_shaper = kSignedLogShaper;  // the curves'
  int cube_size = 65;
  // A larger cube and its shaper, baked when cube_size leaves more than half an 8-bit code.
  std::optional<std::pair<int, Shaper>> finer;
  std::optional<std::array<double, 12>> matrix;  // the transform is this matrix
  std::optional<SplitTransform> split;           // the transform splits so
};

// Bakes `b.exact`: the matrix when it is one; else the nearer of curves and the split when it
// is within 5e-4 (a tenth of an 8-bit step; profiles store their matrices in 16-bit fixed
// point, which leaves a gamma change that much crosstalk); else the nearest of those and a cube
// of cube_size entries a side (or the finer cube, where that one is more than half a code off).
ColorLut bake_color_lut(const ColorBake& b);

// The table for `key`: read from cache_dir's colour-tables folder when a process baked it
// before (the file holds the key, checked in full), else baked and kept there; baked alone when
// there is no cache folder or key. A file that cannot be read or written is passed over.
ColorLut cached_color_lut(const std::string& key, const ColorBake& b,
                          const std::optional<std::filesystem::path>& cache_dir);

// A stage applying a colour transform to the three colour channels (alpha unchanged): the
// library's transform as the reference; on a device the library's own GPU program when it has
// one, else its baked table. The table is baked on first use (a device's, or the reference's
// bounds). A pixel with a NaN colour sample comes out NaN in all three colours on both.
class ColorTransformStage : public Stage, public StatesTolerance {
 public:
  // What a subclass tells the stage: the transform, how to bake it, and words for -v.
  struct Plan {
    ColorBake bake;
    std::string what;  // "OpenColorIO: ACEScg -> Linear Rec.709 (config ...)"
    // Names the transform and how it is baked, for stages made again with the same one (each
    // file of a batch whose pipeline is bound to it): a table is baked once a process. Empty:
    // not shared.
    std::string key;
    // The library's own GPU code for the transform: devices compute it as the library does on
    // GPUs, without a table. Empty: the baked table.
    DeviceProgram program;
  };

  ColorTransformStage(std::string spec, Plan plan);

  // Cost: PoCL 17-19 ns a sample for curves and cubes (halo_bench, 640x360, 2-core machine);
  // OpenColorIO's ACES view: its CPU processor 160 ns a sample, its GPU program on PoCL 250
  // (`halo run --timings`, a 2560x1440 render, 2026-11-27).
  StageTraits traits() const override;
  std::vector<std::string> details(const StageRun&) const override;
  double verify_tolerance(const Device&, double given) const override;
  // What the library is given, on the reference as on a device: samples clamped to +-2^32
  // (COLOUR_BOUND: every transform still computes in float there) when the device runs the
  // library's own program or a matrix, else to the range its table covers.
  std::array<float, 2> bounds() const;
  Image reference_rows(const Image& in, Span out, StageRun& run) const override;
  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun& run) const override;

  const ColorLut& lut() const;

 private:
  void check_channels(int colours) const;

  Plan plan_;
  mutable std::once_flag baked_;
  mutable std::shared_ptr<const ColorLut> lut_;
};

// The colour libraries' versions, for --version: "OpenColorIO 2.1.2", "LittleCMS 2.14".
std::string ocio_version();
std::string lcms_version();

}  // namespace halo
