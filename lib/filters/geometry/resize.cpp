// resize: a new width and height (w, h, scale, fit) by a separable resampling filter (lanczos3,
// mitchell, catmull-rom, triangle, box, nearest), widened by the scale when shrinking so that
// a shrunk image is antialiased. Each output column and row has a window of input samples and
// their weights, computed here once in double and rounded to float; the reference and
// kernels/resize.cl sum the same floats in the same order, so their results are equal bit for
// bit. Windows are clipped to the image and their weights renormalised (as Pillow does). Rows
// stream: a strip of output rows reads the input rows of their windows.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "cl/groups.hpp"
#include "core/error.hpp"
#include "filters/filter.hpp"

namespace halo {

namespace {

enum class Fit { inside, cover, fill };
enum class Kernel { lanczos3, mitchell, catmull_rom, triangle, box, nearest };

struct ResizeSpec {
  int w = 0, h = 0;  // 0: from the other side and the aspect ratio
  double scale = 0;  // > 0: both sides times this
  Fit fit = Fit::inside;
  Kernel kernel = Kernel::lanczos3;
  bool shrink_on_load = false;  // a decoder may shrink the input first (decode_shrink)
};

// Mitchell and Netravali's cubic family (B, C): mitchell B = C = 1/3, Catmull-Rom B = 0, C = 1/2.
double cubic(double x, double b, double c) {
  x = std::fabs(x);
  if (x < 1)
    return ((12 - 9 * b - 6 * c) * x * x * x + (-18 + 12 * b + 6 * c) * x * x + (6 - 2 * b)) / 6;
  if (x < 2)
    return ((-b - 6 * c) * x * x * x + (6 * b + 30 * c) * x * x + (-12 * b - 48 * c) * x +
            (8 * b + 24 * c)) /
           6;
  return 0;
}

double sinc(double x) {
  if (x == 0) return 1;
  x *= M_PI;
  return std::sin(x) / x;
}

double support(Kernel k) {
  switch (k) {
    case Kernel::lanczos3:
      return 3;
    case Kernel::mitchell:
    case Kernel::catmull_rom:
      return 2;
    case Kernel::triangle:
      return 1;
    default:
      return 0.5;
  }
}

double weight(Kernel k, double x) {
  switch (k) {
    case Kernel::lanczos3:
      return std::fabs(x) < 3 ? sinc(x) * sinc(x / 3) : 0;
    case Kernel::mitchell:
      return cubic(x, 1.0 / 3, 1.0 / 3);
    case Kernel::catmull_rom:
      return cubic(x, 0, 0.5);
    case Kernel::triangle:
      return std::max(0.0, 1 - std::fabs(x));
    default:  // box, nearest: (-0.5, 0.5], decided exactly by box_weight
      return x > -0.5 && x <= 0.5 ? 1 : 0;
  }
}

// box and nearest for input j and output i, decided in integers: x = (j + 0.5 - centre) /
// stretch lies in (-0.5, 0.5]. An output centre exactly between two inputs (2 -> 3 pixels)
// takes the right or lower one, as Pillow and ImageMagick do; in double, (i + 0.5) * in / out
// would break such ties by rounding noise.
double box_weight(long long j, long long i, long long in, long long out, bool nearest) {
  const long long reach = nearest ? out : std::max(in, out);  // 2 out stretch x 0.5
  const long long x = (2 * j + 1) * out - (2 * i + 1) * in;   // 2 out (j + 0.5 - centre)
  return x > -reach && x <= reach ? 1 : 0;
}

// One axis: for output i, the input window [start, start + count) and its weights (taps a row).
struct Axis {
  int taps = 0;
  std::vector<int> start, count;
  std::vector<float> weights;
  std::vector<float> spans;  // start and count as floats, for the kernels

