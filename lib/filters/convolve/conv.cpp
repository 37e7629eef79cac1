// The convolution family: conv (any odd kernel), and the named kernels emboss, sharpen and edge,
// which are conv with a fixed matrix. CPU reference and device enqueue side by side; the device
// kernel is kernels/conv.cl.
#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "cl/tuning.hpp"
#include "filters/colour/convert.hpp"
#include "filters/convolve/separable.hpp"
#include "filters/filter.hpp"

namespace halo {

namespace {

constexpr int kMaxSide = 63;  // with a run of 1, a 32 x 8 tile plus a 62-pixel halo fits in 32 KiB

// A kernel ready to run: weights already divided by the scale and flipped if asked, so both
// paths compute exactly sum(w * in) + offset.
struct ConvKernel {
  int width = 3;
  int height = 3;
  std::vector<float> weights;
  std::vector<float> weights2;  // second kernel for gradient magnitude (edge:mode=sobel)
  float offset = 0.0f;
  bool gray = false;
  Border border = Border::clamp;
};

std::string format_matrix(const std::vector<double>& k, int width) {
  std::ostringstream out;
  out << "[";
  for (std::size_t i = 0; i < k.size(); ++i)
    out << (i == 0 ? "" : i % width == 0 ? "; " : " ") << k[i];
  out << "]";
  return out.str();
}

class ConvStage : public Stage {
 public:
  ConvStage(std::string spec, ConvKernel kernel, std::vector<std::string> details)
      : Stage(std::move(spec)), k_(std::move(kernel)), details_(std::move(details)) {}

  // w*h taps per sample.
  StageTraits traits() const override {
    const double taps = double(k_.width) * k_.height;
    return {.reach = k_.height / 2, .cost = {.reference_ns = 5 * taps, .device_ns = 0.55 * taps}};
  }
  std::string whole_image_reason(PixelType) const override {
    return border_whole_image_reason(k_.border);
  }
  std::vector<std::string> details(const StageRun&) const override { return details_; }

  Image reference_rows(const Image& input, Span out, StageRun&) const override {
    Image luminance;
    const Image& src = gray_if(k_.gray, input, luminance, spec());
    Image result = src.like(src.channels(), src.alpha());
    const int rx = k_.width / 2, ry = k_.height / 2;
    const std::vector<int> xs = border_table(src.width(), rx, k_.border);
    const std::vector<int> ys = row_table(src, out, ry, k_.border);
    for (int c = 0; c < src.color_channels(); ++c)
      for (int y = out.first; y < out.last; ++y) {
        float* dst = result.row(c, y - src.y0());
        for (int x = 0; x < src.width(); ++x) {
          const int i = y - out.first;
          float v = correlate(src, c, x, i, xs, ys, k_.weights);
          if (!k_.weights2.empty()) {
            const float v2 = correlate(src, c, x, i, xs, ys, k_.weights2);
            v = std::sqrt(v * v + v2 * v2);
          }
          dst[x] = v + k_.offset;
        }
      }
    copy_alpha(src, result);
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& input, Span out,
                           StageRun&) const override {
    const DeviceImage src = gray_if(k_.gray, device, input, spec());
    DeviceImage result = device.image_like(src, src.channels, src.alpha);
    const Tuning& t = device.tuning();
    Defines defines = {{"KW", std::to_string(k_.width)},
                       {"KH", std::to_string(k_.height)},
                       {"MAGNITUDE", k_.weights2.empty() ? "0" : "1"}};
    const std::size_t planes = src.color_channels();
    const std::size_t bytes = 2 * std::size_t(src.pitch) * out.count() * sizeof(float) * planes;
    cl::NDRange global, local;
    std::string name = "conv_tile";
    // CPUs (vec): vector rows, see kernels/conv.cl; GPUs where conv_vec is set: the same
    // kernel, whose loads of neighbouring work-items meet in L1, beats the local tile.
    const bool vector_kernels = device.profile().vector_kernels;
    if (const int vec = vector_kernels ? t.vec : t.conv_vec; vec > 0) {
      name = "conv_vec";
      defines.push_back(knob_define(&Tuning::vec, vec));  // conv_vec on GPUs
      defines.push_back(knob_define(t, &Tuning::vec_conv));
      defines.push_back({"CONV_SLIDE", vector_kernels ? "0" : "1"});
      global = cl::NDRange(ceil_div(src.width, vec), ceil_div(out.count(), t.vec_conv), planes);
      local = cl::NDRange(t.vec_w, t.vec_h, 1);
    } else {
      const int run = conv_run(t, device.info().local_budget());
      for (const auto& knob : {knob_define(t, &Tuning::conv_w), knob_define(t, &Tuning::conv_h),
                               knob_define(&Tuning::conv_run, run)})
        defines.push_back(knob);
      global = cl::NDRange(src.width, ceil_div(out.count(), t.conv_h * run) * t.conv_h, planes);
      local = cl::NDRange(t.conv_w, t.conv_h, 1);
    }
    auto kernel = device.kernel("conv.cl", name, defines);
    const auto weights = device.constants(k_.weights, "conv weights");
    const auto weights2 = device.constants(k_.weights2, "conv weights");
    set_args(kernel, src.buffer, result.buffer, strip_args(src, out), int(k_.border), weights,
             weights2, k_.offset);
    device.launch(kernel, name, global, local, bytes);
    copy_alpha(device, src, result);
    return result;
  }

