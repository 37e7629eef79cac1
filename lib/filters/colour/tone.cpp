// Tone and value stages on the colour channels, alpha passing unchanged: exposure (stops), mul
// and add (a value, or one per colour channel), clamp, fixnan (NaN and infinities replaced by
// their finite neighbours' mean, or a value) and tonemap (ACES filmic, Reinhard). Device side:
// kernels/tone.cl, the same formulas in the same order: results equal bit for bit wherever the
// device divides correctly rounded (halo asks for it where the device offers it).
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "cl/groups.hpp"
#include "core/error.hpp"
#include "filters/filter.hpp"

namespace halo {

namespace {

enum class Tone { mul, add, clamp, aces, reinhard, fixnan };

struct ToneSpec {
  Tone op = Tone::mul;
  std::vector<float> k;    // mul, add (exposure: 2^stops): one value, or one per colour
  float lo = 0, hi = 1;    // clamp
  float inv_white2 = 0;    // reinhard: 1 / white^2 (0: no white point)
  float value = 0;         // fixnan: where no neighbour is finite
  bool neighbours = true;  // fixnan: the finite neighbours' mean first
};

float aces(float v) {
  const float x = (v > 0.0f ? v : 0.0f) * 0.6f;
  const float r = (x * (2.51f * x + 0.03f)) / (x * (2.43f * x + 0.59f) + 0.14f);
  return r < 1.0f ? r : 1.0f;
}

// L / (1 + L) first: with a white point, L (1 + L / white^2) overflows float from L ~ 1e19.
float reinhard(float l, float inv_white2) {
  return l / (1.0f + l) * (1.0f + l * inv_white2);
}

// Reinhard takes infinities as the largest floats (kernels/tone.cl's twin): +Inf maps as the
// operator's limit instead of Inf / Inf = NaN in all three channels.
float finite_or_nan(float v) {
  constexpr float largest = std::numeric_limits<float>::max();
  return v > largest ? largest : (v < -largest ? -largest : v);
}

class ToneStage : public Stage {
 public:
  ToneStage(std::string spec, ToneSpec t) : Stage(std::move(spec)), t_(std::move(t)) {}

  StageTraits traits() const override {
    return {.reach = t_.op == Tone::fixnan && t_.neighbours ? 1 : 0,
            .cost = {.reference_ns = 5, .device_ns = 1}};
  }

  std::vector<std::string> details(const StageRun&) const override {
    switch (t_.op) {
      case Tone::mul:
        return {"colour times " + values_text()};
      case Tone::add:
        return {"colour plus " + values_text()};
      case Tone::clamp:
        return {fmt::format("colour clamped to [{:g}, {:g}]; NaN passes", t_.lo, t_.hi)};
      case Tone::aces:
        return {"ACES filmic (Narkowicz's fit) on 0.6 x the value, per channel, to [0, 1]"};
      case Tone::reinhard:
        return {t_.inv_white2 > 0 ? fmt::format("Reinhard with white {:g}, on Rec.709 luminance",
                                                1 / std::sqrt(t_.inv_white2))
                                  : "Reinhard L / (1 + L), on Rec.709 luminance"};
      case Tone::fixnan:
        return {t_.neighbours ? fmt::format("NaN and infinities: the mean of their finite "
                                            "neighbours, else {:g}",
                                            t_.value)
                              : fmt::format("NaN and infinities become {:g}", t_.value)};
    }
    return {};
  }

  Image reference_rows(const Image& in, Span out, StageRun&) const override {
    const int colours = in.color_channels();
    const std::vector<float> k = per_colour(colours);
    Image result = in.like(in.channels(), in.alpha());
    for (int y = out.first; y < out.last; ++y)
      for (int x = 0; x < in.width(); ++x) pixel(in, result, x, y, colours, k);
    copy_alpha(in, result);
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun&) const override {
    const int colours = in.color_channels();
    DeviceImage result = device.image_like(in, in.channels, in.alpha);
    const std::string name = kernel_name();
    auto kernel = device.kernel("tone.cl", name, {});
    const StripArgs strip = strip_args(in, out);
    switch (t_.op) {
      case Tone::mul:
      case Tone::add:
        set_args(kernel, in.buffer, result.buffer, strip, colours,
                 device.constants(per_colour(colours), spec() + " values"));
        break;
      case Tone::clamp:
        set_args(kernel, in.buffer, result.buffer, strip, colours, t_.lo, t_.hi);
        break;
      case Tone::aces:
        set_args(kernel, in.buffer, result.buffer, strip, colours);
        break;
      case Tone::reinhard:
        set_args(kernel, in.buffer, result.buffer, strip, colours, t_.inv_white2);
        break;
      case Tone::fixnan:
        set_args(kernel, in.buffer, result.buffer, strip, colours, t_.value, int(t_.neighbours));
        break;
    }
    const std::size_t bytes = 2 * std::size_t(in.width) * out.count() * colours * 4;
    // 64 x 4 work-items a group: groups of 64 left the H100 scheduling groups, not loading.
    device.launch(kernel, name, cl::NDRange(in.width, out.count()), groups::tile, bytes);
    copy_alpha(device, in, result);
    return result;
  }

