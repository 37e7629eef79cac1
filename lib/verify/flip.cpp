// FLIP row by row: each input row becomes YCxCz once, is filtered across by the separated
// contrast-sensitivity and feature filters, and waits in a ring of rows until the filters
// down the columns can use it; the error of a row then needs no full-size plane but its own.
// Floats, as in NVIDIA's reference implementation, so that figures agree to its precision.
#include "verify/flip.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <thread>

#include <fmt/format.h>

#include "cl/device.hpp"
#include "core/bands.hpp"
#include "core/error.hpp"
#include "core/srgb.hpp"
#include "verify/colour_maps.hpp"

namespace halo {

FlipToneMapper parse_flip_tonemapper(const std::string& name) {
  if (name == "aces") return FlipToneMapper::aces;
  if (name == "hable") return FlipToneMapper::hable;
  if (name == "reinhard") return FlipToneMapper::reinhard;
  throw Error(ErrorKind::Usage,
              "flip: unknown tone mapper '" + name + "' (aces, hable or reinhard)");
}

namespace {

constexpr float kPi = 3.14159265358979f;
// The paper's constants: colour exponent, error remapping (share of the range and the point
// it maps to), feature filter width in degrees, feature exponent.
constexpr float kQc = FLIP_QC, kPc = FLIP_PC, kPt = FLIP_PT, kW = FLIP_W, kQf = FLIP_QF;

// Contrast sensitivity of Y, Cx and Cz as sums of Gaussians a sqrt(pi / b) exp(-pi^2 x^2 / b);
// only Cz has a second term.
constexpr float kA1[3] = {1.0f, 1.0f, 34.1f}, kB1[3] = {0.0047f, 0.0053f, 0.04f};
constexpr float kA2Cz = 13.5f, kB2Cz = 0.025f, kLargestB = 0.04f;

using Rgb = std::array<float, 3>;

// D65 white, and its inverse, as the reference implementation writes them.
constexpr Rgb kWhite = {FLIP_WHITE_X, 1.0f, FLIP_WHITE_Z};
constexpr Rgb kInverseWhite = {FLIP_INV_WHITE_X, 1.0f, FLIP_INV_WHITE_Z};

Rgb linear_to_xyz(const Rgb& c) {
  return {(10135552.0f / 24577794.0f) * c[0] + (8788810.0f / 24577794.0f) * c[1] +
              (4435075.0f / 24577794.0f) * c[2],
          (2613072.0f / 12288897.0f) * c[0] + (8788810.0f / 12288897.0f) * c[1] +
              (887015.0f / 12288897.0f) * c[2],
          (1425312.0f / 73733382.0f) * c[0] + (8788810.0f / 73733382.0f) * c[1] +
              (70074185.0f / 73733382.0f) * c[2]};
}

Rgb xyz_to_linear(const Rgb& c) {
  return {3.241003275f * c[0] - 1.537398934f * c[1] - 0.498615861f * c[2],
          -0.969224334f * c[0] + 1.875930071f * c[1] + 0.041554224f * c[2],
          0.055639423f * c[0] - 0.204011202f * c[1] + 1.057148933f * c[2]};
}

Rgb xyz_to_ycxcz(Rgb c) {
  for (int i = 0; i < 3; ++i) c[i] *= kInverseWhite[i];
  return {116.0f * c[1] - 16.0f, 500.0f * (c[0] - c[1]), 200.0f * (c[1] - c[2])};
}

Rgb ycxcz_to_xyz(const Rgb& c) {
  const float y = (c[0] + 16.0f) / 116.0f;
  return {(y + c[1] / 500.0f) * kWhite[0], y * kWhite[1], (y - c[2] / 200.0f) * kWhite[2]};
}

Rgb xyz_to_lab(Rgb c) {
  constexpr float delta = 6.0f / 29.0f, delta_cube = delta * delta * delta;
  constexpr float slope = 1.0f / (3.0f * delta * delta), offset = 4.0f / 29.0f;
  for (int i = 0; i < 3; ++i) {
    c[i] *= kInverseWhite[i];
    c[i] = c[i] > delta_cube ? std::pow(c[i], 1.0f / 3.0f) : slope * c[i] + offset;
  }
  return {116.0f * c[1] - 16.0f, 500.0f * (c[0] - c[1]), 200.0f * (c[1] - c[2])};
}

// The reference's clamp: NaN goes to the lower bound.
float clamp_unit(float v) {
  v = v > 0.0f ? v : 0.0f;
  return v < 1.0f ? v : 1.0f;
}

// CIELAB with the Hunt adjustment (chroma scaled by lightness), then HyAB: |dL| + |d(a, b)|.
Rgb hunt(const Rgb& lab) {
  return {lab[0], 0.01f * lab[0] * lab[1], 0.01f * lab[0] * lab[2]};
}

float hyab(const Rgb& p, const Rgb& q) {
  return std::fabs(p[0] - q[0]) +
         std::sqrt((p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
}

// The largest colour difference: between pure green and pure blue.
float largest_difference() {
  const Rgb green = hunt(xyz_to_lab(linear_to_xyz({0.0f, 1.0f, 0.0f})));
  const Rgb blue = hunt(xyz_to_lab(linear_to_xyz({0.0f, 0.0f, 1.0f})));
  return std::pow(hyab(green, blue), kQc);
}

float gaussian(float x2, float a, float b) {
  return a * std::sqrt(kPi / b) * std::exp(-kPi * kPi * x2 / b);
}
// The square root of a Gaussian's amplitude: a 2D sum of two Gaussians is then the sum of two
// separable products.
float gaussian_root(float x2, float a, float b) {
  return std::sqrt(a * std::sqrt(kPi / b)) * std::exp(-kPi * kPi * x2 / b);
}

// One tap of the filters across and down: Y, Cx, and Cz's two terms; the feature filter's
// Gaussian, first and second derivative.
struct Taps {
  int spatial_radius = 0, feature_radius = 0;
  std::vector<float> y, cx, cz1, cz2;  // 2 spatial_radius + 1
  std::vector<float> g, dg, ddg;       // 2 feature_radius + 1
};

Taps make_taps(float ppd) {
  Taps t;
  t.spatial_radius = int(std::ceil(3.0f * std::sqrt(kLargestB / (2.0f * kPi * kPi)) * ppd));
  const int n = 2 * t.spatial_radius + 1;
  float sum_y = 0, sum_cx = 0, sum_cz1 = 0, sum_cz2 = 0;
  for (int k = 0; k < n; ++k) {
    const float x = float(k - t.spatial_radius) / ppd, x2 = x * x;
    t.y.push_back(gaussian(x2, kA1[0], kB1[0]));
    t.cx.push_back(gaussian(x2, kA1[1], kB1[1]));
    t.cz1.push_back(gaussian_root(x2, kA1[2], kB1[2]));
    t.cz2.push_back(gaussian_root(x2, kA2Cz, kB2Cz));
    sum_y += t.y.back();
    sum_cx += t.cx.back();
    sum_cz1 += t.cz1.back();
    sum_cz2 += t.cz2.back();
  }
  // Y and Cx sum to 1 in each direction; Cz's 2D sum, s1^2 + s2^2, to 1.
  const float cz_norm = 1.0f / std::sqrt(sum_cz1 * sum_cz1 + sum_cz2 * sum_cz2);
  for (int k = 0; k < n; ++k) {
    t.y[k] /= sum_y;
    t.cx[k] /= sum_cx;
    t.cz1[k] *= cz_norm;
    t.cz2[k] *= cz_norm;
  }
  const float sd = 0.5f * kW * ppd;
  t.feature_radius = int(std::ceil(3.0f * sd));
  float g_sum = 0, dg_pos = 0, dg_neg = 0, ddg_pos = 0, ddg_neg = 0;
  for (int k = -t.feature_radius; k <= t.feature_radius; ++k) {
    const float x = float(k), g = std::exp(-(x * x) / (2.0f * sd * sd));
    const float dg = -x * g, ddg = (x * x / (sd * sd) - 1.0f) * g;
    t.g.push_back(g);
    t.dg.push_back(dg);
    t.ddg.push_back(ddg);
    g_sum += g;
    (dg > 0 ? dg_pos : dg_neg) += std::fabs(dg);
    (ddg > 0 ? ddg_pos : ddg_neg) += std::fabs(ddg);
  }
  // The Gaussian sums to 1; each derivative's positive taps to 1 and its negative ones to -1.
  for (std::size_t k = 0; k < t.g.size(); ++k) {
    t.g[k] /= g_sum;
    t.dg[k] /= t.dg[k] > 0 ? dg_pos : dg_neg;
    t.ddg[k] /= t.ddg[k] > 0 ? ddg_pos : ddg_neg;
  }
  return t;
}

// A row filtered across, for both images: Y, Cx, Cz's two terms (spatial), and the feature
// filters' Gaussian, first and second derivative of the normalised Y.
enum Across { kY, kCx, kCz1, kCz2, kG, kDg, kDdg, kAcross };

// How a pixel of an input becomes linear RGB in [0, 1] for one LDR-FLIP pass.
struct Exposure {
  bool hdr = false;
  float scale = 1;  // 2^exposure
  FlipToneMapper tonemapper = FlipToneMapper::aces;
};

// The tone curves of the reference implementation: (a c^2 + b c + k) / (d c^2 + e c + f).
constexpr float kCurves[2][6] = FLIP_CURVES;

float luminance(const Rgb& c) {
  return 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2];
}

Rgb tone_map(Rgb c, FlipToneMapper tonemapper) {
  if (tonemapper == FlipToneMapper::reinhard) {
    const float factor = 1.0f / (1.0f + luminance(c));
    for (float& v : c) v *= factor;
    return c;
  }
  const float* k = kCurves[int(tonemapper)];
  for (float& v : c) v = (v * v * k[0] + v * k[1] + k[2]) / (v * v * k[3] + v * k[4] + k[5]);
  return c;
}

Rgb pixel(const Image& image, int x, int y) {
  if (image.channels() < 3) {
    const float v = image.at(x, y, 0);
    return {v, v, v};
  }
  return {image.at(x, y, 0), image.at(x, y, 1), image.at(x, y, 2)};
}

// sRGB decoding of an 8- or 16-bit image's samples from a table of its codes. to_image made
// each sample code * unit_scale(type); a sample that is one takes the table's value (the same
// srgb_to_linear of the same float), any other (a float image's) is computed.
class SrgbTable {
 public:
  explicit SrgbTable(PixelType source)
      : scale_(unit_scale(source)),
        top_(source == PixelType::u8    ? 255
             : source == PixelType::u16 ? 65535
                                        : 0) {
    for (int k = 0; k <= top_; ++k) values_.push_back(srgb_to_linear(float(k) * scale_));
  }
  float operator()(float v) const {
    if (v >= 0.0f && v <= 1.0f) {
      const int k = int(v * float(top_) + 0.5f);
      if (k <= top_ && float(k) * scale_ == v) return values_[k];
    }
    return srgb_to_linear(clamp_unit(v));
  }

 private:
  float scale_;
  int top_;
  std::vector<float> values_;
};

Rgb linear_pixel(const Image& image, int x, int y, const Exposure& e, const SrgbTable& srgb) {
  Rgb c = pixel(image, x, y);
  if (!e.hdr) {
    for (float& v : c) v = srgb(v);
    return c;
  }
  for (float& v : c) v *= e.scale;
  c = tone_map(c, e.tonemapper);
  for (float& v : c) v = clamp_unit(v);
  return c;
}

// out[x] += weight * in[x] over a row: the filters' inner loop, which the compiler vectorises.
void add_scaled(float* out, const float* in, float weight, int n) {
  for (int x = 0; x < n; ++x) out[x] += weight * in[x];
}

// One LDR-FLIP pass over rows of a pair. Each input row is filtered across once, into a ring
// of rows; each output row then filters the ring down, a whole row at a time, and computes
// its errors from those rows. Every sum takes its taps in the reference implementation's
// order, so only the compiler's fused multiply-adds tell the results apart.
class LdrPass {
 public:
  LdrPass(const Image& reference, const Image& test, const Taps& taps, const Exposure& exposure,
          const SrgbTable& reference_srgb, const SrgbTable& test_srgb)
      : reference_(reference),
        test_(test),
        taps_(taps),
        exposure_(exposure),
        srgb_{&reference_srgb, &test_srgb},
        width_(reference.width()),
        height_(reference.height()),
        reach_(std::max(taps.spatial_radius, taps.feature_radius)),
        ring_(2 * reach_ + 1),
        across_(std::size_t(ring_) * 2 * kAcross * width_),
        padded_(std::size_t(kPadded) * (width_ + 2 * reach_)),
        down_(std::size_t(2) * kDown * width_),
        cmax_(largest_difference()),
        pccmax_(kPc * cmax_) {}

  // The errors of rows [first, last), into `errors` (row by row): replaced, or with
  // `exposure_at` the larger of the two, and where this pass's is larger, `exposure` put in
  // `exposure_at`.
  void run(std::vector<float>& errors, int first, int last,
           std::vector<float>* exposure_at = nullptr, float exposure = 0) {
    int filtered = std::max(0, first - reach_);  // the next row to filter across
    for (int y = first; y < last; ++y) {
      for (; filtered < std::min(height_, y + reach_ + 1); ++filtered) filter_across(filtered);
      filter_down(y);
      float* row = errors.data() + std::size_t(y) * width_;
      float* at = exposure_at ? exposure_at->data() + std::size_t(y) * width_ : nullptr;
      for (int x = 0; x < width_; ++x) {
        const float e = error_at(x);
        if (!at) {
          row[x] = e;
        } else if (e > row[x]) {
          row[x] = e;
          at[x] = exposure;
        }
      }
    }
  }

 private:
  // The padded planes of one row: Y, Cx, Cz and Y normalised to [0, 1] for the features.
  enum Padded { kPadY, kPadCx, kPadCz, kPadNy, kPadded };
  // A row filtered down, per image: the spatial sums (Cz's two terms apart, as the reference
  // adds them at the end) and the feature filters' derivatives across and down.
  enum Down { kSy, kScx, kScz1, kScz2, kDx, kDdx, kDy, kDdy, kDown };

  float* across(int row, int image, int quantity) {
    return across_.data() + ((std::size_t(row % ring_) * 2 + image) * kAcross + quantity) * width_;
  }
  float* padded(int plane) {
    return padded_.data() + std::size_t(plane) * (width_ + 2 * reach_) + reach_;
  }
  float* down(int image, int quantity) {
    return down_.data() + (std::size_t(image) * kDown + quantity) * width_;
  }

  // Row y of both images in YCxCz, its edge samples repeated `reach_` times on either side
  // (the reference clamps to the edge), then each filter across it, tap after tap.
  void filter_across(int y) {
    for (int image = 0; image < 2; ++image) {
      const Image& source = image == 0 ? reference_ : test_;
      float* plane[kPadded];
      for (int p = 0; p < kPadded; ++p) plane[p] = padded(p);
      for (int x = 0; x < width_; ++x) {
        const Rgb c =
            xyz_to_ycxcz(linear_to_xyz(linear_pixel(source, x, y, exposure_, *srgb_[image])));
        plane[kPadY][x] = c[0];
        plane[kPadCx][x] = c[1];
        plane[kPadCz][x] = c[2];
        plane[kPadNy][x] = c[0] * (1.0f / 116.0f) + 16.0f / 116.0f;
      }
      for (float* p : plane)
        for (int k = 1; k <= reach_; ++k) {
          p[-k] = p[0];
          p[width_ - 1 + k] = p[width_ - 1];
        }
      float* out[kAcross];
      for (int q = 0; q < kAcross; ++q) {
        out[q] = across(y, image, q);
        std::fill_n(out[q], width_, 0.0f);
      }
      const int rs = taps_.spatial_radius, rf = taps_.feature_radius;
      for (int k = -rs; k <= rs; ++k) {
        add_scaled(out[kY], plane[kPadY] + k, taps_.y[k + rs], width_);
        add_scaled(out[kCx], plane[kPadCx] + k, taps_.cx[k + rs], width_);
        add_scaled(out[kCz1], plane[kPadCz] + k, taps_.cz1[k + rs], width_);
        add_scaled(out[kCz2], plane[kPadCz] + k, taps_.cz2[k + rs], width_);
      }
      for (int k = -rf; k <= rf; ++k) {
        add_scaled(out[kG], plane[kPadNy] + k, taps_.g[k + rf], width_);
        add_scaled(out[kDg], plane[kPadNy] + k, taps_.dg[k + rf], width_);
        add_scaled(out[kDdg], plane[kPadNy] + k, taps_.ddg[k + rf], width_);
      }
    }
  }

  // The ring's rows around y filtered down, for both images.
  void filter_down(int y) {
    const int rs = taps_.spatial_radius, rf = taps_.feature_radius;
    for (int image = 0; image < 2; ++image) {
      for (int q = 0; q < kDown; ++q) std::fill_n(down(image, q), width_, 0.0f);
      for (int k = -rs; k <= rs; ++k) {
        const int yy = std::clamp(y + k, 0, height_ - 1);
        add_scaled(down(image, kSy), across(yy, image, kY), taps_.y[k + rs], width_);
        add_scaled(down(image, kScx), across(yy, image, kCx), taps_.cx[k + rs], width_);
        add_scaled(down(image, kScz1), across(yy, image, kCz1), taps_.cz1[k + rs], width_);
        add_scaled(down(image, kScz2), across(yy, image, kCz2), taps_.cz2[k + rs], width_);
      }
      for (int k = -rf; k <= rf; ++k) {
        const int yy = std::clamp(y + k, 0, height_ - 1);
        const float* g = across(yy, image, kG);
        add_scaled(down(image, kDx), across(yy, image, kDg), taps_.g[k + rf], width_);
        add_scaled(down(image, kDdx), across(yy, image, kDdg), taps_.g[k + rf], width_);
        add_scaled(down(image, kDy), g, taps_.dg[k + rf], width_);
        add_scaled(down(image, kDdy), g, taps_.ddg[k + rf], width_);
      }
    }
  }

  // The colour difference of the two images' filtered colours at x, remapped to [0, 1]: the
  // differences up to kPc of the largest take [0, kPt], the rest the remaining range.
  float colour_difference(int x) {
    Rgb lab[2];
    for (int image = 0; image < 2; ++image) {
      const float scz = down(image, kScz1)[x] + down(image, kScz2)[x];
      Rgb linear = xyz_to_linear(ycxcz_to_xyz({down(image, kSy)[x], down(image, kScx)[x], scz}));
      for (float& v : linear) v = clamp_unit(v);
      lab[image] = hunt(xyz_to_lab(linear_to_xyz(linear)));
    }
    const float d = std::pow(hyab(lab[0], lab[1]), kQc);
    return d < pccmax_ ? d * kPt / pccmax_ : kPt + (d - pccmax_) / (cmax_ - pccmax_) * (1.0f - kPt);
  }

  // How much the edges and points of the luminance differ at x, in [0, 1].
  float feature_difference(int x) {
    float edge[2], point[2];
    for (int image = 0; image < 2; ++image) {
      const float dx = down(image, kDx)[x], dy = down(image, kDy)[x];
      const float ddx = down(image, kDdx)[x], ddy = down(image, kDdy)[x];
      edge[image] = std::sqrt(dx * dx + dy * dy);
      point[image] = std::sqrt(ddx * ddx + ddy * ddy);
    }
    const float most = std::max(std::fabs(edge[0] - edge[1]), std::fabs(point[0] - point[1]));
    // kQf is 1/2: the square root, exact where the reference's pow(v, 0.5f) may be 1 ulp off.
    static_assert(kQf == 0.5f);
    return std::sqrt(most / std::sqrt(2.0f));
  }

  float error_at(int x) { return std::pow(colour_difference(x), 1.0f - feature_difference(x)); }

  const Image& reference_;
  const Image& test_;
  const Taps& taps_;
  Exposure exposure_;
  const SrgbTable* srgb_[2];  // each image's, by its sample type
  int width_, height_, reach_, ring_;
  std::vector<float> across_;
  std::vector<float> padded_;
  std::vector<float> down_;
  float cmax_, pccmax_;
};

// Rows a thread takes at least: each band filters its reach (about 10 rows) again.
constexpr int kBandRows = 64;

// The reference's exposures: from where its brightest pixel reaches 85% of the tone curve's
// output to where its median pixel does. Non-finite luminances are left out; a median of 0
// (half the image black) takes the dimmest lit pixel instead, which the reference tool
// leaves undefined.
void choose_exposures(const Image& reference, FlipOptions& o) {
  float top = 0;  // the curve's input that gives 0.85
  if (o.tonemapper == FlipToneMapper::reinhard) {
    top = 0.85f / (1.0f - 0.85f);
  } else {
    const float* k = kCurves[int(o.tonemapper)];
    const float a = k[0] - 0.85f * k[3], b = k[1] - 0.85f * k[4], c = k[2] - 0.85f * k[5];
    if (a == 0.0f) {
      top = -c / b;
    } else {
      const float d1 = -0.5f * (b / a), d2 = std::sqrt(d1 * d1 - c / a);
      top = d1 + d2;
    }
  }
  std::vector<float> lums;
  float dimmest = std::numeric_limits<float>::max(), brightest = 0;
  for (int y = 0; y < reference.height(); ++y)
    for (int x = 0; x < reference.width(); ++x) {
      const float l = luminance(pixel(reference, x, y));
      if (!std::isfinite(l)) continue;
      lums.push_back(l);
      if (l > 0) dimmest = std::min(dimmest, l);
      brightest = std::max(brightest, l);
    }
  // The middle luminance, the upper one of an even count: NVIDIA's tool (v1.4 on) takes the
  // element nth_element puts at size/2.
  float median = 0;
  if (!lums.empty()) {
    const auto at = lums.begin() + std::ptrdiff_t(lums.size() / 2);
    std::nth_element(lums.begin(), at, lums.end());
    median = *at;
  }
  if (median <= 0) median = dimmest;
  if (brightest <= 0 || median == std::numeric_limits<float>::max()) brightest = median = 1;
  if (!o.start) o.start = std::log2(top / brightest);
  if (!o.stop) o.stop = std::log2(top / median);
}

// FLIP's weighted percentiles: the error at which the running sum of the sorted errors first
// exceeds a part of their total. Errors are >= 0, so their bit patterns sort as they do: they
// go into buckets by their upper 16 bits with each bucket's sum, and only the bucket where a
// percentile falls is sorted, not every error.
class WeightedPercentiles {
 public:
  explicit WeightedPercentiles(const std::vector<float>& errors)
      : errors_(errors), sums_(kBuckets, 0.0) {
    for (const float e : errors) {
      sums_[bucket(e)] += e;
      total_ += e;
    }
  }
  double total() const { return total_; }

  double operator()(double part) const {
    const double target = part * total_;
    double running = 0;
    for (std::uint32_t b = 0; b < kBuckets; ++b) {
      if (running + sums_[b] <= target) {
        running += sums_[b];
        continue;
      }
      std::vector<float> inside;
      for (const float e : errors_)
        if (bucket(e) == b) inside.push_back(e);
      std::sort(inside.begin(), inside.end());
      for (const float e : inside) {
        running += e;
        if (running > target) return e;
      }
      return inside.back();
    }
    return *std::max_element(errors_.begin(), errors_.end());
  }

 private:
  static constexpr std::uint32_t kBuckets = 1u << 16;
  static std::uint32_t bucket(float e) {
    std::uint32_t bits;
    std::memcpy(&bits, &e, sizeof bits);
    return bits >> 16;
  }
  const std::vector<float>& errors_;
  std::vector<double> sums_;
  double total_ = 0;
};

void pool(Flip& f) {
  const auto [low, high] = std::minmax_element(f.errors.begin(), f.errors.end());
  f.min = *low;
  f.max = *high;
  const WeightedPercentiles percentile(f.errors);
  f.mean = percentile.total() / double(f.errors.size());
  f.q1 = percentile(0.25);
  f.weighted_median = percentile(0.5);
  f.q3 = percentile(0.75);
}

}  // namespace

std::size_t flip_bytes(int width, int height, const FlipOptions& options) {
  const std::size_t pixels = std::size_t(width) * height;
  const Taps taps = make_taps(float(options.ppd));
  const std::size_t ring = 2 * std::max(taps.spatial_radius, taps.feature_radius) + 1;
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  // errors and (HDR) exposures: 4 bytes each; the errors of the bucket a percentile falls in
  // (at most all of them) 4; the heat map 3 + 3; the percentiles' bucket sums. Each core: its
  // ring of rows filtered across, its padded row and its row filtered down.
  const std::size_t reach = (ring - 1) / 2;
  return pixels * ((options.hdr ? 12 : 8) + 6) + (std::size_t(1) << 16) * sizeof(double) +
         cores * (ring * 2 * kAcross * width + 4 * (width + 2 * reach) + 2 * 8 * width) *
             sizeof(float);
}

namespace {

// What flip() and flip_device() check and settle before computing: the images' shapes, the
// options, and (HDR) the exposures.
Flip prepare(const Image& reference, const Image& test, FlipOptions& o) {
  if (reference.width() != test.width() || reference.height() != test.height() ||
      reference.channels() != test.channels())
    throw Error(ErrorKind::NotComparable,
                fmt::format("flip: the images are {}x{}x{} and {}x{}x{}", reference.width(),
                            reference.height(), reference.channels(), test.width(), test.height(),
                            test.channels()));
  const int channels = reference.channels();
  if (channels != 1 && channels != 3 && channels != 4)
    throw Error(ErrorKind::NotComparable,
                fmt::format("flip: compares grey, RGB or RGBA images, these have {} channels "
                            "(--ch R,G,B picks the colour)",
                            channels));
  if (!(o.ppd >= kLeastFlipPpd) || !std::isfinite(o.ppd))
    throw Error(ErrorKind::Usage,
                fmt::format("flip: pixels per degree must be a finite number >= {:g} (its feature "
                            "filters have no neighbour weight below that), not {:g}",
                            kLeastFlipPpd, o.ppd));
  Flip f;
  f.hdr = o.hdr;
  f.width = reference.width();
  f.height = reference.height();
  f.errors.assign(std::size_t(f.width) * f.height, 0.0f);
  if (!o.hdr) return f;
  choose_exposures(reference, o);
  if (*o.start > *o.stop)
    throw Error(ErrorKind::Usage,
                fmt::format("flip: the first exposure {} is above the last {}", *o.start, *o.stop));
  f.start = *o.start;
  f.stop = *o.stop;
  f.exposure_at.assign(f.errors.size(), 0.0f);
  f.exposures =
      o.exposures > 0 ? o.exposures : std::max(2, int(std::ceil(float(f.stop - f.start))));
  return f;
}

// The scale of exposure i (2^stops) and where it lies from the first (0) to the last (1).
float exposure_scale(const Flip& f, int i) {
  const float step = f.exposures > 1 ? float(f.stop - f.start) / float(f.exposures - 1) : 0.0f;
  return std::pow(2.0f, float(f.start) + float(i) * step);
}
float exposure_place(const Flip& f, int i) {
  return float(i) / float(f.exposures - 1);
}

}  // namespace

Flip flip(const Image& reference, const Image& test, const FlipOptions& options) {
  FlipOptions o = options;
  Flip f = prepare(reference, test, o);
  const Taps taps = make_taps(float(o.ppd));
  const SrgbTable reference_srgb(reference.source()), test_srgb(test.source());
  if (!o.hdr) {
    in_bands(f.height, kBandRows, [&](int first, int last) {
      LdrPass(reference, test, taps, {}, reference_srgb, test_srgb).run(f.errors, first, last);
    });
  } else {
    for (int i = 0; i < f.exposures; ++i) {
      const Exposure e{.hdr = true, .scale = exposure_scale(f, i), .tonemapper = o.tonemapper};
      in_bands(f.height, kBandRows, [&](int first, int last) {
        LdrPass(reference, test, taps, e, reference_srgb, test_srgb)
            .run(f.errors, first, last, &f.exposure_at, exposure_place(f, i));
      });
    }
  }
  pool(f);
  return f;
}

Flip flip_device(Device& device, const Image& reference, const Image& test,
                 const FlipOptions& options, std::size_t strip_bytes) {
  FlipOptions o = options;
  Flip f = prepare(reference, test, o);
  const Taps taps = make_taps(float(o.ppd));
  std::vector<float> tap_values;
  for (const auto* t : {&taps.y, &taps.cx, &taps.cz1, &taps.cz2, &taps.g, &taps.dg, &taps.ddg})
    tap_values.insert(tap_values.end(), t->begin(), t->end());
  const cl::Buffer tap_buffer = device.constants(tap_values, "flip taps");
  const int width = f.width, height = f.height, pitch = reference.pitch();
  const int colours = reference.channels() < 3 ? 1 : 3;
  const int reach = std::max(taps.spatial_radius, taps.feature_radius);
  // Strips whose largest buffer (7 quantities of both images) stays within the budget.
  const std::size_t budget = std::min<std::size_t>(strip_bytes, device.info().max_allocation / 4);
  const int strip =
      std::clamp(int(budget / (14 * std::size_t(width) * sizeof(float))) - 2 * reach, 1, height);
  const int most = std::min(height, strip + 2 * reach);
  const std::size_t row_bytes = std::size_t(pitch) * sizeof(float);
  cl::Buffer in[2] = {device.buffer(row_bytes * most * colours, "flip reference rows"),
                      device.buffer(row_bytes * most * colours, "flip test rows")};
  cl::Buffer opponent = device.buffer(6 * std::size_t(width) * most * sizeof(float), "flip YCxCz");
  cl::Buffer across = device.buffer(14 * std::size_t(width) * most * sizeof(float), "flip rows");
  const std::size_t out_bytes = std::size_t(width) * strip * sizeof(float);
  cl::Buffer errors = device.buffer(out_bytes, "flip errors");
  cl::Buffer exposure_at = device.buffer(out_bytes, "flip exposures");
  // The rows go through page-locked memory: they are packed there anyway (channel after
  // channel), and DMA reads it without the driver's copy of pageable memory.
  const auto pinned = device.pinned(row_bytes * most * colours);
  float* staging = static_cast<float*>(pinned->data());
  auto to_ycxcz = device.kernel("flip.cl", "flip_opponent", {});
  auto filter_across = device.kernel("flip.cl", "flip_across", {});
  auto filter_down = device.kernel("flip.cl", "flip_down", {});
  const float cmax = largest_difference(), pccmax = kPc * cmax;
  // One work-item a pixel (launch() rounds the sizes up to the work-group's).
  const auto grid = [](int w, int h) { return cl::NDRange(std::size_t(w), std::size_t(h)); };
  for (int first = 0; first < height; first += strip) {
    const int last = std::min(height, first + strip), count = last - first;
    const int row0 = std::max(0, first - reach), rows = std::min(height, last + reach) - row0;
    // Each image's rows, channel after channel (rows x pitch floats each), in one write.
    const Image* images[2] = {&reference, &test};
    for (int image = 0; image < 2; ++image) {
      for (int c = 0; c < colours; ++c)
        std::memcpy(staging + std::size_t(c) * rows * pitch, images[image]->row(c, row0),
                    row_bytes * rows);
      device.write(in[image], staging, row_bytes * rows * colours, "flip rows in");
    }
    if (f.hdr) {
      device.fill_zero(errors, out_bytes, "flip errors");
      device.fill_zero(exposure_at, out_bytes, "flip exposures");
    }
    for (int i = 0; i < (f.hdr ? f.exposures : 1); ++i) {
      const float scale = f.hdr ? exposure_scale(f, i) : 1.0f;
      set_args(to_ycxcz, in[0], in[1], width, pitch, rows, colours, int(f.hdr), scale,
               int(o.tonemapper), opponent);
      device.launch(to_ycxcz, "flip_opponent", grid(width, rows), cl::NDRange(64, 4));
      set_args(filter_across, opponent, width, rows, tap_buffer, taps.spatial_radius,
               taps.feature_radius, across);
      device.launch(filter_across, "flip_across", grid(width, rows), cl::NDRange(64, 4));
      set_args(filter_down, across, width, rows, row0, height, first, count, tap_buffer,
               taps.spatial_radius, taps.feature_radius, cmax, pccmax, int(f.hdr),
               f.hdr ? exposure_place(f, i) : 0.0f, errors, exposure_at);
      device.launch(filter_down, "flip_down", grid(width, count), cl::NDRange(64, 4));
    }
    device.read(errors, f.errors.data() + std::size_t(first) * width,
                std::size_t(count) * width * sizeof(float), "flip errors out");
    if (f.hdr)
      device.read(exposure_at, f.exposure_at.data() + std::size_t(first) * width,
                  std::size_t(count) * width * sizeof(float), "flip exposures out");
  }
  pool(f);
  return f;
}

namespace {

std::vector<unsigned char> colour_mapped(const std::vector<float>& values,
                                         const float (&map)[256][3]) {
  std::vector<unsigned char> codes;
  codes.reserve(values.size() * 3);
  for (const float e : values) {
    const auto& c = map[int(e * 255.0f + 0.5f) % 256];
    for (const float v : c) codes.push_back((unsigned char)(std::lround(v * 255.0f)));
  }
  return codes;
}

}  // namespace

std::vector<unsigned char> flip_heat_map(const Flip& flip) {
  return colour_mapped(flip.errors, kMagma);
}

std::vector<unsigned char> flip_exposure_map(const Flip& flip) {
  return colour_mapped(flip.exposure_at, kViridis);
}

}  // namespace halo
