// unsharp:sigma=S[:r=R]:amount=A:threshold=T: the unsharp mask of photo editors. A Gaussian
// blur (gaussian.cpp's weights, separable.cl's kernels), then each colour sample moves away
// from its blurred value: out = v + amount * (v - blur) where |v - blur| > threshold, else v.
// Alpha passes through. Device side of the second step: kernels/unsharp.cl.
#include <cmath>

#include "cl/groups.hpp"
#include "filters/convolve/separable.hpp"

namespace halo {

namespace {

class UnsharpStage : public Stage {
 public:
  UnsharpStage(std::string spec, std::unique_ptr<Stage> blur, float amount, float threshold,
               std::vector<std::string> details)
      : Stage(std::move(spec)),
        blur_(std::move(blur)),
        amount_(amount),
        threshold_(threshold),
        details_(std::move(details)) {}

  StageTraits traits() const override {
    const StageCost blur = blur_->traits().cost;
    return {.reach = blur_->reach(),
            .cost = {.reference_ns = blur.reference_ns + 5, .device_ns = blur.device_ns + 1}};
  }

  std::string whole_image_reason(PixelType source) const override {
    return blur_->whole_image_reason(source);
  }

  std::vector<std::string> details(const StageRun&) const override { return details_; }

  Image reference_rows(const Image& in, Span out, StageRun& run) const override {
    const Image blurred = blur_->reference_rows(in, out, run);
    Image result = blurred;  // in's rows and layout; alpha already copied by the blur
    for (int c = 0; c < in.color_channels(); ++c)
      for (int y = out.first; y < out.last; ++y) {
        const float* v = in.row(c, y - in.y0());
        const float* b = blurred.row(c, y - in.y0());
        float* o = result.row(c, y - in.y0());
        for (int x = 0; x < in.width(); ++x) o[x] = sharpen(v[x], b[x]);
      }
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun& run) const override {
    DeviceImage kept = in;  // read again below: the blur must not write its result there
    kept.scratch = false;
    DeviceImage result = blur_->enqueue_rows(device, kept, out, run);
    auto kernel = device.kernel("unsharp.cl", "unsharp", {});
    // In place over the blurred image: each work-item reads its own sample first.
    set_args(kernel, in.buffer, result.buffer, result.buffer, strip_args(in, out), amount_,
             threshold_);
    const std::size_t bytes = 3 * std::size_t(in.width) * out.count() * in.color_channels() * 4;
    device.launch(kernel, "unsharp", cl::NDRange(in.width, out.count(), in.color_channels()),
                  groups::row, bytes);
    return result;
  }

 private:
  // The kernel's arithmetic, operation for operation.
  float sharpen(float v, float b) const {
    const float d = v - b;
    return std::fabs(d) > threshold_ ? v + amount_ * d : v;
  }

  std::unique_ptr<Stage> blur_;
  float amount_, threshold_;
  std::vector<std::string> details_;
};

}  // namespace

FilterDef unsharp_filter() {
  return {.name = "unsharp",
          .summary =
              "unsharp mask: v + amount * (v - gaussian(v)) where the difference exceeds "
              "threshold",
          .params = {{.name = "sigma",
                      .type = ParamType::Number,
                      .fallback = "1",
                      .doc = "standard deviation of the blur, in pixels",
                      .min = 0.01,
                      .max = 170},
                     {.name = "r",
                      .type = ParamType::Integer,
                      .fallback = "auto",
                      .doc = "blur radius (auto: ceil(3 sigma))",
                      .min = 1,
                      .max = 512,
                      .allow_auto = true},
                     {.name = "amount",
                      .type = ParamType::Number,
                      .fallback = "1",
                      .doc = "strength: 0 leaves the image, 1 doubles the detail",
                      .min = 0,
                      .max = 100},
                     {.name = "threshold",
                      .type = ParamType::Number,
                      .fallback = "0",
                      .doc = "leave samples whose detail |v - blur| is at most this (in sample "
                             "units: 0..1 for 8/16-bit images), so flat noise is not sharpened",
                      .min = 0,
                      .max = 1e30},
                     border_param()},
          .notes = {"the Gaussian blur's cost (2r+1 taps a pass) plus one pass over the image",
                    "ImageMagick's -unsharp 0x1+1+0 by default, with the point-sampled Gaussian "
                    "of its -gaussian-blur (its -unsharp blurs with -blur's area-sampled kernel: "
                    "up to 0.5% apart at edges); GIMP's amount 0.5 is unsharp:amount=0.5"},
          .example = "unsharp:sigma=2:amount=0.8:threshold=0.02",
          .make = [](const Args& args) {
            const double sigma = args.number("sigma");
            const int r = args.is_auto("r") ? int(std::ceil(3 * sigma)) : args.integer("r");
            if (r > 512) args.fail("sigma", "needs radius " + std::to_string(r) + " > 512");
            SeparableKernel k;
            k.filter = "gaussian";
            k.rows = k.cols = gaussian_weights(std::max(r, 1), sigma);
            k.border = parse_border(args.text("border"));
            const float amount = float(args.number("amount"));
            const float threshold = float(args.number("threshold"));
            std::vector<std::string> details = {
                "Gaussian radius " + std::to_string(r) + ", sigma " + std::to_string(sigma) +
                ", then v + " + std::to_string(amount) + " * (v - blur) where |v - blur| > " +
                std::to_string(threshold)};
            auto blur = make_separable_stage(args.spec_text(), std::move(k), {});
            return std::make_unique<UnsharpStage>(args.spec_text(), std::move(blur), amount,
                                                  threshold, std::move(details));
          }};
}

}  // namespace halo
