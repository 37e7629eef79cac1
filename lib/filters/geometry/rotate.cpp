// rotate by any angle: each output pixel's centre turned back into the input and sampled there
// (nearest, bilinear or bicubic Catmull-Rom taps), outside the input the background colour
// (alpha 0). The output holds the whole turned image (the pixels holding its turned pixel
// centres, oiiotool's box) or keeps the input's size. The turn is about the image's centre, or
// about its frame's (an EXR's display window, as oiiotool --rotate) when it has one: the frame
// stays, and the data window becomes the box. Output rows read a band of input rows (the band a
// turned strip covers), so it streams. Device side: kernels/rotate.cl, the same arithmetic in
// the same order: bit for bit.
#include "filters/geometry/rotate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
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

// What a turn makes of an input of a size: the output's size, the turn's centre in the input's
// and the output's pixel coordinates, and where the output's first pixel lies in the input's
// coordinates (the data window moves by it).
struct Geometry {
  Size out;
  double in_cx = 0, in_cy = 0, out_cx = 0, out_cy = 0;
  int x = 0, y = 0;
};

// The whole pixels that hold every position from `lo` to `hi` (turned pixel centres), as
// oiiotool --rotate's box (recompute_roi); less float noise (30x20 turned by 90.0000001 degrees
// is 20x30).
std::array<int, 2> pixels_holding(double lo, double hi) {
  const int first = int(std::floor(lo + 1e-6));
  return {first, std::max(first + 1, int(std::ceil(hi - 1e-6)))};
}

class RotateStage : public Stage, public BoundToFile {
 public:
  // `centre`: the turn's centre in the input's pixel coordinates, for an input in a frame (its
  // display window's centre); else the input's own centre.
  RotateStage(std::string spec, double degrees, Taps taps, float background, bool keep_size,
              std::optional<std::array<double, 2>> centre = std::nullopt)
      : Stage(std::move(spec)),
        degrees_(degrees),
        taps_(taps),
        background_(background),
        keep_size_(keep_size),
        centre_(centre) {}

  StageTraits traits() const override {
    return {.resizes = true, .cost = {.reference_ns = 20, .device_ns = 3}};
  }
  ImageDesc describe(const ImageDesc& in) const override {
    const Geometry g = geometry(in.size);
    ImageDesc out = resized(in, g.out);
    if (centre_ && in.placement) {  // the frame stays; the data window becomes the box
      out.placement = in.placement;
      out.placement->x += g.x, out.placement->y += g.y;
    }
    return out;
  }
  // Bound to where the input lies in its frame: turned about the frame's centre.
  std::unique_ptr<Stage> for_file(const FileFacts& file) const override {
    if (!file.placement || file.placement->full_width <= 0) return nullptr;
    const Placement& p = *file.placement;
    const std::array<double, 2> centre{p.full_x + p.full_width * 0.5 - p.x,
                                       p.full_y + p.full_height * 0.5 - p.y};
    return std::make_unique<RotateStage>(spec(), degrees_, taps_, background_, keep_size_, centre);
  }
  Geometry geometry(Size in) const {
    const double cx = centre_ ? (*centre_)[0] : in.width * 0.5;
    const double cy = centre_ ? (*centre_)[1] : in.height * 0.5;
    if (keep_size_) return {in, cx, cy, cx, cy};
    // The box of the turned pixel centres: output = R^T (input - centre) + centre.
    const double r = degrees_ * M_PI / 180, c = std::cos(r), s = std::sin(r);
    double x_lo = 1e300, x_hi = -1e300, y_lo = 1e300, y_hi = -1e300;
    for (const double x : {0.5, in.width - 0.5})
      for (const double y : {0.5, in.height - 0.5}) {
        const double ox = c * (x - cx) - s * (y - cy) + cx, oy = s * (x - cx) + c * (y - cy) + cy;
        x_lo = std::min(x_lo, ox), x_hi = std::max(x_hi, ox);
        y_lo = std::min(y_lo, oy), y_hi = std::max(y_hi, oy);
      }
    const auto [x0, x1] = pixels_holding(x_lo, x_hi);
    const auto [y0, y1] = pixels_holding(y_lo, y_hi);
    return {{x1 - x0, y1 - y0}, cx, cy, cx - x0, cy - y0, x0, y0};
  }
  Span input_rows(Span out, Size in) const override {
    const Geometry g = geometry(in);
    const Turn t = turn(g);
    const double x0 = 0.5 - t.out_cx, x1 = g.out.width - 0.5 - t.out_cx;
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
    const Geometry g = geometry({in.width(), in.full_height()});
    const Size size = g.out;
    const Turn t = turn(g);
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
    const Geometry g = geometry({in.width, in.full_height});
    const Size size = g.out;
    const Turn t = turn(g);
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
  Turn turn(const Geometry& g) const {
    const double r = degrees_ * M_PI / 180;
    const double c = std::cos(r), s = std::sin(r);
    return {.cos = float(c),
            .sin = float(s),
            .cos_lo = float(c - double(float(c))),
            .sin_lo = float(s - double(float(s))),
            .in_cx = float(g.in_cx),
            .in_cy = float(g.in_cy),
            .out_cx = float(g.out_cx),
            .out_cy = float(g.out_cy)};
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
  std::optional<std::array<double, 2>> centre_;
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
