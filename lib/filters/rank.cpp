// Rank filters: `median` (the middle of a square window's sorted samples: salt-and-pepper noise,
// fireflies) and the morphology pair `dilate` / `erode` (the window's maximum / minimum, as a
// rows pass then a columns pass). No arithmetic, so the device equals the reference bit for
// bit: both gather the window in the same order and pick with the same comparisons
// (kernels/rank.cl).
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "filters/filter.hpp"
#include "filters/rank.hpp"

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

  int reach() const override { return r_; }
  std::string whole_image_reason(PixelType) const override {
    return border_whole_image_reason(border_);
  }
  // The median sorts (2r+1)^2 samples; morphology reads 2r+1 a pass.
  StageCost cost() const override {
    const double side = 2 * r_ + 1;
    if (rank_ == Rank::median) return {.reference_ns = side * side * 6, .device_ns = side * side};
    return {.reference_ns = 2 * side * 2, .device_ns = 2 * side * 0.3};
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
    const int planes = in.color_channels();
    DeviceImage result = device.image_like(in, in.channels, in.alpha);
    const std::size_t bytes = 2 * std::size_t(in.pitch) * out.count() * sizeof(float) * planes;
    // 64 x 4 work-items a group: groups of 64 left the H100 scheduling groups, not loading.
    const cl::NDRange local(64, 4, 1);
    if (rank_ == Rank::median) {
      // The windows inside the image by median_inside (no border rule, so a CPU device
      // vectorises it), the frame around them by median: bands above and below, columns left
      // and right; a small image wholly by median.
      const Defines radius = {{"RADIUS", std::to_string(r_)}};
      const Span inside{std::max(out.first, r_), std::min(out.last, in.full_height - r_)};
      const int columns = in.width - 2 * r_;
      auto frame = device.kernel("rank.cl", "median", radius);
      const auto edge = [&](Span rows, int x0, int count) {
        if (rows.count() <= 0 || count <= 0) return;
        set_args(frame, in.buffer, result.buffer, in.width, in.pitch, strip_rows(in, rows),
                 int(border_), x0, count);
        device.launch(frame, "median",
                      cl::NDRange(ceil_div(count, 64) * 64, ceil_div(rows.count(), 4) * 4, planes),
                      local);
      };
      if (inside.count() <= 0 || columns <= 0) {
        edge(out, 0, in.width);
      } else {
        auto kernel = device.kernel("rank.cl", "median_inside", radius);
        set_args(kernel, in.buffer, result.buffer, in.pitch, strip_rows(in, inside), columns);
        device.launch(
            kernel, "median_inside",
            cl::NDRange(ceil_div(columns, 64) * 64, ceil_div(inside.count(), 4) * 4, planes), local,
            bytes);
        edge({out.first, inside.first}, 0, in.width);
        edge({inside.last, out.last}, 0, in.width);
        edge(inside, 0, r_);
        edge(inside, in.width - r_, r_);
      }
    } else {
      const Defines defines = {{"DILATE", rank_ == Rank::dilate ? "1" : "0"}};
      const Span rows = out.widened(r_, in.full_height);
      DeviceImage tmp = device.image_like(in, in.channels, false);
      auto rows_kernel = device.kernel("rank.cl", "rank_rows", defines);
      set_args(rows_kernel, in.buffer, tmp.buffer, in.width, in.pitch, strip_rows(in, rows), r_,
               int(border_));
      device.launch(rows_kernel, "rank_rows",
                    cl::NDRange(ceil_div(in.width, 64) * 64, ceil_div(rows.count(), 4) * 4, planes),
                    local, bytes);
      auto cols_kernel = device.kernel("rank.cl", "rank_cols", defines);
      set_args(cols_kernel, tmp.buffer, result.buffer, in.width, in.pitch, strip_rows(in, out), r_,
               int(border_));
      device.launch(cols_kernel, "rank_cols",
                    cl::NDRange(ceil_div(in.width, 64) * 64, ceil_div(out.count(), 4) * 4, planes),
                    local, bytes);
    }
    copy_alpha(device, in, result);
    return result;
  }

 private:
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
