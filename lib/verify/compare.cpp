// Image comparison metrics.
#include "verify/compare.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"

namespace halo {

std::string Comparison::summary() const {
  return fmt::format(
      "max {:.3g} mean {:.3g} rms {:.3g} psnr {:.1f} dB, worst ({},{}) c{}: {} vs {}", max_error,
      mean_error, rms_error, psnr, worst_x, worst_y, worst_c, worst_actual, worst_expected);
}

Comparison compare(const Image& actual, const Image& expected, double tolerance) {
  if (actual.width() != expected.width() || actual.height() != expected.height() ||
      actual.channels() != expected.channels())
    throw Error(ErrorKind::NotComparable,
                fmt::format("images are not comparable: {}x{}x{} vs {}x{}x{}", actual.width(),
                            actual.height(), actual.channels(), expected.width(), expected.height(),
                            expected.channels()));
  Comparison r;
  double sum = 0, sum_sq = 0;
  double worst = -1;
  for (int c = 0; c < actual.channels(); ++c)
    for (int y = 0; y < actual.height(); ++y) {
      const float* a = actual.row(c, y);
      const float* e = expected.row(c, y);
      for (int x = 0; x < actual.width(); ++x) {
        const bool both_nan = std::isnan(a[x]) && std::isnan(e[x]);
        const bool same_inf = std::isinf(a[x]) && a[x] == e[x];
        const double err = both_nan || same_inf ? 0.0 : std::fabs(double(a[x]) - double(e[x]));
        const double e_abs = std::isfinite(e[x]) ? std::fabs(double(e[x])) : 0.0;
        // NaN against a number counts as an infinite error.
        const double error = std::isnan(err) ? std::numeric_limits<double>::infinity() : err;
        if (error > tolerance * std::fmax(1.0, e_abs)) ++r.failures;
        sum += error;
        sum_sq += error * error;
        if (error > worst) {
          worst = error;
          r.worst_x = x, r.worst_y = y, r.worst_c = c;
          r.worst_actual = a[x], r.worst_expected = e[x];
        }
      }
    }
  r.samples = std::size_t(actual.width()) * actual.height() * actual.channels();
  r.max_error = worst;
  r.mean_error = sum / double(r.samples);
  r.rms_error = std::sqrt(sum_sq / double(r.samples));
  r.psnr =
      r.rms_error == 0 ? std::numeric_limits<double>::infinity() : -20.0 * std::log10(r.rms_error);
  return r;
}

}  // namespace halo
