// Rank filters: `median` (the middle of a square window's sorted samples: salt-and-pepper noise,
// fireflies) and the morphology pair `dilate` / `erode` (the window's maximum / minimum, as a
// rows pass then a columns pass). No arithmetic, so the device equals the reference bit for
// bit: both gather the window in the same order and pick with the same comparisons
// (kernels/rank.cl).
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "cl/groups.hpp"
#include "filters/filter.hpp"
#include "filters/rank/rank.hpp"

namespace halo {

namespace {

constexpr int kMedianRadius = 3;  // a 7x7 window: 49 samples sorted in registers

enum class Rank { median, dilate, erode };

// kernels/rank.cl's 3x3 median network: after it, w[4] is the median of the nine.
constexpr int kMedian9[19][2] = {{1, 2}, {4, 5}, {7, 8}, {0, 1}, {3, 4}, {6, 7}, {1, 2},
                                 {4, 5}, {7, 8}, {0, 3}, {5, 8}, {4, 7}, {3, 6}, {1, 4},
                                 {2, 5}, {4, 7}, {4, 2}, {6, 4}, {4, 2}};

}  // namespace

float median9(float* w) {
  for (const auto& [i, j] : kMedian9)
    if (w[j] < w[i]) std::swap(w[i], w[j]);
  return w[4];
}

float forgetful_median(float* w, int n) {
  const auto exchange = [w](int i, int j) {
    if (w[j] < w[i]) std::swap(w[i], w[j]);
  };
  const int m = n / 2 + 2;
  for (int s = 0; s <= n - m; ++s) {
    for (int i = s + 1; i < m; ++i) exchange(s, i);          // the minimum to w[s]
    for (int i = s + 1; i < m - 1; ++i) exchange(i, m - 1);  // the maximum to w[m - 1]
    if (m + s < n) w[m - 1] = w[m + s];                      // which the next sample replaces
  }
  return w[n - m + 1];
}

namespace {

// The window's samples in order, picked as kernels/rank.cl's median picks them: the 3x3
// network, else forgetful selection; swapping only when the second is smaller.
float median_of(const Image& in, int c, int x, int i, const std::vector<int>& xs,
                const std::vector<int>& ys, int r) {
  float w[(2 * kMedianRadius + 1) * (2 * kMedianRadius + 1)];
  const int side = 2 * r + 1, n = side * side;
  for (int dy = 0; dy < side; ++dy)
    for (int dx = 0; dx < side; ++dx) {
      const int row = ys[i + dy], col = xs[x + dx];
      w[dy * side + dx] = row < 0 || col < 0 ? 0.0f : in.row(c, row)[col];
    }
  return r == 1 ? median9(w) : forgetful_median(w, n);
}

// As kernels/rank.cl's PICK.
float pick(bool dilate, float a, float b) {
  return std::isnan(a) || (dilate ? b > a : b < a) ? b : a;
}

class RankStage : public Stage {
 public:
  RankStage(std::string spec, Rank rank, int r, Border border)
      : Stage(std::move(spec)), rank_(rank), r_(r), border_(border) {}

  std::string whole_image_reason(PixelType) const override {
    return border_whole_image_reason(border_);
  }
  // The median sorts (2r+1)^2 samples; morphology reads 2r+1 a pass.
  StageTraits traits() const override {
    const double side = 2 * r_ + 1;
    if (rank_ == Rank::median)
      return {.reach = r_,
              .cost = {.reference_ns = side * side * 6, .device_ns = side * side * 0.3}};
    return {.reach = r_, .cost = {.reference_ns = 2 * side * 2, .device_ns = 2 * side * 0.3}};
  }
  std::vector<std::string> details(const StageRun&) const override {
    const int side = 2 * r_ + 1;
    if (rank_ == Rank::median)
      return {fmt::format("median of {}x{} samples, sorted in registers", side, side)};
    return {fmt::format("{} of {}x{} samples: rows pass, then columns pass",
                        rank_ == Rank::dilate ? "maximum" : "minimum", side, side)};
  }

  Image reference_rows(const Image& in, Span out, StageRun&) const override {
    Image result = in.like(in.channels(), in.alpha());
    const std::vector<int> xs = border_table(in.width(), r_, border_);
    const std::vector<int> ys = row_table(in, out, r_, border_);
    if (rank_ == Rank::median) {
      for (int c = 0; c < in.color_channels(); ++c)
        for (int y = out.first; y < out.last; ++y)
          for (int x = 0; x < in.width(); ++x)
            result.row(c, y - in.y0())[x] = median_of(in, c, x, y - out.first, xs, ys, r_);
    } else {
      const Image rows = rows_pass(in, out.widened(r_, in.full_height()), xs);
      const bool dilate = rank_ == Rank::dilate;
      for (int c = 0; c < in.color_channels(); ++c)
        for (int y = out.first; y < out.last; ++y)
          for (int x = 0; x < in.width(); ++x) {
            float v = NAN;
            for (int dy = 0; dy <= 2 * r_; ++dy) {
              const int row = ys[y - out.first + dy];
              v = pick(dilate, v, row < 0 ? 0.0f : rows.row(c, row)[x]);
            }
            result.row(c, y - in.y0())[x] = v;
          }
    }
    copy_alpha(in, result);
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun&) const override {
    DeviceImage result = device.image_like(in, in.channels, in.alpha);
    const Defines defines = {{"RADIUS", std::to_string(r_)},
                             {"DILATE", rank_ == Rank::dilate ? "1" : "0"},
                             {"VEC", std::to_string(vector_width(device))}};
    if (rank_ == Rank::median) {
      launch_framed(device, "median", defines, in, result, out, r_, r_);
    } else {
      DeviceImage tmp = device.image_like(in, in.channels, false);
      launch_framed(device, "rank_rows", defines, in, tmp, out.widened(r_, in.full_height), r_, 0);
      launch_framed(device, "rank_cols", defines, tmp, result, out, 0, r_);
    }
    copy_alpha(device, in, result);
    return result;
  }

