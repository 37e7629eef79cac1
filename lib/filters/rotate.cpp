// rotate by any angle: each output pixel's centre turned back into the input and sampled there
// (nearest, bilinear or bicubic Catmull-Rom taps), outside the input the background colour
// (alpha 0). The output holds the whole turned image (the pixels holding its turned pixel
// centres, oiiotool's box) or keeps the input's size. Output rows read a band of input rows (the
// band a turned strip covers), so it streams. Device side: kernels/rotate.cl, the same arithmetic
// in the same order: bit for bit.
#include "filters/rotate.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "cl/groups.hpp"
#include "core/error.hpp"
#include "kernels/contract.h"

namespace halo {

namespace {

enum class Taps { nearest = TAPS_NEAREST, bilinear = TAPS_BILINEAR, bicubic = TAPS_BICUBIC };

// Where output pixels come from: input = R * (output - out_centre) + in_centre.
struct Turn {
  float cos = 1, sin = 0;
  float cos_lo = 0, sin_lo = 0;  // what float cos and sin leave of the double values
  float in_cx = 0, in_cy = 0, out_cx = 0, out_cy = 0;
};

// s + e = a + b exactly (Knuth's TwoSum).
void two_sum(float a, float b, float& s, float& e) {
  s = a + b;
  const float bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

// A sample position along one axis: its pixel index and the fraction past that pixel.
struct Position {
  int index;
  float frac;
};

// (c + c_lo) d1 + (s + s_lo) d2 + offset, as a whole pixel and a fraction: products and sums
// kept as float pairs (fma gives each product's rounding error exactly), so the fraction is
// right to float's precision however far from the centre the pixel lies; a float position
// 1000 pixels out is only right to 6e-5 of a pixel, which a sharp edge turns into errors of
// 1e-4 of its contrast. kernels/rotate.cl computes the same, in the same order.
Position turned(float c, float c_lo, float s, float s_lo, float d1, float d2, float offset) {
  const float p1 = c * d1, e1 = std::fma(c, d1, -p1);
  const float p2 = s * d2, e2 = std::fma(s, d2, -p2);
  float t, e3, u, e4;
  two_sum(p1, p2, t, e3);
  two_sum(t, offset, u, e4);
  const float lo = ((e1 + e2) + (e3 + e4)) + (c_lo * d1 + s_lo * d2);
  float whole = std::floor(u), frac = (u - whole) + lo;  // u - whole is exact
  if (frac < 0.0f) {
    frac += 1.0f;
    whole -= 1.0f;
  } else if (frac >= 1.0f) {
    frac -= 1.0f;
    whole += 1.0f;
  }
  return {int(whole), frac};
}

// Catmull-Rom weights (Keys, a = -0.5) for a tap at distance t (0..2), the same expression on
// both sides.
float cubic(float t) {
  t = t < 0.0f ? -t : t;
  if (t < 1.0f) return (1.5f * t - 2.5f) * t * t + 1.0f;
  if (t < 2.0f) return ((-0.5f * t + 2.5f) * t - 4.0f) * t + 2.0f;
  return 0.0f;
}

class RotateStage : public Stage {
 public:
  RotateStage(std::string spec, double degrees, Taps taps, float background, bool keep_size)
      : Stage(std::move(spec)),
        degrees_(degrees),
        taps_(taps),
        background_(background),
        keep_size_(keep_size) {}

  StageTraits traits() const override {
    return {.resizes = true, .cost = {.reference_ns = 20, .device_ns = 3}};
  }
  ImageDesc describe(const ImageDesc& in) const override { return resized(in, size_for(in.size)); }
  Size size_for(Size in) const {
    if (keep_size_) return in;
    const double r = degrees_ * M_PI / 180, c = std::fabs(std::cos(r)), s = std::fabs(std::sin(r));
    const double across = (in.width - 1) * c + (in.height - 1) * s;  // the turned pixel centres
    const double down = (in.width - 1) * s + (in.height - 1) * c;
    return {pixels_holding(in.width / 2.0, across), pixels_holding(in.height / 2.0, down)};
  }
  // The whole pixels of the input's grid that hold centres spread `span` about `centre`, as
  // oiiotool --rotate's box (recompute_roi): symmetric about the centre, so the turn stays
  // at the output's centre; less float noise (30x20 turned by 90.0000001 degrees is 20x30).
  static int pixels_holding(double centre, double span) {
    const double first = std::floor(centre - span / 2 + 1e-6);
    const double last = std::ceil(centre + span / 2 - 1e-6);
    return std::max(1, int(last - first));
  }
  Span input_rows(Span out, Size in) const override {
    const Turn t = turn(in, size_for(in));
    const double x0 = 0.5 - t.out_cx, x1 = size_for(in).width - 0.5 - t.out_cx;
    const double y0 = out.first + 0.5 - t.out_cy, y1 = out.last - 0.5 - t.out_cy;
    double lo = 1e300, hi = -1e300;
    for (const double dx : {x0, x1})
      for (const double dy : {y0, y1}) {
        const double sy = double(-t.sin) * dx + double(t.cos) * dy + t.in_cy - 0.5;
        lo = std::min(lo, sy), hi = std::max(hi, sy);
      }
    const int margin = 3;  // the taps' reach (2 for bicubic) and float rounding
    const int first = std::clamp(int(std::floor(lo)) - margin, 0, in.height - 1);
    const int last = std::clamp(int(std::ceil(hi)) + margin + 1, first + 1, in.height);
    return {first, last};
  }
  std::vector<std::string> details(const StageRun&) const override {
    static const char* const names[] = {"nearest", "bilinear", "bicubic (Catmull-Rom)"};
    return {fmt::format("turned {:g} degrees clockwise, {} taps, background {:g}{}", degrees_,
                        names[int(taps_)], background_,
                        keep_size_ ? ", the input's size kept" : ", the whole turned image")};
  }

  Image reference_rows(const Image& in, Span out, StageRun&) const override {
    const Size size = size_for({in.width(), in.full_height()});
    const Turn t = turn({in.width(), in.full_height()}, size);
    Image result(size.width, out, size.height, in.channels(), in.alpha());
    result.set_source(in.source());
    std::vector<Position> xs(std::size_t(size.width)), ys(xs.size());
    for (int y = out.first; y < out.last; ++y) {
      // Each pixel's position once, for all its channels.
      for (int x = 0; x < size.width; ++x) {
        const float dx = (float(x) + 0.5f) - t.out_cx, dy = (float(y) + 0.5f) - t.out_cy;
        xs[std::size_t(x)] = turned(t.cos, t.cos_lo, t.sin, t.sin_lo, dx, dy, t.in_cx - 0.5f);
        ys[std::size_t(x)] = turned(-t.sin, -t.sin_lo, t.cos, t.cos_lo, dx, dy, t.in_cy - 0.5f);
      }
      for (int c = 0; c < in.channels(); ++c) {
        const float outside = in.alpha() && c == in.channels() - 1 ? 0.0f : background_;
        float* dst = result.row(c, y - result.y0());
        for (int x = 0; x < size.width; ++x)
          dst[x] = sample(in, c, xs[std::size_t(x)], ys[std::size_t(x)], outside);
      }
    }
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun&) const override {
    const Size size = size_for({in.width, in.full_height});
    const Turn t = turn({in.width, in.full_height}, size);
    DeviceImage result = resized_result(device, in, size, out);
    auto kernel = device.kernel("rotate.cl", "rotate_any", {});
    const RotateArgs args{.move = move_args(in, result, out),
                          .cos = t.cos,
                          .sin = t.sin,
                          .cos_lo = t.cos_lo,
                          .sin_lo = t.sin_lo,
                          .in_cx = t.in_cx,
                          .in_cy = t.in_cy,
                          .out_cx = t.out_cx,
                          .out_cy = t.out_cy,
                          .background = background_,
                          .taps = int(taps_),
                          .alpha = in.alpha ? in.channels - 1 : -1};
    set_args(kernel, in.buffer, result.buffer, args);
    device.launch(kernel, "rotate_any", cl::NDRange(size.width, out.count(), in.channels),
                  groups::tile, 2 * std::size_t(size.width) * out.count() * 4 * in.channels);
    return result;
  }

 private:
  Turn turn(Size in, Size out) const {
    const double r = degrees_ * M_PI / 180;
    const double c = std::cos(r), s = std::sin(r);
    return {.cos = float(c),
            .sin = float(s),
            .cos_lo = float(c - double(float(c))),
            .sin_lo = float(s - double(float(s))),
            .in_cx = float(in.width * 0.5),
            .in_cy = float(in.height * 0.5),
            .out_cx = float(out.width * 0.5),
            .out_cy = float(out.height * 0.5)};
  }

  // Input sample (x, y) of channel c, or `outside` beyond the image.
  static float at(const Image& in, int c, int x, int y, float outside) {
    if (x < 0 || y < 0 || x >= in.width() || y >= in.full_height()) return outside;
    return in.row(c, y - in.y0())[x];
  }

  // Channel c of the input sampled at a turned position (index and fraction along each axis).
  float sample(const Image& in, int c, Position px, Position py, float outside) const {
    if (taps_ == Taps::nearest)  // the nearest centre: ties go right and down, as floor(s + 0.5)
      return at(in, c, px.index + (px.frac >= 0.5f), py.index + (py.frac >= 0.5f), outside);
    const int ix = px.index, iy = py.index;
    const float u = px.frac, v = py.frac;
    if (taps_ == Taps::bilinear) {
      const float top =
          at(in, c, ix, iy, outside) * (1.0f - u) + at(in, c, ix + 1, iy, outside) * u;
      const float bottom =
          at(in, c, ix, iy + 1, outside) * (1.0f - u) + at(in, c, ix + 1, iy + 1, outside) * u;
      return top * (1.0f - v) + bottom * v;
    }
    float sum = 0.0f;
    for (int j = -1; j <= 2; ++j) {
      float row = 0.0f;
      for (int i = -1; i <= 2; ++i) row += at(in, c, ix + i, iy + j, outside) * cubic(u - float(i));
      sum += row * cubic(v - float(j));
    }
    return sum;
  }

  double degrees_;
  Taps taps_;
  float background_;
  bool keep_size_;
};

}  // namespace

std::unique_ptr<Stage> make_free_rotation(const Args& args, double degrees) {
  const Taps taps = args.choice<Taps>(
      "filter",
      {{"bicubic", Taps::bicubic}, {"bilinear", Taps::bilinear}, {"nearest", Taps::nearest}});
  return std::make_unique<RotateStage>(args.spec_text(), degrees, taps,
                                       float(args.number("background")),
                                       args.text("size") == "same");
}

}  // namespace halo
