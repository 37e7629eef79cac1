// box:r=R: mean over a (2R+1)^2 square, as a rows pass and a columns pass. Small radii sum
// 2R+1 equal float weights through the separable kernels (box_rows/box_cols in
// kernels/separable.cl); from kRunningRadius up, running sums in double make the cost
// independent of the radius (box_rows/box_cols in kernels/box.cl). The choice depends only on
// R, so the reference always follows the same arithmetic as the device. GPUs run the two
// running-sum passes as one kernel (box_walk) where its local memory fits.
#include <fmt/format.h>

#include <cmath>

#include "cl/groups.hpp"
#include "cl/tuning.hpp"
#include "filters/colour/convert.hpp"
#include "filters/convolve/separable.hpp"

namespace halo {

namespace {

// Measured on an H200 (7680x4320 float): equal weights 0.18 ms at r=4, 1.10 ms at r=32;
// running sums 0.51 ms at r=4, 0.63 ms at r=32 (H100 2026-11-23, the mean as a multiplication
// instead of a double division: 0.65 -> 0.56 ms at r=32).
constexpr int kRunningRadius = 17;

SeparableKernel equal_weights(int r, bool gray, Border border) {
  SeparableKernel k{.filter = "box", .gray = gray, .border = border};
  k.rows = k.cols = std::vector<float>(2 * r + 1, float(1.0 / (2 * r + 1)));
  return k;
}

// The sum of in[i-r .. i+r], in order.
template <typename At>
double window_sum(int i, int r, At at) {
  double sum = 0;
  for (int k = -r; k <= r; ++k) sum += at(i + k);
  return sum;
}

// Running means along a line: out[k] = sum(in[i-r .. i+r]) / (2r+1) for i = first + k, k <
// count; `at` applies the border rule.
// The mean is the sum times the double 1 / (2r+1), as kernels/box.cl computes it (a
// multiplication: a correctly rounded double division is long on GPUs).
// A NaN or infinity leaves a running sum non-finite after it has left the window; while the
// sum is non-finite the window is summed afresh, so a non-finite sample reaches exactly the
// outputs whose window holds it (the kernels do the same).
template <typename At>
void running_mean(int first, int count, int r, At at, float* out) {
  const double inv = 1.0 / (2 * r + 1);
  double sum = window_sum(first, r, at);
  out[0] = float(sum * inv);
  for (int k = 1; k < count; ++k) {
    const int i = first + k;
    sum += at(i + r) - at(i - r - 1);
    if (!std::isfinite(sum)) sum = window_sum(i, r, at);
    out[k] = float(sum * inv);
  }
}

class BoxStage : public Stage {
 public:
  BoxStage(std::string spec, int r, bool gray, Border border)
      : Stage(std::move(spec)),
        r_(r),
        gray_(gray),
        border_(border),
        // Devices without double arithmetic run equal weights, within 1e-5 of the reference.
        fallback_(make_separable_stage(this->spec(), equal_weights(r, gray, border), {})) {}

  // The reference's running sums cost the same at every radius; the kernels run 2r+1 equal
  // weights a pass up to r = 16, running sums above.
  StageTraits traits() const override {
    return {.reach = r_,
            .cost = {.reference_ns = 65, .device_ns = r_ <= 16 ? 7 + 0.26 * (2 * r_ + 1) : 12}};
  }
  std::string whole_image_reason(PixelType) const override {
    return border_whole_image_reason(border_);
  }
  std::vector<std::string> details(const StageRun&) const override {
    return {"radius " + std::to_string(r_) + ": running sums in double, rows then columns"};
  }

