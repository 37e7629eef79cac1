// Mirrors and turns: `flop` (left and right swapped: each row reversed, streamed strip by
// strip), `flip` (top and bottom swapped), `rotate` by 180 (both) and by 90 or 270 (width and
// height swapped). A flipped strip's rows come from the other end of the image and a turned
// row from every input row, so these take the whole image at once. Samples are copied
// (kernels/mirror.cl): exact, alpha included. Other angles: lib/filters/geometry/rotate.cpp.
#include <cmath>

#include "cl/groups.hpp"
#include "filters/filter.hpp"
#include "filters/geometry/rotate.hpp"

namespace halo {

namespace {

class MirrorStage : public Stage {
 public:
  MirrorStage(std::string spec, bool flop, bool flip)
      : Stage(std::move(spec)), flop_(flop), flip_(flip) {}

  StageTraits traits() const override {
    return {.moves_samples = true, .cost = {.reference_ns = 2, .device_ns = 0.5}};
  }
  // The data window is mirrored in its frame too: the picture moves within the display
  // window, as oiiotool --flip and --flop move it.
  ImageDesc describe(const ImageDesc& in) const override {
    ImageDesc out = in;
    if (!out.placement) return out;
    Placement& p = *out.placement;
    if (flop_) p.x = 2 * p.full_x + p.full_width - p.x - in.size.width;
    if (flip_) p.y = 2 * p.full_y + p.full_height - p.y - in.size.height;
    return out;
  }
  std::string whole_image_reason(PixelType) const override {
    return flip_ ? "flipping top and bottom reads each strip's rows from the image's other end"
                 : "";
  }
  std::vector<std::string> details(const StageRun&) const override {
    return {flop_ && flip_ ? "rotated by 180 degrees"
            : flop_        ? "left and right swapped"
            : flip_        ? "top and bottom swapped"
                           : "unchanged (a whole turn)"};
  }

  Image reference_rows(const Image& in, Span out, StageRun&) const override {
    Image result = in.like(in.channels(), in.alpha());
    const int w = in.width(), h = in.full_height();
    for (int c = 0; c < in.channels(); ++c)
      for (int y = out.first; y < out.last; ++y) {
        const float* src = in.row(c, (flip_ ? h - 1 - y : y) - in.y0());
        float* dst = result.row(c, y - in.y0());
        for (int x = 0; x < w; ++x) dst[x] = src[flop_ ? w - 1 - x : x];
      }
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun&) const override {
    DeviceImage result = device.image_like(in, in.channels, in.alpha);
    auto kernel = device.kernel("mirror.cl", "mirror", {});
    set_args(kernel, in.buffer, result.buffer, strip_args(in, out), int(flop_), int(flip_));
    device.launch(kernel, "mirror", cl::NDRange(in.width, out.count(), in.channels), groups::tile,
                  2 * std::size_t(in.pitch) * out.count() * 4 * in.channels);
    return result;
  }

 private:
  bool flop_, flip_;
};

// rotate=90 and 270: the image turns on its side, so every output row reads a column of the
// whole input.
class QuarterTurnStage : public Stage {
 public:
  QuarterTurnStage(std::string spec, bool clockwise)
      : Stage(std::move(spec)), clockwise_(clockwise) {}

  StageTraits traits() const override {
    return {.resizes = true, .moves_samples = true, .cost = {.reference_ns = 4, .device_ns = 1}};
  }
  // The frame turns with the image (oiiotool --rotate90 and --rotate270): the display window's
  // sides swap and the data window turns inside it.
  ImageDesc describe(const ImageDesc& in) const override {
    ImageDesc out = resized(in, {in.size.height, in.size.width});
    if (in.placement) {
      const Placement& p = *in.placement;
      const int left = p.x - p.full_x, top = p.y - p.full_y;  // within the frame
      Placement& turned = out.placement.emplace(p);
      turned.full_width = p.full_height;
      turned.full_height = p.full_width;
      turned.x = p.full_x + (clockwise_ ? p.full_height - (top + in.size.height) : top);
      turned.y = p.full_y + (clockwise_ ? left : p.full_width - (left + in.size.width));
    }
    return out;
  }
  std::string whole_image_reason(PixelType) const override {
    return "turning by 90 degrees reads a column of every input row for each output row";
  }
  Span input_rows(Span, Size in) const override { return {0, in.height}; }
  std::vector<std::string> details(const StageRun&) const override {
    return {clockwise_ ? "turned 90 degrees clockwise" : "turned 90 degrees counter-clockwise"};
  }

