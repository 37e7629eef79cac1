// crop: a window of the image, x,y,w,h in pixels (x and y centre the window when left out, w
// and h run to the right and bottom edges). The first stage that changes the image's size:
// strips map to the window's rows, so a crop streams like any filter. Samples are copied
// (kernels/crop.cl): exact, alpha included.
#include <fmt/format.h>

#include "cl/groups.hpp"
#include "core/error.hpp"
#include "filters/filter.hpp"

namespace halo {

namespace {

struct Window {
  int x = -1, y = -1, w = -1, h = -1;  // -1: auto
};

class CropStage : public Stage {
 public:
  CropStage(std::string spec, Window w) : Stage(std::move(spec)), want_(w) {}

  StageTraits traits() const override {
    return {.resizes = true, .cost = {.reference_ns = 1, .device_ns = 0.3}};
  }
  // The window keeps its place in the input: EXR's data window moves by its corner.
  ImageDesc describe(const ImageDesc& in) const override {
    const Window w = placed(in.size);
    ImageDesc out = in;
    out.size = {w.w, w.h};
    move_window(out, w.x, w.y);
    return out;
  }
  Span input_rows(Span out, Size in) const override {
    const int top = placed(in).y;
    return {out.first + top, out.last + top};
  }
  std::vector<std::string> details(const StageRun&) const override {
    return {"a window of the image; samples copied"};
  }

  // `in` holds the input rows of `out` (shifted by the window's top); the result holds `out`.
  Image reference_rows(const Image& in, Span out, StageRun&) const override {
    const Window w = placed({in.width(), in.full_height()});
    Image result(w.w, out, w.h, in.channels(), in.alpha());
    result.set_source(in.source());
    for (int c = 0; c < in.channels(); ++c)
      for (int y = out.first; y < out.last; ++y) {
        const float* src = in.row(c, y + w.y - in.y0()) + w.x;
        std::copy(src, src + w.w, result.row(c, y - result.y0()));
      }
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun&) const override {
    const Window w = placed({in.width, in.full_height});
    DeviceImage result = resized_result(device, in, {w.w, w.h}, out);
    auto kernel = device.kernel("crop.cl", "crop", {});
    set_args(kernel, in.buffer, result.buffer,
             CropArgs{.move = move_args(in, result, out), .left = w.x, .top = w.y});
    device.launch(kernel, "crop", cl::NDRange(w.w, out.count(), in.channels), groups::tile,
                  2 * std::size_t(w.w) * out.count() * 4 * in.channels);
    return result;
  }

 private:
  // The window on an image of `in`: auto sizes and offsets resolved, and checked.
  Window placed(Size in) const {
    Window w = want_;
    place(w.x, w.w, in.width, "x", "w", "width", in);
    place(w.y, w.h, in.height, "y", "h", "height", in);
    return w;
  }

  // One side of the window: its offset `at` and length (-1: auto) on an image side of `size`;
  // a Usage error naming the values given and the largest that fit.
  void place(int& at, int& length, int size, const char* at_key, const char* length_key,
             const char* side, Size in) const {
    const auto refuse = [&](const std::string& why) {
      throw Error(ErrorKind::Usage, fmt::format("{}: the window is not inside the {}x{} image: {}",
                                                spec(), in.width, in.height, why));
    };
    if (at >= size)
      refuse(fmt::format("{}={} is past its {} of {} ({} at most {})", at_key, at, side, size,
                         at_key, size - 1));
    if (length > size)
      refuse(fmt::format("{}={} is more than its {} of {}", length_key, length, side, size));
    if (length < 0) length = size - std::max(0, at);
    if (at < 0) at = (size - length) / 2;
    if (at + length > size)
      refuse(fmt::format("{}={} and {}={} reach {}, past its {} of {} ({} at most {} there)",
                         at_key, at, length_key, length, at + length, side, size, length_key,
                         size - at));
  }

  Window want_;
};

int integer_or_auto(const Args& args, const char* key) {
  return args.is_auto(key) ? -1 : args.integer(key);
}

}  // namespace

FilterDef crop_filter() {
  const auto side = [](const char* name, double min, const char* doc) {
    return Param{.name = name,
                 .type = ParamType::Integer,
                 .fallback = "auto",
                 .doc = doc,
                 .min = min,
                 .max = 1e9,
                 .allow_auto = true};
  };
  std::vector<Param> params = {side("x", 0, "left edge of the window (auto: centred)"),
                               side("y", 0, "top edge of the window (auto: centred)"),
                               side("w", 1, "window width (auto: to the right edge)"),
                               side("h", 1, "window height (auto: to the bottom edge)"),
                               border_param()};  // accepted like every filter's; unused
  return {.name = "crop",
          .summary = "keep a window of the image: x,y,w,h in pixels",
          .params = std::move(params),
          .notes = {"streams strip by strip; a window outside the image is refused (64)",
                    "x and y count from the image's first pixel; an EXR keeps its display "
                    "window, and its data window becomes the cropped one (moved by x, y)",
                    "samples copied: exact; alpha included"},
          .example = "crop:w=1920:h=1080",
          .make =
              [](const Args& args) {
                const Window w{integer_or_auto(args, "x"), integer_or_auto(args, "y"),
                               integer_or_auto(args, "w"), integer_or_auto(args, "h")};
                return std::make_unique<CropStage>(args.spec_text(), w);
              },
          .mixes_neighbours = false,
          .swept = false};
}

}  // namespace halo