  Span window(Span out) const {
    int first = start[out.first], last = 0;
    for (int i = out.first; i < out.last; ++i) {
      first = std::min(first, start[i]);
      last = std::max(last, start[i] + count[i]);
    }
    return {first, last};
  }
};

// `extent`: the input pixels the image spans (less than `in` when the input was read at 1/f
// of a size that f does not divide: the last pixel averages a partial block).
Axis make_axis(int in, int out, Kernel k, double extent) {
  const double scale = extent / out;
  // Shrinking widens the filter by the scale (antialiasing); nearest never does.
  const double stretch = k == Kernel::nearest ? 1 : std::max(1.0, scale);
  const double reach = support(k) * stretch;
  Axis a;
  std::vector<std::vector<double>> all(out);
  for (int i = 0; i < out; ++i) {
    const double centre = (i + 0.5) * scale;
    const int first = std::max(0, int(std::floor(centre - reach)));
    const int last = std::min(in, int(std::ceil(centre + reach)) + 1);
    double sum = 0;
    std::vector<double>& w = all[i];
    int lo = -1, hi = -1;  // the first and last input with a weight
    for (int j = first; j < last; ++j) {
      const double v = k == Kernel::box || k == Kernel::nearest
                           ? box_weight(j, i, in, out, k == Kernel::nearest)
                           : weight(k, (j + 0.5 - centre) / stretch);
      w.push_back(v);
      sum += v;
      if (v != 0) hi = j, lo = lo < 0 ? j : lo;
    }
    if (lo < 0) {  // nothing inside (a window past the edge): the nearest sample
      lo = hi = std::clamp(int(centre), 0, in - 1);
      w.assign(1, 1.0), sum = 1;
    } else {
      w = std::vector<double>(w.begin() + (lo - first), w.begin() + (hi - first) + 1);
    }
    for (double& v : w) v /= sum;
    a.start.push_back(lo);
    a.count.push_back(hi - lo + 1);
    a.taps = std::max(a.taps, hi - lo + 1);
  }
  a.weights.assign(std::size_t(out) * a.taps, 0.0f);
  for (int i = 0; i < out; ++i) {
    for (int j = 0; j < a.count[i]; ++j) a.weights[std::size_t(i) * a.taps + j] = float(all[i][j]);
    a.spans.push_back(float(a.start[i]));
    a.spans.push_back(float(a.count[i]));
  }
  return a;
}

class ResizeStage : public Stage, public ShrinksOnLoad {
 public:
  ResizeStage(std::string spec, ResizeSpec r) : Stage(std::move(spec)), r_(r) {}
  // For an input of size `stored` read at 1/shrink (read_shrunk).
  ResizeStage(std::string spec, ResizeSpec r, Size stored, int shrink)
      : Stage(std::move(spec)), r_(r), stored_(stored), shrink_(shrink) {}

