// OIDN's input process for its networks: the transfer functions its training used
// (training/color.py: sRGB, and the PU curve for HDR) and its autoexposure (key 0.18 over the
// log-mean luminance of about 16x16-pixel bins). kernels/denoise.cl has the device twins.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/image.hpp"
#include "kernels/contract.h"

namespace halo {

enum class Transfer { linear = TRANSFER_LINEAR, srgb = TRANSFER_SRGB, pu = TRANSFER_PU };

// PU's forward curve, unnormalised, and 1 / pu_forward(65504): the largest half float maps to 1.
float pu_forward(float y);
extern const float kPuNorm;

// y through transfer t (PU normalised), and back.
float forward(float y, Transfer t);
float inverse(float x, Transfer t);

inline float nan_to_zero(float v) {
  return std::isnan(v) ? 0.0f : v;
}

// What the autoexposure found: OIDN's scale, and whether a bin holds colour far past a
// render's (a bin of at most 16x16 samples with one at the largest float has a mean over
// 1e34; no render's light comes near 1e30).
struct ExposureFound {
  float scale = 1;
  bool extreme = false;
};

// OIDN's autoexposure over an image fed row by row: the mean luminance of each of its
// ceil(w/16) x ceil(h/16) bins, then 0.18 over their log-mean.
class Autoexposure {
 public:
  Autoexposure(int width, int height)
      : width_(width),
        height_(height),
        bins_w_(ceil_div(width, 16)),
        bins_h_(ceil_div(height, 16)),
        sums_(std::size_t(bins_w_) * bins_h_, 0.0) {
    for (int x = 0; x < width; ++x) column_bin_.push_back(bin_of(x, width, bins_w_));
  }

  // The input's next rows, consecutive from the top and each once.
  void add(const Image& rows) {
    const int planes = rows.color_channels() >= 3 ? 3 : 1;
    for (int y = rows.y0(); y < rows.y0() + rows.height(); ++y) {
      double* sums = sums_.data() + std::size_t(bin_of(y, height_, bins_h_)) * bins_w_;
      const float* c[3];
      for (int k = 0; k < 3; ++k) c[k] = rows.row(planes == 1 ? 0 : k, y - rows.y0());
      for (int x = 0; x < width_; ++x) {
        float v[3];
        for (int k = 0; k < 3; ++k) v[k] = std::clamp(nan_to_zero(c[k][x]), 0.0f, FLT_MAX);
        sums[column_bin_[x]] += 0.212671f * v[0] + 0.715160f * v[1] + 0.072169f * v[2];
      }
    }
  }

  // The bins' mean luminance, as kernels/denoise.cl's denoise_exposure_bins gives them.
  std::vector<float> means() const {
    std::vector<float> m(sums_.size());
    for (int i = 0; i < bins_h_; ++i)
      for (int j = 0; j < bins_w_; ++j) {
        const double count = double(span(i, height_, bins_h_)) * span(j, width_, bins_w_);
        m[std::size_t(i) * bins_w_ + j] = float(sums_[std::size_t(i) * bins_w_ + j] / count);
      }
    return m;
  }
  ExposureFound value() const {
    const std::vector<float> m = means();
    return {from_means(m), extreme(m)};
  }
  static bool extreme(const std::vector<float>& means) {
    return std::any_of(means.begin(), means.end(), [](float m) { return !(m < 1e30f); });
  }

  // A bin whose mean overflowed float (infinite samples, clamped to FLT_MAX as OIDN does) is
  // left out: OIDN counts it, which makes its exposure 0 and its output NaN.
  static float from_means(const std::vector<float>& means) {
    double log_sum = 0;
    int count = 0;
    for (const float m : means)
      if (m > 1e-8f && std::isfinite(m)) log_sum += std::log2(double(m)), ++count;
    return count ? float(0.18 / std::exp2(log_sum / count)) : 1.0f;
  }
  int bins_w() const { return bins_w_; }
  int bins_h() const { return bins_h_; }

 private:
  // Bin i of n over a line of `size` covers [i * size / n, (i + 1) * size / n).
  static int bin_of(int p, int size, int n) {
    int i = int(std::int64_t(p) * n / size);
    while (std::int64_t(i + 1) * size / n <= p) ++i;
    while (std::int64_t(i) * size / n > p) --i;
    return i;
  }
  static int span(int i, int size, int n) {
    return int(std::int64_t(i + 1) * size / n - std::int64_t(i) * size / n);
  }

  int width_, height_, bins_w_, bins_h_;
  std::vector<double> sums_;
  std::vector<int> column_bin_;
};

}  // namespace halo
