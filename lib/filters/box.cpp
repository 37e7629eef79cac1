// box:r=R: mean over a (2R+1)^2 square, as a rows pass and a columns pass of equal weights.
// Device side: box_rows / box_cols in kernels/separable.cl.
#include "filters/separable.hpp"

namespace halo {

FilterDef box_filter() {
  return {.name = "box",
          .summary = "mean over a (2r+1) x (2r+1) square, separable",
          .params = {{.name = "r", .type = ParamType::Integer, .fallback = "1",
                      .doc = "radius in pixels", .min = 1, .max = 512},
                     {.name = "gray", .type = ParamType::Flag, .fallback = "0",
                      .doc = "convert to luminance first"},
                     border_param()},
          .notes = {"weights 1/(2r+1) per pass; cost grows linearly with r (2r+1 taps per pass)"},
          .example = "box:r=4",
          .make = [](const Args& args) {
            const int r = args.integer("r");
            SeparableKernel k;
            k.filter = "box";
            k.rows = k.cols = std::vector<float>(2 * r + 1, float(1.0 / (2 * r + 1)));
            k.gray = args.flag("gray");
            k.border = parse_border(args.text("border"));
            return make_separable_stage(args.spec_text(), std::move(k),
                                        {"radius " + std::to_string(r) + ", weight 1/" +
                                         std::to_string(2 * r + 1)});
          }};
}

}  // namespace halo
