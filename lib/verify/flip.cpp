// FLIP row by row: each input row becomes YCxCz once, is filtered across by the separated
// contrast-sensitivity and feature filters, and waits in a ring of rows until the filters
// down the columns can use it; the error of a row then needs no full-size plane but its own.
// Floats, as in NVIDIA's reference implementation, so that figures agree to its precision.
#include "verify/flip.hpp"

#include <algorithm>
#include <array>
#include <cmath>
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

Rgb linear_pixel(const Image& image, int x, int y, const Exposure& e) {
  Rgb c = pixel(image, x, y);
  if (!e.hdr) {
    for (float& v : c) v = srgb_to_linear(clamp_unit(v));
    return c;
  }
  for (float& v : c) v *= e.scale;
  c = tone_map(c, e.tonemapper);
  for (float& v : c) v = clamp_unit(v);
  return c;
}

class LdrPass {
 public:
  LdrPass(const Image& reference, const Image& test, const Taps& taps, const Exposure& exposure)
      : reference_(reference),
        test_(test),
        taps_(taps),
        exposure_(exposure),
        width_(reference.width()),
        height_(reference.height()),
        ring_(2 * std::max(taps.spatial_radius, taps.feature_radius) + 1),
        across_(std::size_t(ring_) * 2 * kAcross * width_),
        ycxcz_(std::size_t(2) * 3 * width_),
        cmax_(largest_difference()),
        pccmax_(kPc * cmax_) {}

  // The errors of rows [first, last), into `errors` (row by row): replaced, or with
  // `exposure_at` the larger of the two, and where this pass's is larger, `exposure` put in
  // `exposure_at`.
  void run(std::vector<float>& errors, int first, int last,
           std::vector<float>* exposure_at = nullptr, float exposure = 0) {
    const int reach = std::max(taps_.spatial_radius, taps_.feature_radius);
    int filtered = std::max(0, first - reach);  // the next row to filter across
    for (int y = first; y < last; ++y) {
      for (; filtered < std::min(height_, y + reach + 1); ++filtered) filter_across(filtered);
      for (int x = 0; x < width_; ++x) {
        const float e = error_at(x, y);
        const std::size_t at = std::size_t(y) * width_ + x;
        if (!exposure_at) {
          errors[at] = e;
        } else if (e > errors[at]) {
          errors[at] = e;
          (*exposure_at)[at] = exposure;
        }
      }
    }
  }

 private:
  float* across(int row, int image, int quantity) {
    return across_.data() + ((std::size_t(row % ring_) * 2 + image) * kAcross + quantity) * width_;
  }

  void filter_across(int y) {
    for (int image = 0; image < 2; ++image) {
      const Image& source = image == 0 ? reference_ : test_;
      float* yc = ycxcz_.data() + std::size_t(image) * 3 * width_;
      for (int x = 0; x < width_; ++x) {
        const Rgb c = xyz_to_ycxcz(linear_to_xyz(linear_pixel(source, x, y, exposure_)));
        for (int i = 0; i < 3; ++i) yc[i * width_ + x] = c[i];
      }
      const float* lum = yc;
      const float* cx = yc + width_;
      const float* cz = yc + 2 * width_;
      float* out[kAcross];
      for (int q = 0; q < kAcross; ++q) out[q] = across(y, image, q);
      const int rs = taps_.spatial_radius, rf = taps_.feature_radius;
      for (int x = 0; x < width_; ++x) {
        float sy = 0, scx = 0, scz1 = 0, scz2 = 0;
        for (int k = -rs; k <= rs; ++k) {
          const int xx = std::clamp(x + k, 0, width_ - 1);
          sy += taps_.y[k + rs] * lum[xx];
          scx += taps_.cx[k + rs] * cx[xx];
          scz1 += taps_.cz1[k + rs] * cz[xx];
          scz2 += taps_.cz2[k + rs] * cz[xx];
        }
        float g = 0, dg = 0, ddg = 0;
        for (int k = -rf; k <= rf; ++k) {
          const int xx = std::clamp(x + k, 0, width_ - 1);
          const float v = lum[xx] * (1.0f / 116.0f) + 16.0f / 116.0f;  // Y to [0, 1]
          g += taps_.g[k + rf] * v;
          dg += taps_.dg[k + rf] * v;
          ddg += taps_.ddg[k + rf] * v;
        }
        out[kY][x] = sy;
        out[kCx][x] = scx;
        out[kCz1][x] = scz1;
        out[kCz2][x] = scz2;
        out[kG][x] = g;
        out[kDg][x] = dg;
        out[kDdg][x] = ddg;
      }
    }
  }