  // Cost per input sample, measured on a 2-core machine (5120x2880 RGB to 1600, 3000 and 2560
  // wide, Lanczos 3: 12 taps): the reference 8-14 ns, PoCL's kernels 10-12 ns (2026-11-27),
  // which start 0.07 s later and hold 60 MB more.
  StageTraits traits() const override {
    const double taps = 4 * support(r_.kernel);
    return {.resizes = true, .cost = {.reference_ns = 0.85 * taps, .device_ns = 4 + 0.55 * taps}};
  }
  // The frame scales with the pixels, by the factor asked for (oiiotool --resize scales the
  // data window with the display window); a corner's position rounds down, as there.
  ImageDesc describe(const ImageDesc& in) const override {
    const Size size = size_for(in.size);
    ImageDesc out = resized(in, size);
    if (in.placement) {
      const auto [sx, sy] = factors(in.size);
      const Placement& p = *in.placement;
      out.placement = Placement{.x = int(std::floor(p.x * sx)),
                                .y = int(std::floor(p.y * sy)),
                                .full_x = int(std::floor(p.full_x * sx)),
                                .full_y = int(std::floor(p.full_y * sy)),
                                .full_width = std::max(1, int(std::lround(p.full_width * sx))),
                                .full_height = std::max(1, int(std::lround(p.full_height * sy)))};
    }
    return out;
  }
  // The largest factor (8, 4 or 2 for a decoder's DCT scaling, any for averaged blocks) whose
  // shrunk input (each side rounded up, as libjpeg's) still holds the output's pixels twice
  // over in each direction, and gives the same output size: vips's and Pillow's reducing gap
  // of 2 before the filter.
  int decode_shrink(Size in, DecodeShrink how) const override {
    if (!r_.shrink_on_load) return 1;
    const Size out = size_for(in);
    const auto fits = [&](int f) {
      const Size shrunk{(in.width + f - 1) / f, (in.height + f - 1) / f};
      return shrunk.width >= 2 * out.width && shrunk.height >= 2 * out.height &&
             size_for(shrunk) == out;
    };
    if (how == DecodeShrink::dct) {
      for (const int f : {8, 4, 2})
        if (fits(f)) return f;
      return 1;
    }
    for (int f = std::min(in.width / out.width, in.height / out.height) / 2 + 1; f >= 2; --f)
      if (fits(f)) return f;
    return 1;
  }
  std::unique_ptr<Stage> read_shrunk(Size in, int shrink) const override {
    return std::make_unique<ResizeStage>(spec(), r_, in, shrink);
  }
  // The scale asked for along each side (before the size is rounded to whole pixels).
  std::pair<double, double> factors(Size in) const {
    const double sx = double(r_.w) / in.width, sy = double(r_.h) / in.height;
    if (r_.scale > 0) return {r_.scale, r_.scale};
    if (r_.w > 0 && r_.h > 0) {
      if (r_.fit == Fit::fill) return {sx, sy};
      const double s = r_.fit == Fit::inside ? std::min(sx, sy) : std::max(sx, sy);
      return {s, s};
    }
    return r_.w > 0 ? std::pair{sx, sx} : std::pair{sy, sy};
  }
  Size size_for(Size in) const {
    Size out;
    if (r_.scale > 0) {
      out = {int(std::lround(in.width * r_.scale)), int(std::lround(in.height * r_.scale))};
    } else if (r_.w > 0 && r_.h > 0) {
      const double s = factors(in).first;
      out = r_.fit == Fit::fill
                ? Size{r_.w, r_.h}
                : Size{int(std::lround(in.width * s)), int(std::lround(in.height * s))};
    } else if (r_.w > 0) {
      out = {r_.w, int(std::lround(double(in.height) * r_.w / in.width))};
    } else {
      out = {int(std::lround(double(in.width) * r_.h / in.height)), r_.h};
    }
    out = {std::max(1, out.width), std::max(1, out.height)};
    if (double(out.width) * out.height > 4e9)
      throw Error(ErrorKind::Usage,
                  fmt::format("{}: a {}x{} result is too large", spec(), out.width, out.height));
    return out;
  }
  Span input_rows(Span out, Size in) const override {
    const Size size = size_for(in);
    const Span window = rows_axis(in.height, size.height)->window(out);
    // With the rows each output row's share starts at (input_row), which strips own.
    return {std::min(window.first, input_row(out.first, in, size)),
            std::max(window.last, std::min(in.height, input_row(out.last, in, size) + 1))};
  }
  std::vector<std::string> details(const StageRun&) const override {
    return {"rows pass then columns pass; windows widened by the scale when shrinking"};
  }