  Image reference_rows(const Image& input, Span out, StageRun&) const override {
    Image luminance;
    const Image& src = gray_if(gray_, input, luminance, spec());
    const int w = src.width(), h = src.full_height(), y0 = src.y0();
    const Span rows = out.widened(r_, h);
    Image tmp = src.like(1, false), result = src.like(src.channels(), src.alpha());
    std::vector<float> column(out.count());
    for (int c = 0; c < src.color_channels(); ++c) {
      for (int y = rows.first; y < rows.last; ++y) {
        const float* in = src.row(c, y - y0);
        running_mean(
            0, w, r_, [&](int x) { return sample(in, x, w, 1); }, tmp.row(0, y - y0));
      }
      for (int x = 0; x < w; ++x) {
        running_mean(
            out.first, out.count(), r_,
            [&](int y) {
              const int i = border_index(y, h, border_);
              return i < 0 ? 0.0 : double(tmp.row(0, i - y0)[x]);
            },
            column.data());
        for (int k = 0; k < out.count(); ++k) result.row(c, out.first + k - y0)[x] = column[k];
      }
    }
    copy_alpha(src, result);
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& input, Span out,
                           StageRun& run) const override {
    if (!device.info().fp64) return fallback_->enqueue_rows(device, input, out, run);
    const DeviceImage src = gray_if(gray_, device, input, spec());
    const Tuning& t = device.tuning();
    if (const int w = walk_width(t, device.info().local_budget())) {
      DeviceImage result = device.image_like(src, src.channels, src.alpha);
      enqueue_walk(device, t, w, src, result, out);
      copy_alpha(device, src, result);
      return result;
    }
    const int planes = src.color_channels();
    const Span rows_pass = out.widened(r_, src.full_height);
    int rows = t.box_rows;
    while (rows > 1 && 4ull * rows * ((t.box_seg + 2 * r_) | 1) > device.info().local_budget())
      rows /= 2;
    const Defines defines = {{"RADIUS", std::to_string(r_)},
                             knob_define(t, &Tuning::box_seg),
                             knob_define(&Tuning::box_rows, rows),
                             {"BOX_INV", fmt::format("{:a}", 1.0 / (2 * r_ + 1))}};
    DeviceImage tmp = device.image_like(src, planes, false);
    DeviceImage result = result_for(device, src);  // box_rows is done with src first
    const auto bytes = [&](Span s) {
      return 2 * std::size_t(src.pitch) * s.count() * sizeof(float) * planes;
    };

    auto rows_kernel = device.kernel("box.cl", "box_rows", defines);
    set_args(rows_kernel, src.buffer, tmp.buffer, strip_args(src, rows_pass), int(border_));
    device.launch(rows_kernel, "box_rows",
                  cl::NDRange(ceil_div(src.width, t.box_seg), rows_pass.count(), planes),
                  cl::NDRange(1, rows, 1), bytes(rows_pass));
    auto cols_kernel = device.kernel("box.cl", "box_cols", defines);
    set_args(cols_kernel, tmp.buffer, result.buffer, strip_args(src, out), int(border_));
    device.launch(cols_kernel, "box_cols",
                  cl::NDRange(src.width, ceil_div(out.count(), t.box_seg), planes), groups::row,
                  bytes(out));
    copy_alpha(device, src, result);
    return result;
  }

 private:
  // box_walk's local memory at w columns: the prefix sums (the tile shares them, and is
  // never larger), the chunk totals and the ring of rows-pass values (kernels/box.cl).
  std::uint64_t walk_bytes(int w, int steps) const {
    const std::uint64_t span = w + 2 * r_, g = w / steps;
    return 8 * steps * (span + 1) + 8 * steps * g + 4 * std::uint64_t(2 * r_ + 1) * w;
  }

  // The columns a box_walk work-group owns: box_walk, halved until its local memory fits;
  // 0 where the device does not walk (box_walk 0) or nothing fits.
  int walk_width(const Tuning& t, std::uint64_t local_budget) const {
    for (int w = t.box_walk; w >= t.box_walk_steps && w % t.box_walk_steps == 0; w /= 2)
      if (walk_bytes(w, t.box_walk_steps) <= local_budget) return w;
    return 0;
  }

  void enqueue_walk(Device& device, const Tuning& t, int w, const DeviceImage& src,
                    DeviceImage& result, Span out) const {
    const int planes = src.color_channels();
    const Defines defines = {{"RADIUS", std::to_string(r_)},
                             knob_define(&Tuning::box_walk, w),
                             knob_define(t, &Tuning::box_walk_steps),
                             {"BOX_INV", fmt::format("{:a}", 1.0 / (2 * r_ + 1))}};
    auto kernel = device.kernel("box.cl", "box_walk", defines);
    set_args(kernel, src.buffer, result.buffer, strip_args(src, out), int(border_),
             t.box_walk_band);
    device.launch(kernel, "box_walk",
                  cl::NDRange(std::size_t(ceil_div(src.width, w)) * w,
                              ceil_div(out.count(), t.box_walk_band), planes),
                  cl::NDRange(w, 1, 1),
                  2 * std::size_t(src.pitch) * out.count() * sizeof(float) * planes);
  }

  // in[i] with the border rule applied, as double.
  double sample(const float* in, int i, int n, int stride) const {
    const int j = border_index(i, n, border_);
    return j < 0 ? 0.0 : double(in[j * stride]);
  }

  int r_;
  bool gray_;
  Border border_;
  std::unique_ptr<Stage> fallback_;
};

}  // namespace

FilterDef box_filter() {
  return {.name = "box",
          .summary = "mean over a (2r+1) x (2r+1) square",
          .params = {{.name = "r",
                      .type = ParamType::Integer,
                      .fallback = "1",
                      .doc = "radius in pixels",
                      .min = 1,
                      .max = 512},
                     gray_param(),
                     border_param()},
          .notes = {"r <= 16: 2r+1 equal weights per pass, cost grows with r; r >= 17: running "
                    "sums in double, the same cost for every radius"},
          .example = "box:r=4",
          .make = [](const Args& args) -> std::unique_ptr<Stage> {
            const int r = args.integer("r");
            const bool gray = args.flag("gray");
            const Border border = parse_border(args.text("border"));
            if (r < kRunningRadius)
              return make_separable_stage(args.spec_text(), equal_weights(r, gray, border),
                                          {"radius " + std::to_string(r) + ", weight 1/" +
                                           std::to_string(2 * r + 1) + " per tap"});
            return std::make_unique<BoxStage>(args.spec_text(), r, gray, border);
          }};
}

}  // namespace halo
