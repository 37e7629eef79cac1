// pad: a border added around the image, `left`, `right`, `top`, `bottom` pixels wide (or `all`
// of them), filled by the border rule the filters read past the edge with: zero, clamp,
// reflect (OpenCV's BORDER_REFLECT_101) or wrap. Samples are copied (kernels/pad.cl): exact,
// alpha included. Strips map to the input's rows, so a pad streams unless it wraps.
#include <fmt/format.h>

#include <algorithm>

#include "cl/groups.hpp"
#include "core/error.hpp"
#include "filters/filter.hpp"

namespace halo {

namespace {

struct Margins {
  int left = 0, right = 0, top = 0, bottom = 0;
};

class PadStage : public Stage {
 public:
  PadStage(std::string spec, Margins m, Border border)
      : Stage(std::move(spec)), m_(m), border_(border) {}

  StageTraits traits() const override {
    return {.resizes = true, .cost = {.reference_ns = 1, .device_ns = 0.3}};
  }
  // The image grows around the input, which keeps its place: EXR's data window starts
  // `left`, `top` pixels before the input's, inside the same display window.
  ImageDesc describe(const ImageDesc& in) const override {
    ImageDesc out = in;
    out.size = {in.size.width + m_.left + m_.right, in.size.height + m_.top + m_.bottom};
    if (double(out.size.width) * out.size.height > 4e9)
      throw Error(ErrorKind::Usage, fmt::format("{}: a {}x{} result is too large", spec(),
                                                out.size.width, out.size.height));
    move_window(out, -m_.left, -m_.top);
    return out;
  }
  // The input rows that output rows `out` read, widened so that strips read the input in
  // order (first and last never go back from one strip to the next, as a file's rows arrive):
  // from the least row any output row from out.first on reads, to the most any row before
  // out.last reads. A margin's rows are the ones its border rule repeats (none for zeros);
  // the rules repeat with a period of at most 2h - 2 rows, so the 2h margin rows nearest the
  // image read every row any of them does.
  Span input_rows(Span out, Size in) const override {
    const int h = in.height;
    const auto extent = [&](int from, int to) {  // least and most row output rows [from, to) read
      std::array<int, 2> e{h, -1};
      for (int y = from; y < to; ++y)
        if (const int i = border_index(y - m_.top, h, border_); i >= 0)
          e = {std::min(e[0], i), std::max(e[1], i)};
      return e;
    };
    const auto above = extent(std::max(0, m_.top - 2 * h), m_.top);
    const auto below = extent(m_.top + h, m_.top + h + std::min(m_.bottom, 2 * h));
    const int first = std::min(std::clamp(out.first - m_.top, 0, h - 1), below[0]);
    const int last = std::max(std::clamp(out.last - m_.top, 1, h), above[1] + 1);
    return {first, last};
  }
  std::string whole_image_reason(PixelType) const override {
    return border_whole_image_reason(border_);
  }
  std::vector<std::string> details(const StageRun&) const override {
    return {fmt::format("margins left {}, right {}, top {}, bottom {}; samples copied", m_.left,
                        m_.right, m_.top, m_.bottom)};
  }

  // `in` holds input_rows(out); the result holds the output rows `out`.
  Image reference_rows(const Image& in, Span out, StageRun&) const override {
    const Size from{in.width(), in.full_height()}, to = output_size(from);
    Image result(to.width, out, to.height, in.channels(), in.alpha());
    result.set_source(in.source());
    std::vector<int> columns(to.width);  // input column of each output column, -1: zero
    for (int x = 0; x < to.width; ++x) columns[x] = border_index(x - m_.left, from.width, border_);
    for (int c = 0; c < in.channels(); ++c)
      for (int y = out.first; y < out.last; ++y) {
        float* dst = result.row(c, y - result.y0());
        const int row = border_index(y - m_.top, from.height, border_);
        if (row < 0) {
          std::fill(dst, dst + to.width, 0.0f);
          continue;
        }
        const float* src = in.row(c, row - in.y0());
        for (int x = 0; x < to.width; ++x) dst[x] = columns[x] < 0 ? 0.0f : src[columns[x]];
      }
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun&) const override {
    const Size to = output_size({in.width, in.full_height});
    DeviceImage result = resized_result(device, in, to, out);
    auto kernel = device.kernel("pad.cl", "pad", {});
    set_args(kernel, in.buffer, result.buffer, move_args(in, result, out), m_.left, m_.top,
             int(border_));
    device.launch(kernel, "pad", cl::NDRange(to.width, out.count(), in.channels), groups::tile,
                  2 * std::size_t(to.width) * out.count() * sizeof(float) * in.channels);
    return result;
  }

 private:
  Margins m_;
  Border border_;
};

}  // namespace

FilterDef pad_filter() {
  const auto side = [](const char* name, const char* doc) {
    return Param{.name = name,
                 .type = ParamType::Integer,
                 .fallback = "auto",
                 .doc = doc,
                 .min = 0,
                 .max = 1e6,
                 .allow_auto = true};
  };
  Param border = border_param();
  border.fallback = "zero";
  border.doc =
      "what the margins hold: zero (black, alpha 0), clamp (the edge pixel repeated), reflect "
      "(mirrored about the edge pixel, dcb|abcd|cba), wrap (the other edge; not in strips)";
  return {.name = "pad",
          .summary = "add margins around the image, filled by a border rule",
          .params = {side("all", "every margin, unless one is given (auto: 0)"),
                     side("left", "pixels added left (auto: all)"),
                     side("right", "pixels added right (auto: all)"),
                     side("top", "pixels added above (auto: all)"),
                     side("bottom", "pixels added below (auto: all)"), border},
          .notes = {"streams strip by strip (wrap: the whole image); samples copied: exact; "
                    "alpha included",
                    "an EXR keeps its display window; its data window grows by the margins"},
          .example = "pad:all=16",
          .make =
              [](const Args& args) {
                const int all = args.is_auto("all") ? 0 : args.integer("all");
                const auto margin = [&](const char* key) {
                  return args.is_auto(key) ? all : args.integer(key);
                };
                const Margins m{margin("left"), margin("right"), margin("top"), margin("bottom")};
                return std::make_unique<PadStage>(args.spec_text(), m,
                                                  parse_border(args.text("border")));
              },
          .mixes_neighbours = false,
          .swept = false};
}

}  // namespace halo