  // `in` holds the input rows of out's windows; the result holds the output rows `out`.
  Image reference_rows(const Image& in, Span out, StageRun&) const override {
    const Size from{in.width(), in.full_height()}, to = size_for(from);
    const auto x_axis = columns_axis(from.width, to.width);
    const auto y_axis = rows_axis(from.height, to.height);
    const Axis &ax = *x_axis, &ay = *y_axis;
    const Span rows = ay.window(out);
    // Every sample of both is written below.
    Image tmp = Image::uninitialized(to.width, rows, from.height, in.channels(), in.alpha());
    for (int c = 0; c < in.channels(); ++c)
      for (int y = rows.first; y < rows.last; ++y) {
        const float* src = in.row(c, y - in.y0());
        float* dst = tmp.row(c, y - tmp.y0());
        for (int x = 0; x < to.width; ++x) {
          const float* w = ax.weights.data() + std::size_t(x) * ax.taps;
          const float* s = src + ax.start[x];
          float sum = 0.0f;
          for (int k = 0; k < ax.count[x]; ++k) sum += w[k] * s[k];
          dst[x] = sum;
        }
      }
    Image result = Image::uninitialized(to.width, out, to.height, in.channels(), in.alpha());
    result.set_source(in.source());
    for (int c = 0; c < in.channels(); ++c)
      for (int y = out.first; y < out.last; ++y) {
        const float* w = ay.weights.data() + std::size_t(y) * ay.taps;
        float* dst = result.row(c, y - result.y0());
        for (int x = 0; x < to.width; ++x) {
          float sum = 0.0f;
          for (int k = 0; k < ay.count[y]; ++k)
            sum += w[k] * tmp.row(c, ay.start[y] + k - tmp.y0())[x];
          dst[x] = sum;
        }
      }
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun&) const override {
    const Size from{in.width, in.full_height}, to = size_for(from);
    const auto x_axis = columns_axis(from.width, to.width);
    const auto y_axis = rows_axis(from.height, to.height);
    const Axis &ax = *x_axis, &ay = *y_axis;
    const Span rows = ay.window(out);
    DeviceImage tmp = device.image(to.width, rows.count(), in.channels, in.alpha);
    tmp.y0 = rows.first;
    tmp.full_height = from.height;
    DeviceImage result = resized_result(device, in, to, out);
    const cl::NDRange& local = groups::tile;
    auto rows_kernel = device.kernel("resize.cl", "resize_rows", {});
    set_args(rows_kernel, in.buffer, tmp.buffer, move_args(in, tmp, rows),
             device.constants(ax.spans, "resize spans"),
             device.constants(ax.weights, "resize weights"), ax.taps);
    device.launch(rows_kernel, "resize_rows", cl::NDRange(to.width, rows.count(), in.channels),
                  local, std::size_t(in.width + to.width) * rows.count() * 4 * in.channels);
    auto cols_kernel = device.kernel("resize.cl", "resize_cols", {});
    set_args(cols_kernel, tmp.buffer, result.buffer, move_args(tmp, result, out),
             device.constants(ay.spans, "resize spans"),
             device.constants(ay.weights, "resize weights"), ay.taps);
    device.launch(cols_kernel, "resize_cols", cl::NDRange(to.width, out.count(), in.channels),
                  local, std::size_t(to.width) * (rows.count() + out.count()) * 4 * in.channels);
    return result;
  }

 private:
  // One axis's windows and weights, made once per pair of sizes: every strip (and the strip
  // plan, for each strip's rows) asks again.
  // A batch of many sizes keeps the last few (a holder keeps its own alive).
  std::shared_ptr<const Axis> columns_axis(int in, int out) const {
    return axis(in, out, extent(in, stored_.width));
  }
  std::shared_ptr<const Axis> rows_axis(int in, int out) const {
    return axis(in, out, extent(in, stored_.height));
  }
  std::shared_ptr<const Axis> axis(int in, int out, double extent) const {
    std::lock_guard lock(mutex_);
    const auto key = std::tuple{in, out, extent};
    if (const auto it = axes_.find(key); it != axes_.end()) return it->second;
    if (axes_.size() >= 8) axes_.clear();
    return axes_[key] = std::make_shared<const Axis>(make_axis(in, out, r_.kernel, extent));
  }
  // The input pixels the image spans along a side of `in` pixels: all of them, unless the
  // input is a side of `stored` pixels read at 1/shrink_ with a partial last block (as
  // Pillow's thumbnail resizes its reduced image over the box size/factor).
  double extent(int in, int stored) const {
    if (shrink_ > 1 && in == (stored + shrink_ - 1) / shrink_) return double(stored) / shrink_;
    return in;
  }

