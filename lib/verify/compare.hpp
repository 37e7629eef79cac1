// Comparison of two images the way verification and CI need it: max/mean/RMS error, PSNR and
// the worst sample with both values.
#pragma once

#include <cstddef>
#include <string>

#include "core/image.hpp"

namespace halo {

struct Comparison {
  std::size_t samples = 0;
  std::size_t failures = 0;  // samples whose error exceeds the tolerance
  double max_error = 0;      // absolute
  double mean_error = 0;
  double rms_error = 0;
  double psnr = 0;  // dB against a peak of 1.0; infinite when identical
  int worst_x = 0, worst_y = 0, worst_c = 0;
  float worst_actual = 0, worst_expected = 0;

  bool ok() const { return failures == 0; }
  // "max 1.2e-07 mean 3e-09 rms 1e-08 psnr 158.0 dB, worst (12,7) c0: 0.5 vs 0.49999"
  std::string summary() const;
};

// A sample fails when |actual - expected| > tolerance * max(1, |expected|): absolute for data in
// [0,1], relative for HDR values. NaN matches only NaN. Sizes must agree (NotComparable error).
Comparison compare(const Image& actual, const Image& expected, double tolerance);

}  // namespace halo