 private:
  // Samples a work-item of the `_inside` kernels takes: a CPU device's vector width (PoCL did
  // not vectorise the median's window across work-items), one on GPUs.
  static int vector_width(const Device& device) { return std::max(1, device.tuning().vec); }

  // Kernel `name` over the rows `rows` of `in` into `out`: the block whose windows lie inside
  // the image (reaching `rx` columns and `ry` rows) by `name`_inside, which has no border rule
  // and handles vector_width adjacent samples a work-item; the frame around it (bands above
  // and below, columns left and right) by `name` itself, as is a small image whole.
  void launch_framed(Device& device, const std::string& name, const Defines& defines,
                     const DeviceImage& in, DeviceImage& out, Span rows, int rx, int ry) const {
    const int vec = vector_width(device);
    const int planes = in.color_channels();
    // 64 x 4 work-items a group: groups of 64 left the H100 scheduling groups, not loading.
    const cl::NDRange& local = groups::tile;
    const auto grid = [&](int columns, Span span) {
      return cl::NDRange(columns, span.count(), planes);
    };
    // What a launch over `columns` x `span` moves at least: each sample read once, written once.
    const auto bytes = [&](int columns, Span span) {
      return 2 * std::size_t(columns) * span.count() * sizeof(float) * planes;
    };
    auto frame = device.kernel("rank.cl", name, defines);
    const auto edge = [&](Span span, int x0, int count) {
      if (span.count() <= 0 || count <= 0) return;
      set_args(frame, in.buffer, out.buffer, strip_args(in, span), int(border_), x0, count);
      device.launch(frame, name, grid(count, span), local, bytes(count, span));
    };
    const Span inside{std::max(rows.first, ry), std::min(rows.last, in.full_height - ry)};
    const int runs = (in.width - 2 * rx) / vec;
    const int columns = runs * vec;
    if (inside.count() <= 0 || runs <= 0) return edge(rows, 0, in.width);
    auto kernel = device.kernel("rank.cl", name + "_inside", defines);
    set_args(kernel, in.buffer, out.buffer, strip_args(in, inside), runs);
    device.launch(kernel, name + "_inside", grid(runs, inside), local, bytes(columns, inside));
    edge({rows.first, inside.first}, 0, in.width);
    edge({inside.last, rows.last}, 0, in.width);
    edge(inside, 0, rx);
    edge(inside, rx + columns, in.width - rx - columns);
  }

  // Each sample of the image rows `rows` (those held) becomes its row window's extreme.
  Image rows_pass(const Image& in, Span rows, const std::vector<int>& xs) const {
    Image tmp = in.like(in.channels(), false);
    const bool dilate = rank_ == Rank::dilate;
    for (int c = 0; c < in.color_channels(); ++c)
      for (int y = rows.first; y < rows.last; ++y) {
        const float* src = in.row(c, y - in.y0());
        float* dst = tmp.row(c, y - in.y0());
        for (int x = 0; x < in.width(); ++x) {
          float v = NAN;
          for (int dx = 0; dx <= 2 * r_; ++dx)
            v = pick(dilate, v, xs[x + dx] < 0 ? 0.0f : src[xs[x + dx]]);
          dst[x] = v;
        }
      }
    return tmp;
  }

  Rank rank_;
  int r_;
  Border border_;
};

FilterDef rank_filter(const char* name, Rank rank, const char* summary, int max_radius,
                      std::string note, const char* example) {
  return {.name = name,
          .summary = summary,
          .params = {{.name = "r",
                      .type = ParamType::Integer,
                      .fallback = "1",
                      .doc = "radius: a (2r+1)x(2r+1) window",
                      .min = 1,
                      .max = double(max_radius)},
                     border_param()},
          .notes = {std::move(note), "exact: the device equals the reference bit for bit"},
          .example = example,
          .make = [rank](const Args& args) {
            return std::make_unique<RankStage>(args.spec_text(), rank, args.integer("r"),
                                               parse_border(args.text("border")));
          }};
}

}  // namespace

FilterDef median_filter() {
  return rank_filter("median", Rank::median,
                     "the median of each sample's square window: removes salt-and-pepper noise "
                     "and isolated bright samples, keeps edges",
                     kMedianRadius, "r=1: 3x3, r=2: 5x5, r=3: 7x7 (cost grows with the window)",
                     "median:r=2");
}

FilterDef dilate_filter() {
  return rank_filter("dilate", Rank::dilate,
                     "the maximum of each sample's square window: bright areas grow", 64,
                     "rows pass then columns pass: cost grows with 2r+1", "dilate:r=2");
}

FilterDef erode_filter() {
  return rank_filter("erode", Rank::erode,
                     "the minimum of each sample's square window: dark areas grow", 64,
                     "rows pass then columns pass: cost grows with 2r+1", "erode:r=2");
}

}  // namespace halo