 private:
  std::string kernel_name() const {
    switch (t_.op) {
      case Tone::mul:
        return "tone_mul";
      case Tone::add:
        return "tone_add";
      case Tone::clamp:
        return "tone_clamp";
      case Tone::aces:
        return "tonemap_aces";
      case Tone::reinhard:
        return "tonemap_reinhard";
      case Tone::fixnan:
        return "fixnan";
    }
    return "";
  }

  std::string values_text() const {
    std::string text;
    for (float v : t_.k) text += (text.empty() ? "" : ", ") + fmt::format("{:g}", v);
    return t_.k.size() > 1 ? "(" + text + ") by colour channel" : text;
  }

  // mul and add: one value for every colour channel, or as many values as the image has.
  std::vector<float> per_colour(int colours) const {
    if (t_.op != Tone::mul && t_.op != Tone::add) return {};
    if (t_.k.size() == 1) return std::vector<float>(colours, t_.k[0]);
    if (int(t_.k.size()) != colours)
      throw Error(ErrorKind::Usage, fmt::format("{}: {} values for an image of {} colour "
                                                "channels (give one, or one per channel)",
                                                spec(), t_.k.size(), colours));
    return t_.k;
  }

  void pixel(const Image& in, Image& out, int x, int y, int colours,
             const std::vector<float>& k) const {
    const int r = y - in.y0();
    if (t_.op == Tone::reinhard && colours == 3) {
      const float red = finite_or_nan(in.row(0, r)[x]), green = finite_or_nan(in.row(1, r)[x]),
                  blue = finite_or_nan(in.row(2, r)[x]);
      const float l = finite_or_nan(0.2126f * red + 0.7152f * green + 0.0722f * blue);
      const float s = l > 0.0f ? reinhard(l, t_.inv_white2) / l : (std::isnan(l) ? l : 0.0f);
      out.row(0, r)[x] = red * s;
      out.row(1, r)[x] = green * s;
      out.row(2, r)[x] = blue * s;
      return;
    }
    for (int c = 0; c < colours; ++c) out.row(c, r)[x] = sample(in, c, x, y, k);
  }

  float sample(const Image& in, int c, int x, int y, const std::vector<float>& k) const {
    const float v = in.row(c, y - in.y0())[x];
    switch (t_.op) {
      case Tone::mul:
        return v * k[c];
      case Tone::add:
        return v + k[c];
      case Tone::clamp:
        return v < t_.lo ? t_.lo : (v > t_.hi ? t_.hi : v);
      case Tone::aces:
        return aces(v);
      case Tone::reinhard:
        return finite_or_nan(v) > 0.0f ? reinhard(finite_or_nan(v), t_.inv_white2) : 0.0f;
      case Tone::fixnan:
        return std::isfinite(v) ? v : neighbours_mean(in, c, x, y);
    }
    return v;
  }

  float neighbours_mean(const Image& in, int c, int x, int y) const {
    float sum = 0.0f;
    int count = 0;
    if (t_.neighbours)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int yy = y + dy, xx = x + dx;
          if ((dx == 0 && dy == 0) || yy < 0 || yy >= in.full_height() || xx < 0 ||
              xx >= in.width())
            continue;
          const float n = in.row(c, yy - in.y0())[xx];
          if (std::isfinite(n)) sum += n, ++count;
        }
    return count > 0 ? sum / float(count) : t_.value;
  }

