// Comparison of two images the way verification and CI need it: max/mean/RMS error, PSNR and
// the worst sample with both values.
#pragma once

#include <cstddef>
#include <limits>
#include <string>

#include "core/image.hpp"

namespace halo {

struct Comparison {
  std::size_t samples = 0;
  std::size_t failures = 0;   // samples whose error exceeds the tolerance
  std::size_t nonfinite = 0;  // NaN or infinite against another value: an infinite error
  double max_error = 0;       // absolute
  double mean_error = 0;
  double rms_error = 0;
  double psnr = 0;                            // dB against a peak of 1.0; infinite when identical
  int worst_x = 0, worst_y = 0, worst_c = 0;  // worst_y in image rows
  float worst_actual = 0, worst_expected = 0;
  double error_sum = 0, error_squares = 0;  // what mean and RMS come from, for add()

  bool ok() const { return failures == 0; }
  // "max 1.2e-07 mean 3e-09 rms 1e-08 psnr 158.0 dB, worst (12,7) c0: 0.5 vs 0.49999"
  std::string summary() const;
};

// A sample fails when |actual - expected| > tolerance * max(1, |expected|): absolute for data in
// [0,1], relative for HDR values. NaN matches only NaN. Sizes must agree (NotComparable error).
Comparison compare(const Image& actual, const Image& expected, double tolerance);
// The image rows `rows` of two strips (or whole images) that hold them.
Comparison compare(const Image& actual, const Image& expected, double tolerance, Span rows);
// The comparison of both parts' samples together (strips of one image).
void add(Comparison& total, const Comparison& part);

// `halo compare`'s pass/warn/fail rule, with idiff's thresholds. A sample is over a threshold
// when its absolute error exceeds `fail` and its relative error |a-b| / ((|a|+|b|)/2) exceeds
// `fail_relative` (0: the relative test is off); a pixel fails when any of its samples does.
// The images fail when more pixels fail than both `allow_failures` and `fail_percent` of all
// pixels allow, or when any error exceeds `hard_fail`. Warnings follow the same rule with the
// warn_* values; a warning does not fail.
struct Thresholds {
  double fail = 1e-6;
  double fail_relative = 0;
  double fail_percent = 0;
  double hard_fail = std::numeric_limits<double>::infinity();
  std::size_t allow_failures = 0;
  double warn = 1e-6;
  double warn_relative = 0;
  double warn_percent = 0;
  double hard_warn = std::numeric_limits<double>::infinity();
};

enum class Verdict { pass, warn, fail };
const char* to_string(Verdict verdict);

struct ImageDiff {
  Comparison metrics;  // max/mean/RMS/PSNR and the worst sample
  std::size_t pixels = 0;
  std::size_t failed_pixels = 0;
  std::size_t warned_pixels = 0;
  Verdict verdict = Verdict::pass;
};

// Error(NotComparable) when sizes or channel counts differ.
ImageDiff diff_images(const Image& a, const Image& b, const Thresholds& thresholds);

// idiff's perceptual test (-p) as OpenImageIO 2.4 computes it: the pixels whose chroma differs
// by more than 10 (0.01 (da^2 + db^2) > 1 in CIELAB, the first three channels taken as linear
// Adobe RGB, missing ones as 0). Its compare_Yee also has a luminance test that never fires
// (the luminance pyramid is read through a channel it does not have) and a masking factor that
// stays 1; this reproduces its count exactly, which idiff prints and does not fail on.
std::size_t idiff_perceptual_failures(const Image& a, const Image& b);

// |a - b| * scale per sample, for --diff-out; (a - b) * scale when `signed_difference`, as
// idiff's -o writes it.
Image difference_image(const Image& a, const Image& b, float scale, bool signed_difference = false);

}  // namespace halo