  // The colour difference of the two images' filtered colours, remapped to [0, 1]: the
  // differences up to kPc of the largest take [0, kPt], the rest the remaining range.
  float colour_difference(int x, int y) {
    Rgb lab[2];
    const int rs = taps_.spatial_radius;
    for (int image = 0; image < 2; ++image) {
      float sy = 0, scx = 0, scz = 0;
      for (int k = -rs; k <= rs; ++k) {
        const int yy = std::clamp(y + k, 0, height_ - 1);
        sy += taps_.y[k + rs] * across(yy, image, kY)[x];
        scx += taps_.cx[k + rs] * across(yy, image, kCx)[x];
        scz += taps_.cz1[k + rs] * across(yy, image, kCz1)[x] +
               taps_.cz2[k + rs] * across(yy, image, kCz2)[x];
      }
      Rgb linear = xyz_to_linear(ycxcz_to_xyz({sy, scx, scz}));
      for (float& v : linear) v = clamp_unit(v);
      lab[image] = hunt(xyz_to_lab(linear_to_xyz(linear)));
    }
    const float d = std::pow(hyab(lab[0], lab[1]), kQc);
    return d < pccmax_ ? d * kPt / pccmax_ : kPt + (d - pccmax_) / (cmax_ - pccmax_) * (1.0f - kPt);
  }

  // How much the edges and points of the luminance differ, in [0, 1].
  float feature_difference(int x, int y) {
    float edge[2], point[2];
    const int rf = taps_.feature_radius;
    for (int image = 0; image < 2; ++image) {
      float dx = 0, ddx = 0, dy = 0, ddy = 0;
      for (int k = -rf; k <= rf; ++k) {
        const int yy = std::clamp(y + k, 0, height_ - 1);
        const float g = across(yy, image, kG)[x];
        dx += taps_.g[k + rf] * across(yy, image, kDg)[x];
        ddx += taps_.g[k + rf] * across(yy, image, kDdg)[x];
        dy += taps_.dg[k + rf] * g;
        ddy += taps_.ddg[k + rf] * g;
      }
      edge[image] = std::sqrt(dx * dx + dy * dy);
      point[image] = std::sqrt(ddx * ddx + ddy * ddy);
    }
    const float most = std::max(std::fabs(edge[0] - edge[1]), std::fabs(point[0] - point[1]));
    return std::pow(most / std::sqrt(2.0f), kQf);
  }

  float error_at(int x, int y) {
    return std::pow(colour_difference(x, y), 1.0f - feature_difference(x, y));
  }

  const Image& reference_;
  const Image& test_;
  const Taps& taps_;
  Exposure exposure_;
  int width_, height_, ring_;
  std::vector<float> across_;
  std::vector<float> ycxcz_;
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

// FLIP's weighted percentile: the error at which the running sum of the sorted errors first
// exceeds `part` of their total.
double weighted_percentile(const std::vector<float>& sorted, double total, double part) {
  double running = 0;
  for (const float e : sorted) {
    running += e;
    if (running > part * total) return e;
  }
  return sorted.empty() ? 0 : sorted.back();
}

void pool(Flip& f) {
  std::vector<float> sorted = f.errors;
  std::sort(sorted.begin(), sorted.end());
  const double total = std::accumulate(sorted.begin(), sorted.end(), 0.0);
  f.mean = total / double(sorted.size());
  f.min = sorted.front();
  f.max = sorted.back();
  f.q1 = weighted_percentile(sorted, total, 0.25);
  f.weighted_median = weighted_percentile(sorted, total, 0.5);
  f.q3 = weighted_percentile(sorted, total, 0.75);
}

}  // namespace

std::size_t flip_bytes(int width, int height, const FlipOptions& options) {
  const std::size_t pixels = std::size_t(width) * height;
  const Taps taps = make_taps(float(options.ppd));
  const std::size_t ring = 2 * std::max(taps.spatial_radius, taps.feature_radius) + 1;
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  // errors, their sorted copy and (HDR) exposures: 4 bytes each; the heat map 3 + 3.
  return pixels * ((options.hdr ? 12 : 8) + 6) +
         cores * (ring * 2 * kAcross + 6) * std::size_t(width) * sizeof(float);
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
  if (!(o.ppd > 0) || !std::isfinite(o.ppd))
    throw Error(ErrorKind::Usage, "flip: pixels per degree must be a finite number > 0");
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
  if (!o.hdr) {
    in_bands(f.height, kBandRows, [&](int first, int last) {
      LdrPass(reference, test, taps, {}).run(f.errors, first, last);
    });
  } else {
    for (int i = 0; i < f.exposures; ++i) {
      const Exposure e{.hdr = true, .scale = exposure_scale(f, i), .tonemapper = o.tonemapper};
      in_bands(f.height, kBandRows, [&](int first, int last) {
        LdrPass(reference, test, taps, e)
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
