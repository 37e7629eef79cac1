// box:r=R: mean over a (2R+1)^2 square, as a rows pass and a columns pass. Small radii sum
// 2R+1 equal float weights through the separable kernels (box_rows/box_cols in
// kernels/separable.cl); from kRunningRadius up, running sums in double make the cost
// independent of the radius (box_rows/box_cols in kernels/box.cl). The choice depends only on
// R, so the reference always follows the same arithmetic as the device.
#include "cl/tuning.hpp"
#include "filters/convert.hpp"
#include "filters/separable.hpp"

namespace halo {

namespace {

// Measured on an H200 (7680x4320 float): equal weights 0.18 ms at r=4, 1.10 ms at r=32;
// running sums 0.51 ms at r=4, 0.63 ms at r=32.
constexpr int kRunningRadius = 17;

SeparableKernel equal_weights(int r, bool gray, Border border) {
  SeparableKernel k{.filter = "box", .gray = gray, .border = border};
  k.rows = k.cols = std::vector<float>(2 * r + 1, float(1.0 / (2 * r + 1)));
  return k;
}

// One line of running means: out[i] = sum(in[i-r .. i+r]) / (2r+1), border applied by `at`.
template <typename At>
void running_mean(int n, int r, At at, float* out) {
  double sum = 0;
  for (int k = -r; k <= r; ++k) sum += at(k);
  out[0] = float(sum / (2 * r + 1));
  for (int i = 1; i < n; ++i) {
    sum += at(i + r) - at(i - r - 1);
    out[i] = float(sum / (2 * r + 1));
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

  std::vector<std::string> details() const override {
    return {"radius " + std::to_string(r_) + ": running sums in double, rows then columns"};
  }

  Image reference(const Image& input) const override {
    const Image src = gray_if(gray_, input, spec());
    const int w = src.width(), h = src.height();
    Image tmp(w, h, 1), out(w, h, src.channels(), src.alpha());
    out.set_source(src.source());
    std::vector<float> column_in(h), column_out(h);
    for (int c = 0; c < src.color_channels(); ++c) {
      for (int y = 0; y < h; ++y) {
        const float* in = src.row(c, y);
        running_mean(
            w, r_, [&](int x) { return sample(in, x, w, 1); }, tmp.row(0, y));
      }
      for (int x = 0; x < w; ++x) {
        for (int y = 0; y < h; ++y) column_in[y] = tmp.row(0, y)[x];
        running_mean(
            h, r_, [&](int y) { return sample(column_in.data(), y, h, 1); }, column_out.data());
        for (int y = 0; y < h; ++y) out.row(c, y)[x] = column_out[y];
      }
    }
    copy_alpha(src, out);
    return out;
  }

  DeviceImage enqueue(Device& device, const DeviceImage& input) const override {
    if (!device.info().fp64) return fallback_->enqueue(device, input);
    const DeviceImage src = gray_if(gray_, device, input, spec());
    const Tuning t = tuning_for(device.info());
    const int planes = src.color_channels();
    const std::size_t bytes = 2 * src.plane_size() * sizeof(float) * planes;
    int rows = t.box_rows;
    while (rows > 1 && 4ull * rows * ((t.box_seg + 2 * r_) | 1) > device.info().local_memory - 1024)
      rows /= 2;
    const Defines defines = {{"RADIUS", std::to_string(r_)},
                             {"BOX_SEG", std::to_string(t.box_seg)},
                             {"BOX_ROWS", std::to_string(rows)}};
    DeviceImage tmp = device.image(src.width, src.height, planes, false);
    DeviceImage out = device.image(src.width, src.height, src.channels, src.alpha);
    out.source = src.source;

    auto rows_kernel = device.kernel("box.cl", "box_rows", defines);
    set_args(rows_kernel, src.buffer, tmp.buffer, src.width, src.height, src.pitch, int(border_));
    device.launch(rows_kernel, "box_rows",
                  cl::NDRange(ceil_div(src.width, t.box_seg), src.height, planes),
                  cl::NDRange(1, rows, 1), bytes);
    auto cols_kernel = device.kernel("box.cl", "box_cols", defines);
    set_args(cols_kernel, tmp.buffer, out.buffer, src.width, src.height, src.pitch, int(border_));
    device.launch(cols_kernel, "box_cols",
                  cl::NDRange(src.width, ceil_div(src.height, t.box_seg), planes),
                  cl::NDRange(64, 1, 1), bytes);
    copy_alpha(device, src, out);
    return out;
  }

 private:
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
