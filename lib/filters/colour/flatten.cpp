// flatten[:background=B]: the colour put over a background and the alpha channel dropped, as a
// format without alpha (JPEG) needs: c a + b (1 - a) for straight colour (8/16-bit files),
// c + b (1 - a) for premultiplied colour (float files: EXR). Fully opaque pixels keep their
// colour exactly. halo run puts it last when the output cannot store alpha. Images without
// alpha pass unchanged. Device side: kernels/flatten.cl, the same expression: bit for bit.
#include <fmt/format.h>

#include "cl/groups.hpp"
#include "core/error.hpp"
#include "filters/filter.hpp"

namespace halo {

namespace {

// Whether colour arrives premultiplied: halo filters float files' colour as stored
// (premultiplied, as EXR holds it) and 8/16-bit files' straight (lib/run/file.hpp).
bool premultiplied(PixelType source) {
  return source == PixelType::f32;
}

class FlattenStage : public Stage {
 public:
  FlattenStage(std::string spec, std::vector<float> background)
      : Stage(std::move(spec)), background_(std::move(background)) {}

  StageTraits traits() const override { return {.cost = {.reference_ns = 2, .device_ns = 0.5}}; }
  std::vector<std::string> details(const StageRun&) const override {
    std::string values;
    for (const float b : background_)
      values += (values.empty() ? "" : ", ") + fmt::format("{:g}", b);
    return {"colour over a background of " + values + ", alpha dropped (images with alpha)"};
  }

  Image reference_rows(const Image& in, Span out, StageRun&) const override {
    if (!in.alpha()) return in;
    const int colours = in.color_channels();
    const std::vector<float> b = per_colour(colours);
    const bool pre = premultiplied(in.source());
    Image result = in.like(colours, false);
    for (int y = out.first; y < out.last; ++y) {
      const float* a = in.row(colours, y - in.y0());
      for (int c = 0; c < colours; ++c) {
        const float* v = in.row(c, y - in.y0());
        float* o = result.row(c, y - in.y0());
        for (int x = 0; x < in.width(); ++x)
          o[x] = (pre ? v[x] : v[x] * a[x]) + b[c] * (1.0f - a[x]);
      }
    }
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun&) const override {
    if (!in.alpha) return in;
    const int colours = in.color_channels();
    DeviceImage result = device.image_like(in, colours, false);
    auto kernel = device.kernel("flatten.cl", "flatten", {});
    set_args(kernel, in.buffer, result.buffer, strip_args(in, out), colours,
             int(premultiplied(in.source)),
             device.constants(per_colour(colours), spec() + " background"));
    device.launch(kernel, "flatten", cl::NDRange(in.width, out.count()), groups::tile,
                  std::size_t(in.width) * out.count() * (2 * colours + 1) * 4);
    return result;
  }

 private:
  // One background value for every colour channel, or one per channel.
  std::vector<float> per_colour(int colours) const {
    if (background_.size() == 1) return std::vector<float>(colours, background_[0]);
    if (int(background_.size()) != colours)
      throw Error(ErrorKind::Usage, fmt::format("{}: {} background values for an image of {} "
                                                "colour channels (give one, or one per channel)",
                                                spec(), background_.size(), colours));
    return background_;
  }

  std::vector<float> background_;
};

}  // namespace

FilterDef flatten_filter() {
  return {.name = "flatten",
          .summary =
              "put the colour over a background and drop alpha (for formats without "
              "alpha: JPEG)",
          .params = {{.name = "background",
                      .type = ParamType::Numbers,
                      .fallback = "0",
                      .doc = "the background: one value, or one per colour channel (white: 1)"},
                     border_param()},  // accepted like every filter's; pointwise, unused
          .notes = {"straight colour (8/16-bit files): c a + b (1 - a); premultiplied colour "
                    "(float files: EXR): c + b (1 - a); opaque pixels keep their colour exactly",
                    "halo run puts it last when the output's format cannot store alpha "
                    "(--background sets b); images without alpha pass unchanged"},
          .example = "flatten:background=1",
          .make =
              [](const Args& args) {
                std::vector<float> b;
                for (const double v : args.numbers("background")) b.push_back(float(v));
                return std::make_unique<FlattenStage>(args.spec_text(), std::move(b));
              },
          .mixes_neighbours = false};
}

}  // namespace halo