  Image reference_rows(const Image& in, Span out, StageRun&) const override {
    const int w = in.width(), h = in.full_height();
    Image result(h, out, w, in.channels(), in.alpha());
    result.set_source(in.source());
    for (int c = 0; c < in.channels(); ++c)
      for (int y = out.first; y < out.last; ++y) {
        float* dst = result.row(c, y - result.y0());
        for (int x = 0; x < h; ++x)
          dst[x] =
              clockwise_ ? in.row(c, h - 1 - x - in.y0())[y] : in.row(c, x - in.y0())[w - 1 - y];
      }
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun&) const override {
    DeviceImage result = resized_result(device, in, {in.full_height, in.width}, out);
    auto kernel = device.kernel("mirror.cl", "quarter_turn", {});
    set_args(kernel, in.buffer, result.buffer, move_args(in, result, out), int(clockwise_));
    device.launch(kernel, "quarter_turn", cl::NDRange(result.width, out.count(), in.channels),
                  groups::tile, 2 * std::size_t(result.width) * out.count() * 4 * in.channels);
    return result;
  }

 private:
  bool clockwise_;
};

FilterDef mirror_filter(const char* name, const char* summary, std::vector<Param> params,
                        std::string note, bool (*flop)(const Args&), bool (*flip)(const Args&)) {
  params.push_back(border_param());  // accepted like every filter's; unused
  return {.name = name,
          .summary = summary,
          .params = std::move(params),
          .notes = {std::move(note), "samples copied: exact; alpha included"},
          .example = name,
          .make =
              [flop, flip](const Args& args) {
                return std::make_unique<MirrorStage>(args.spec_text(), flop(args), flip(args));
              },
          .mixes_neighbours = false};
}

}  // namespace

FilterDef flop_filter() {
  return mirror_filter(
      "flop", "mirror left and right", {}, "streams strip by strip",
      [](const Args&) { return true; }, [](const Args&) { return false; });
}

FilterDef flip_filter() {
  return mirror_filter(
      "flip", "mirror top and bottom", {}, "the whole image at once (rows come from the other end)",
      [](const Args&) { return false; }, [](const Args&) { return true; });
}

FilterDef rotate_filter() {
  FilterDef def = mirror_filter(
      "rotate", "turn clockwise by any angle: 90, 180 and 270 exactly, others resampled",
      {{.name = "angle",
        .type = ParamType::Number,
        .fallback = "180",
        .doc = "degrees clockwise (negative: counter-clockwise); 90 and 270 swap width and "
               "height",
        .min = -3600,
        .max = 3600},
       {.name = "filter",
        .type = ParamType::Choice,
        .fallback = "bicubic",
        .doc = "other angles: the taps each output pixel reads",
        .choices = {"nearest", "bilinear", "bicubic"}},
       {.name = "background",
        .type = ParamType::Number,
        .fallback = "0",
        .doc = "other angles: the colour of what lies outside the input (alpha is 0 there); "
               "up to 1e38 either way, so that the bicubic taps' sums (1.32 x the largest "
               "value at most) stay finite",
        .min = -1e38,
        .max = 1e38},
       {.name = "size",
        .type = ParamType::Choice,
        .fallback = "fit",
        .doc = "other angles: fit (the whole pixels holding the turned pixel centres, as "
               "oiiotool --rotate:recompute_roi=1) or same (the input's size, centred)",
        .choices = {"fit", "same"}}},
      "90, 180, 270: samples moved, exact, the whole image at once; other angles stream, bicubic "
      "(Catmull-Rom) by default, bit for bit on devices",
      [](const Args&) { return true; }, [](const Args&) { return true; });
  def.example = "rotate:angle=90";
  def.make = [](const Args& args) -> std::unique_ptr<Stage> {
    double angle = std::fmod(args.number("angle"), 360.0);
    if (angle < 0) angle += 360;
    if (angle == 0) return std::make_unique<MirrorStage>(args.spec_text(), false, false);
    if (angle == 180) return std::make_unique<MirrorStage>(args.spec_text(), true, true);
    if (angle == 90 || angle == 270)
      return std::make_unique<QuarterTurnStage>(args.spec_text(), angle == 90);
    return make_free_rotation(args, angle);
  };
  return def;
}

}  // namespace halo