  ToneSpec t_;
};

FilterDef tone_filter(const char* name, const char* summary, std::vector<Param> params,
                      std::vector<std::string> notes, const char* example,
                      ToneSpec (*read)(const Args&)) {
  params.push_back(border_param());  // accepted like every filter's; these do not use it
  return {.name = name,
          .summary = summary,
          .params = std::move(params),
          .notes = std::move(notes),
          .example = example,
          .make =
              [read](const Args& args) {
                return std::make_unique<ToneStage>(args.spec_text(), read(args));
              },
          .mixes_neighbours = false};
}

std::vector<float> floats(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

}  // namespace

FilterDef exposure_filter() {
  return tone_filter(
      "exposure", "brighten or darken by stops: colour times 2^stops (alpha unchanged)",
      {{.name = "stops",
        .type = ParamType::Number,
        .fallback = "1",
        .doc = "stops of exposure; negative darkens",
        .min = -64,
        .max = 64}},
      {"pointwise; on linear data (EXR, PFM, or 8/16-bit images under --linear)"},
      "exposure:stops=-1.5", [](const Args& args) {
        return ToneSpec{.op = Tone::mul, .k = {float(std::exp2(args.number("stops")))}};
      });
}

FilterDef mul_filter() {
  return tone_filter(
      "mul", "multiply the colour channels by a value, or by one per channel",
      {{.name = "k",
        .type = ParamType::Numbers,
        .fallback = "1",
        .doc = "one value, or one per colour channel (white balance: k=1.1,1,0.9)"}},
      {"pointwise; alpha unchanged; k=1.1,1,0.9 scales red, green and blue each"}, "mul:k=0.5",
      [](const Args& args) { return ToneSpec{.op = Tone::mul, .k = floats(args.numbers("k"))}; });
}

FilterDef add_filter() {
  return tone_filter("add", "add a value, or one per channel, to the colour channels",
                     {{.name = "k",
                       .type = ParamType::Numbers,
                       .fallback = "0",
                       .doc = "one value, or one per colour channel"}},
                     {"pointwise; alpha unchanged"}, "add:k=-0.02", [](const Args& args) {
                       return ToneSpec{.op = Tone::add, .k = floats(args.numbers("k"))};
                     });
}

FilterDef clamp_filter() {
  return tone_filter(
      "clamp", "limit the colour channels to [min, max]",
      {{.name = "min", .type = ParamType::Number, .fallback = "0", .doc = "lower limit"},
       {.name = "max", .type = ParamType::Number, .fallback = "1", .doc = "upper limit"}},
      {"pointwise; NaN passes (fixnan replaces it); alpha unchanged"}, "clamp:min=0:max=1",
      [](const Args& args) {
        if (args.number("min") > args.number("max")) args.fail("min", "must not be above max");
        return ToneSpec{
            .op = Tone::clamp, .lo = float(args.number("min")), .hi = float(args.number("max"))};
      });
}

FilterDef fixnan_filter() {
  return tone_filter(
      "fixnan",
      "replace NaN and infinite samples (a renderer's fireflies gone wrong) by the mean of their "
      "finite neighbours, or by a value",
      {{.name = "mode",
        .type = ParamType::Choice,
        .fallback = "neighbours",
        .doc = "neighbours: the mean of the finite samples among the 8 around (value where "
               "none is); value: always value",
        .choices = {"neighbours", "value"}},
       {.name = "value",
        .type = ParamType::Number,
        .fallback = "0",
        .doc = "the replacement where no neighbour helps"}},
      {"finite samples pass; neighbours outside the image do not count; alpha unchanged"}, "fixnan",
      [](const Args& args) {
        return ToneSpec{.op = Tone::fixnan,
                        .value = float(args.number("value")),
                        .neighbours = args.text("mode") == "neighbours"};
      });
}

FilterDef tonemap_filter() {
  return tone_filter(
      "tonemap",
      "compress linear high-dynamic-range colour into [0, 1] for display (follow with "
      "srgb:float=1 for an 8-bit file)",
      {{.name = "curve",
        .type = ParamType::Choice,
        .fallback = "aces",
        .doc = "aces: Narkowicz's fit of the ACES filmic curve; reinhard: Reinhard's global "
               "operator on luminance",
        .choices = {"aces", "reinhard"}},
       {.name = "white",
        .type = ParamType::Number,
        .fallback = "auto",
        .doc = "reinhard: the luminance that maps to 1 (auto: none, L / (1 + L))",
        .min = 1e-6,
        .allow_auto = true}},
      {"aces: x = 0.6 v, min(1, x (2.51 x + 0.03) / (x (2.43 x + 0.59) + 0.14)) per channel "
       "(K. Narkowicz, \"ACES Filmic Tone Mapping Curve\", 2016); the curve starts at 0: "
       "negative values and NaN give 0, +Inf gives 1 (as the fit's saturate() does)",
       "reinhard: L = 0.2126 R + 0.7152 G + 0.0722 B, Ld = L (1 + L / white^2) / (1 + L), "
       "colour times Ld / L (E. Reinhard et al., \"Photographic Tone Reproduction for Digital "
       "Images\", SIGGRAPH 2002, eq. 4); images without 3 colour channels per channel; "
       "+-Inf are taken as the largest floats (+Inf red without a white point: 1 / 0.2126), "
       "L <= 0 gives 0, NaN stays NaN (in all three colours)",
       "pointwise; alpha unchanged"},
      "tonemap:curve=reinhard:white=4", [](const Args& args) {
        const bool reinhard = args.text("curve") == "reinhard";
        const double white = args.is_auto("white") ? 0 : args.number("white");
        return ToneSpec{.op = reinhard ? Tone::reinhard : Tone::aces,
                        .inv_white2 = white > 0 ? float(1 / (white * white)) : 0.0f};
      });
}

}  // namespace halo