 private:
  // The longest run of outputs per work-item whose tile still fits in local memory.
  int conv_run(const Tuning& t, std::uint64_t local_budget) const {
    int run = t.conv_run;
    while (run > 1 &&
           4ull * (t.conv_w + k_.width - 1) * (t.conv_h * run + k_.height - 1) > local_budget)
      run /= 2;
    return run;
  }

  // Rows top to bottom, each left to right: the order kernels/conv.cl sums in. Output row i of
  // the rows the tables were made for.
  float correlate(const Image& src, int c, int x, int y, const std::vector<int>& xs,
                  const std::vector<int>& ys, const std::vector<float>& w) const {
    float sum = 0.0f;
    for (int i = 0; i < k_.height; ++i) {
      const int yy = ys[y + i];
      const float* row = yy < 0 ? nullptr : src.row(c, yy);
      for (int j = 0; j < k_.width; ++j) {
        const int xx = xs[x + j];
        const float v = (row && xx >= 0) ? row[xx] : 0.0f;
        sum = std::fma(w[i * k_.width + j], v, sum);
      }
    }
    return sum;
  }

  ConvKernel k_;
  std::vector<std::string> details_;
};

Param offset_param(const char* fallback) {
  return {.name = "offset",
          .type = ParamType::Number,
          .fallback = fallback,
          .doc = "added after scaling"};
}

// Builds a stage from a matrix as written and the common keys.
std::unique_ptr<Stage> make_conv(const Args& args, const std::vector<double>& matrix, int width,
                                 int height, double scale, bool flip,
                                 const std::vector<double>& matrix2 = {}) {
  ConvKernel k;
  k.width = width;
  k.height = height;
  auto m = matrix;
  if (flip) std::reverse(m.begin(), m.end());
  k.weights = scaled_weights(m, scale);
  if (!matrix2.empty()) k.weights2 = scaled_weights(matrix2, scale);
  k.offset = float(args.number("offset"));
  k.gray = args.flag("gray");
  k.border = parse_border(args.text("border"));
  std::vector<std::string> details = {std::to_string(width) + "x" + std::to_string(height) +
                                      " kernel " + format_matrix(m, width) + " / " +
                                      std::to_string(scale) + ", one 2D pass"};
  if (!matrix2.empty()) details.push_back("magnitude with " + format_matrix(matrix2, width));
  return std::make_unique<ConvStage>(args.spec_text(), std::move(k), std::move(details));
}

// Splits a kernel into column x row vectors when it has rank 1 (m[i][j] == cols[i] * rows[j]
// to 1e-7 of its largest entry), the way a user's blur or gradient kernel usually is.
struct RankOneSplit {
  std::vector<double> rows, cols;
};

std::optional<RankOneSplit> split_rank_one(const std::vector<double>& m, int width, int height) {
  std::size_t pivot = 0;
  for (std::size_t i = 0; i < m.size(); ++i)
    if (std::fabs(m[i]) > std::fabs(m[pivot])) pivot = i;
  const double peak = std::fabs(m[pivot]);
  if (peak == 0) return std::nullopt;
  const int p = int(pivot) / width, q = int(pivot) % width;
  RankOneSplit split;
  for (int j = 0; j < width; ++j) split.rows.push_back(m[p * width + j] / m[pivot]);
  for (int i = 0; i < height; ++i) split.cols.push_back(m[i * width + q]);
  for (int i = 0; i < height; ++i)
    for (int j = 0; j < width; ++j)
      if (std::fabs(m[i * width + j] - split.cols[i] * split.rows[j]) > 1e-7 * peak)
        return std::nullopt;
  return split;
}

const std::vector<double> kEmboss = {2, 0, 0, 0, -1, 0, 0, 0, -1};
const std::vector<double> kLaplace = {-1, -1, -1, -1, 8, -1, -1, -1, -1};
const std::vector<double> kSobelY = {-1, -2, -1, 0, 0, 0, 1, 2, 1};
const std::vector<double> kSobelX = {-1, 0, 1, -2, 0, 2, -1, 0, 1};

std::vector<double> sharpen_matrix(double k) {
  return {-k, -k, -k, -k, 8 * k + 1, -k, -k, -k, -k};
}

std::unique_ptr<Stage> make_rank_one(const Args& args, const RankOneSplit& split, double scale) {
  SeparableKernel k;
  k.filter = "conv";
  for (double v : split.rows) k.rows.push_back(float(v));
  for (double v : split.cols) k.cols.push_back(float(v / scale));
  k.offset = float(args.number("offset"));
  k.gray = args.flag("gray");
  k.border = parse_border(args.text("border"));
  std::vector<std::string> details = {"rank 1: separable, rows " + format_weights(k.rows) +
                                      ", then columns " + format_weights(k.cols)};
  return make_separable_stage(args.spec_text(), std::move(k), std::move(details));
}

}  // namespace

FilterDef conv_filter() {
  return {
      .name = "conv",
      .summary = "correlation with any odd-sized kernel: sum(k * in) / scale + offset",
      .params = {{.name = "k", .type = ParamType::Numbers, .doc = "kernel values, row-major"},
                 {.name = "w",
                  .type = ParamType::Integer,
                  .fallback = "auto",
                  .doc = "kernel width (auto: square kernel)",
                  .min = 1,
                  .max = kMaxSide,
                  .allow_auto = true},
                 {.name = "h",
                  .type = ParamType::Integer,
                  .fallback = "auto",
                  .doc = "kernel height (auto: square kernel)",
                  .min = 1,
                  .max = kMaxSide,
                  .allow_auto = true},
                 {.name = "scale",
                  .type = ParamType::Number,
                  .fallback = "auto",
                  .doc = "divisor (auto: sum of k, or 1 when it is 0)",
                  .allow_auto = true},
                 offset_param("0"),
                 gray_param("0"),
                 {.name = "flip",
                  .type = ParamType::Flag,
                  .fallback = "0",
                  .doc = "flip the kernel: true convolution instead of correlation"},
                 {.name = "separable",
                  .type = ParamType::Choice,
                  .fallback = "auto",
                  .doc = "auto: run a rank-1 kernel as rows then columns; off: always one 2D pass",
                  .choices = {"auto", "off"}},
                 border_param()},
      .notes = {"sizes 1x1 to 63x63 (odd); cost grows with w*h per pixel, or w+h when the "
                "kernel has rank 1 (see -v)"},
      .example = "conv:k=0,-1,0,-1,5,-1,0,-1,0",
      .make = [](const Args& args) {
        const auto k = args.numbers("k");
        const int count = int(k.size());
        int w = 0, h = 0;
        if (args.is_auto("w") != args.is_auto("h"))
          args.fail(args.is_auto("w") ? "h" : "w", "give both w and h, or neither");
        if (args.is_auto("w")) {
          w = h = int(std::lround(std::sqrt(double(count))));
          if (w * h != count)
            args.fail("k", std::to_string(count) +
                               " values do not form a square kernel (give w= and h=)");
        } else {
          w = args.integer("w");
          h = args.integer("h");
          if (w * h != count)
            args.fail("k", std::to_string(count) + " values, but w*h is " + std::to_string(w * h));
        }
        if (w % 2 == 0 || h % 2 == 0)
          args.fail("k", "a " + std::to_string(w) + "x" + std::to_string(h) +
                             " kernel has no centre; sizes must be odd (3x3, 5x5, ... 63x63)");
        if (w > kMaxSide || h > kMaxSide)
          args.fail("k", "kernels up to 63x63 are supported, got " + std::to_string(w) + "x" +
                             std::to_string(h));
        const double scale = args.is_auto("scale") ? sum_or_one(k) : args.number("scale");
        if (scale == 0) args.fail("scale", "must not be 0");
        auto m = k;
        if (args.flag("flip")) std::reverse(m.begin(), m.end());
        if (args.text("separable") == "auto")
          if (const auto split = split_rank_one(m, w, h)) return make_rank_one(args, *split, scale);
        return make_conv(args, k, w, h, scale, args.flag("flip"));
      }};
}

FilterDef emboss_filter() {
  return {.name = "emboss",
          .summary = "relief effect on luminance, mid-grey where flat",
          .params = {offset_param("0.5"), gray_param("1"), border_param()},
          .notes = {"kernel " + format_matrix(kEmboss, 3) + ", scale 1"},
          .example = "emboss",
          .make = [](const Args& args) { return make_conv(args, kEmboss, 3, 3, 1.0, false); }};
}

FilterDef sharpen_filter() {
  return {.name = "sharpen",
          .summary = "unsharp 3x3 kernel: centre 8k+1, neighbours -k",
          .params = {{.name = "k",
                      .type = ParamType::Number,
                      .fallback = "1",
                      .doc = "strength",
                      .min = 0,
                      .max = 100},
                     gray_param("0"),
                     offset_param("0"),
                     border_param()},
          .notes = {"kernel at k=1 " + format_matrix(sharpen_matrix(1), 3) + ", scale 1"},
          .example = "sharpen:k=0.5",
          .make = [](const Args& args) {
            return make_conv(args, sharpen_matrix(args.number("k")), 3, 3, 1.0, false);
          }};
}

FilterDef edge_filter() {
  return {
      .name = "edge",
      .summary = "edge detection: Laplacian, Sobel gradients or Sobel magnitude",
      .params = {{.name = "mode",
                  .type = ParamType::Choice,
                  .fallback = "laplace",
                  .doc = "laplace, horizontal (d/dy), vertical (d/dx), sobel (magnitude)",
                  .choices = {"laplace", "horizontal", "vertical", "sobel"}},
                 gray_param("0"),
                 offset_param("0"),
                 border_param()},
      .notes = {"laplace " + format_matrix(kLaplace, 3), "horizontal " + format_matrix(kSobelY, 3),
                "vertical " + format_matrix(kSobelX, 3), "sobel sqrt(horizontal^2 + vertical^2)"},
      .example = "edge:mode=sobel:gray=1",
      .make = [](const Args& args) {
        const auto& mode = args.text("mode");
        if (mode == "laplace") return make_conv(args, kLaplace, 3, 3, 1.0, false);
        if (mode == "horizontal") return make_conv(args, kSobelY, 3, 3, 1.0, false);
        if (mode == "vertical") return make_conv(args, kSobelX, 3, 3, 1.0, false);
        return make_conv(args, kSobelY, 3, 3, 1.0, false, kSobelX);
      }};
}

}  // namespace halo