  ResizeSpec r_;
  Size stored_{};  // the input's size before it was read shrunk (shrink_ > 1)
  int shrink_ = 1;
  mutable std::mutex mutex_;
  mutable std::map<std::tuple<int, int, double>, std::shared_ptr<const Axis>> axes_;
};

int side(const Args& args, const char* key) {
  return args.is_auto(key) ? 0 : args.integer(key);
}

}  // namespace

FilterDef resize_filter() {
  std::vector<Param> params = {
      {.name = "w",
       .type = ParamType::Integer,
       .fallback = "auto",
       .doc = "width (auto: from h and the aspect ratio)",
       .min = 1,
       .max = 1e6,
       .allow_auto = true},
      {.name = "h",
       .type = ParamType::Integer,
       .fallback = "auto",
       .doc = "height (auto: from w and the aspect ratio)",
       .min = 1,
       .max = 1e6,
       .allow_auto = true},
      {.name = "scale",
       .type = ParamType::Number,
       .fallback = "auto",
       .doc = "both sides times this, instead of w and h",
       .min = 1e-4,
       .max = 1e4,
       .allow_auto = true},
      {.name = "fit",
       .type = ParamType::Choice,
       .fallback = "inside",
       .doc = "with w and h: inside (the largest size within w x h, aspect kept), cover (the "
              "smallest covering it, aspect kept), fill (exactly w x h)",
       .choices = {"inside", "cover", "fill"}},
      {.name = "filter",
       .type = ParamType::Choice,
       .fallback = "lanczos3",
       .doc = "resampling filter, widened by the scale when shrinking (antialiased); nearest "
              "picks one sample",
       .choices = {"lanczos3", "mitchell", "catmull-rom", "triangle", "box", "nearest"}},
      {.name = "fast",
       .type = ParamType::Flag,
       .fallback = "0",
       .doc = "the input may be shrunk as it is read, while twice the output's pixels remain "
              "each way (the reducing gap of vipsthumbnail and Pillow): a JPEG or WebP by its "
              "decoder (1/2, 1/4, 1/8), other formats by averaging blocks of pixels (colour "
              "weighted by alpha); thumbnail's default"},
      border_param()};  // accepted like every filter's; windows are clipped to the image
  return {.name = "resize",
          .summary = "a new size by a separable resampling filter, antialiased when shrinking",
          .params = std::move(params),
          .notes = {"streams strip by strip: output rows read the input rows of their windows",
                    "weights computed once in double; device and reference equal bit for bit"},
          .example = "resize:w=1920",
          .make =
              [](const Args& args) {
                ResizeSpec r;
                r.w = side(args, "w");
                r.h = side(args, "h");
                r.scale = args.is_auto("scale") ? 0 : args.number("scale");
                if (r.scale > 0 && (r.w || r.h)) args.fail("scale", "give scale, or w and h");
                if (r.scale == 0 && !r.w && !r.h) args.fail("w", "give w, h or scale");
                r.fit = args.choice<Fit>(
                    "fit", {{"inside", Fit::inside}, {"cover", Fit::cover}, {"fill", Fit::fill}});
                r.kernel = args.choice<Kernel>("filter", {{"lanczos3", Kernel::lanczos3},
                                                          {"mitchell", Kernel::mitchell},
                                                          {"catmull-rom", Kernel::catmull_rom},
                                                          {"triangle", Kernel::triangle},
                                                          {"box", Kernel::box},
                                                          {"nearest", Kernel::nearest}});
                r.shrink_on_load = args.flag("fast");
                return std::make_unique<ResizeStage>(args.spec_text(), r);
              },
          .swept = false};
}

FilterDef thumbnail_filter() {
  FilterDef def = resize_filter();
  def.name = "thumbnail";
  for (Param& p : def.params)
    if (p.name == "fast")
      p.fallback.assign(1, '1');  // assign: GCC 12's -Wrestrict misfires on = "1"
  def.summary =
      "resize to fit inside w x h (aspect kept), the input shrunk as it is read first: "
      "resize with fit=inside and fast=1";
  def.example = "thumbnail:w=256:h=256";
  return def;
}

}  // namespace halo
