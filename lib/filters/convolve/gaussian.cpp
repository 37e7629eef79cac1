// gaussian:r=R[:sigma=S]: separable Gaussian blur with weights normalised to sum 1.
// Device side: gaussian_rows / gaussian_cols in kernels/separable.cl.
#include <cmath>

#include "filters/convolve/separable.hpp"

namespace halo {

// w_i = exp(-(i - r)^2 / (2 sigma^2)) / sum, computed in double and rounded once to float.
std::vector<float> gaussian_weights(int r, double sigma) {
  std::vector<double> taps;
  double sum = 0;
  for (int i = -r; i <= r; ++i) {
    taps.push_back(std::exp(-double(i) * i / (2 * sigma * sigma)));
    sum += taps.back();
  }
  std::vector<float> weights;
  for (double t : taps) weights.push_back(float(t / sum));
  return weights;
}

FilterDef gaussian_filter() {
  return {.name = "gaussian",
          .summary = "Gaussian blur, separable (rows then columns)",
          .params = {{.name = "r",
                      .type = ParamType::Integer,
                      .fallback = "auto",
                      .doc = "radius in pixels (auto: ceil(3 sigma))",
                      .min = 1,
                      .max = 512,
                      .allow_auto = true},
                     {.name = "sigma",
                      .type = ParamType::Number,
                      .fallback = "auto",
                      .doc = "standard deviation (auto: r/3)",
                      .min = 0.01,
                      .max = 512,
                      .allow_auto = true},
                     gray_param(),
                     border_param()},
          .notes = {"cost grows linearly with r: 2r+1 taps per pass from local memory; radii whose "
                    "column tile exceeds local memory read taps from global memory"},
          .example = "gaussian:r=8",
          .make = [](const Args& args) {
            if (args.is_auto("r") && args.is_auto("sigma")) args.fail("r", "give r, sigma or both");
            const double sigma =
                args.is_auto("sigma") ? args.integer("r") / 3.0 : args.number("sigma");
            const int r = args.is_auto("r") ? int(std::ceil(3 * sigma)) : args.integer("r");
            if (r > 512) args.fail("sigma", "needs radius " + std::to_string(r) + " > 512");
            SeparableKernel k;
            k.filter = "gaussian";
            k.rows = k.cols = gaussian_weights(std::max(r, 1), sigma);
            k.gray = args.flag("gray");
            k.border = parse_border(args.text("border"));
            std::vector<std::string> details = {"radius " + std::to_string(r) + ", sigma " +
                                                std::to_string(sigma)};
            if (r <= 8) details.push_back("weights " + format_weights(k.rows));
            return make_separable_stage(args.spec_text(), std::move(k), std::move(details));
          }};
}

}  // namespace halo
