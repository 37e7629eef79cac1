// Sample-by-sample stages: `linear` and `srgb` (the sRGB transfer curve, decoded and encoded,
// for --linear) and `premultiply` and `unpremultiply` (associated alpha around the filters
// that mix neighbours: alpha is filtered with the colour, so transparent pixels lend no
// colour and a blurred edge fades instead of darkening). Device side:
// kernels/pointwise.cl, with the same formulas; pow() may differ from the host's by an ulp.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cl/groups.hpp"
#include "core/srgb.hpp"
#include "filters/filter.hpp"

namespace halo {

namespace {

float to_linear(float v, float) {
  return srgb_to_linear(v);
}
float to_srgb(float v, float) {
  return linear_to_srgb(v);
}
// A pure power curve (a PNG's gAMA), sign kept; the kernel `power` is the same.
float powered(float v, float exponent) {
  return v < 0.0f ? -std::pow(-v, exponent) : std::pow(v, exponent);
}
float premultiplied(float v, float a) {
  return v * a;
}
float unpremultiplied(float v, float a) {
  return a > 0.0f ? v / a : 0.0f;
}

// What a stage does with alpha, and which images it leaves as they are.
enum class Kind {
  transfer,       // colour planes only; float data (EXR, PFM) is linear already and passes
  premultiply,    // images with alpha: colour times alpha, and alpha becomes one more plane
                  // that the following filters filter with the colour (associated alpha)
  unpremultiply,  // images with alpha (a file's premultiplied colour), and images of 2 or 4
                  // planes after premultiply: the last plane is alpha (again), colour is
                  // divided by it
};

class PointwiseStage : public Stage, public BoundToFile {
 public:
  // A transfer stage with from_file (curve=auto) takes a PNG's gAMA for the sRGB curve when
  // its file has one (for_file): `decode` says which way (linear: decode, srgb: encode).
  PointwiseStage(std::string spec, std::string kernel, float (*fn)(float, float), Kind kind,
                 bool also_float, bool from_file = false, bool decode = false, float exponent = 0,
                 bool associated = false)
      : Stage(std::move(spec)),
        kernel_(std::move(kernel)),
        fn_(fn),
        kind_(kind),
        also_float_(also_float),
        from_file_(from_file),
        decode_(decode),
        exponent_(exponent),
        associated_(associated) {}

  // curve=auto: a file whose PNG gAMA says it is not sRGB-encoded (and no sRGB chunk or ICC
  // profile says otherwise) is decoded and encoded by that gamma instead.
  std::unique_ptr<Stage> for_file(const FileFacts& file) const override {
    if (!from_file_ || file.gamma <= 0 || file.srgb || !file.icc.empty()) return nullptr;
    const float exponent = decode_ ? float(1 / file.gamma) : float(file.gamma);
    return std::make_unique<PointwiseStage>(spec(), kernel_, fn_, kind_, also_float_, false,
                                            decode_, exponent);
  }

  StageTraits traits() const override {
    return {.associates_alpha = kind_ == Kind::premultiply,
            .cost = {.reference_ns = 5, .device_ns = 1}};
  }

  std::vector<std::string> details(const StageRun&) const override {
    switch (kind_) {
      case Kind::premultiply:
        return {associated_ ? "images with alpha: colour premultiplied already (a float file's), "
                              "left as it is; the filters up to unpremultiply filter alpha with "
                              "the colour"
                            : "images with alpha: colour times alpha; the filters up to "
                              "unpremultiply filter alpha with the colour"};
      case Kind::unpremultiply:
        return {associated_ ? "alpha (the last of 2 or 4 channels) passes the next filters "
                              "again; colour stays premultiplied"
                            : "colour divided by alpha (the last of 2 or 4 channels); alpha 0 "
                              "gives 0"};
      default:
        return {fmt::format("{}; {}",
                            exponent_ > 0 ? fmt::format("the file's PNG gamma: v^{:.5g}", exponent_)
                            : from_file_  ? "the sRGB curve, or the file's PNG gamma"
                                          : "the sRGB curve",
                            also_float_ ? "on every image"
                                        : "on 8/16-bit images; float images (linear already) "
                                          "pass")};
    }
  }

  Image reference_rows(const Image& in, Span out, StageRun& run) const override {
    Image result = in;
    reference_in_place(result, out, run);
    return result;
  }

  bool reference_in_place(Image& image, Span out, StageRun&) const override {
    if (skips(image.source(), image.alpha(), image.channels())) return true;
    if (associated_) {
      image.set_alpha(alpha_after(image.alpha()));
      return true;
    }
    const int alpha = alpha_plane(image.alpha(), image.channels());
    for (int c = 0; c < image.channels(); ++c)
      for (int y = out.first; y < out.last; ++y) {
        if (c == alpha) continue;
        float* v = image.row(c, y - image.y0());
        apply_row(v, alpha < 0 ? nullptr : image.row(alpha, y - image.y0()), image.width());
      }
    image.set_alpha(alpha_after(image.alpha()));
    return true;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun&) const override {
    if (skips(in.source, in.alpha, in.channels)) return in;
    if (associated_) {  // the same samples; only whether alpha is filtered changes
      DeviceImage result = in;
      result.alpha = alpha_after(in.alpha);
      return result;
    }
    const int alpha = alpha_plane(in.alpha, in.channels);
    DeviceImage result = device.image_like(in, in.channels, alpha_after(in.alpha));
    const std::string name = exponent_ > 0.0f ? "power" : kernel_;
    auto kernel = device.kernel("pointwise.cl", name, {});
    const int planes = alpha < 0 ? in.channels : in.channels - 1;
    if (exponent_ > 0.0f)
      set_args(kernel, in.buffer, result.buffer, strip_args(in, out), alpha, exponent_);
    else
      set_args(kernel, in.buffer, result.buffer, strip_args(in, out), alpha);
    const std::size_t bytes = 2 * std::size_t(in.width) * out.count() * in.channels * 4;
    device.launch(kernel, name, cl::NDRange(in.width, out.count(), planes), groups::row, bytes);
    if (alpha >= 0) {
      const std::size_t plane = in.plane_size() * sizeof(float);
      device.copy(in.buffer, result.buffer, plane * alpha, plane * alpha, plane, "alpha");
    }
    return result;
  }

 private:
  // One row of a colour plane in place; `a` the alpha row, or null. Alpha's two formulas are
  // written out (not through fn_) so that the loops vectorise; the division is the same
  // either way.
  void apply_row(float* v, const float* a, int n) const {
    if (exponent_ > 0.0f) {
      for (int x = 0; x < n; ++x) v[x] = powered(v[x], exponent_);
    } else if (kind_ == Kind::premultiply && a) {
      for (int x = 0; x < n; ++x) v[x] *= a[x];
    } else if (kind_ == Kind::unpremultiply && a) {
      for (int x = 0; x < n; ++x) {
        const float q = v[x] / (a[x] > 0.0f ? a[x] : 1.0f);
        v[x] = a[x] > 0.0f ? q : 0.0f;
      }
    } else {
      for (int x = 0; x < n; ++x) v[x] = fn_(v[x], a ? a[x] : 1.0f);
    }
  }

  bool skips(PixelType source, bool alpha, int channels) const {
    switch (kind_) {
      case Kind::premultiply:
        return !alpha;
      case Kind::unpremultiply:
        return !alpha && channels != 2 && channels != 4;
      default:
        return source == PixelType::f32 && !also_float_;
    }
  }
  // The plane that holds alpha (-1: none the stage uses).
  int alpha_plane(bool alpha, int channels) const {
    if (kind_ == Kind::transfer) return alpha ? channels - 1 : -1;
    return channels - 1;
  }
  bool alpha_after(bool alpha) const {
    return kind_ == Kind::premultiply ? false : kind_ == Kind::unpremultiply ? true : alpha;
  }

  std::string kernel_;
  float (*fn_)(float, float);
  Kind kind_;
  bool also_float_;
  bool from_file_;
  bool decode_;
  float exponent_;  // > 0: a power curve (the file's gamma) instead of fn_
  // premultiply/unpremultiply on colour that is premultiplied already (float files): alpha
  // joins or leaves the filtered planes, no sample changes.
  bool associated_;
};

Param float_param() {
  return {.name = "float",
          .type = ParamType::Flag,
          .fallback = "0",
          .doc = "also on float images (EXR, PFM), which are taken as linear already"};
}

FilterDef transfer_filter(const char* name, const char* summary, float (*fn)(float, float),
                          bool decode) {
  return {.name = name,
          .summary = summary,
          .params = {float_param(),
                     {.name = "curve",
                      .type = ParamType::Choice,
                      .fallback = "srgb",
                      .doc = "srgb: the sRGB curve; auto: a PNG's own gamma (gAMA chunk) when it "
                             "has one and no sRGB chunk or ICC profile, else sRGB",
                      .choices = {"srgb", "auto"}},
                     border_param()},
          .notes = {"pointwise; alpha unchanged; --linear puts `linear:curve=auto` first and "
                    "`srgb:curve=auto` last"},
          .example = name,
          .make =
              [name, fn, decode](const Args& args) {
                return std::make_unique<PointwiseStage>(args.spec_text(), name, fn, Kind::transfer,
                                                        args.flag("float"),
                                                        args.text("curve") == "auto", decode);
              },
          .mixes_neighbours = false};
}

FilterDef alpha_filter(const char* name, const char* summary, float (*fn)(float, float),
                       Kind kind) {
  return {.name = name,
          .summary = summary,
          .params = {{.name = "associated",
                      .type = ParamType::Flag,
                      .fallback = "0",
                      .doc = "the colour is premultiplied already (float files: EXR): no sample "
                             "changes, only whether the filters between the pair filter alpha "
                             "with the colour"},
                     border_param()},  // accepted like every filter's; pointwise, unused
          .notes = {"pointwise; halo run puts the pair around the filters that mix neighbours "
                    "for images with alpha, unless --straight-alpha (with associated=1 for "
                    "float files, whose colour is premultiplied already)"},
          .example = name,
          .make =
              [name, fn, kind](const Args& args) {
                return std::make_unique<PointwiseStage>(args.spec_text(), name, fn, kind, false,
                                                        false, false, 0.0f,
                                                        args.flag("associated"));
              },
          .mixes_neighbours = false,
          .handles_alpha = true};
}

}  // namespace

FilterDef linear_filter() {
  return transfer_filter("linear",
                         "decode the sRGB transfer curve: stored 8/16-bit values to linear light",
                         to_linear, true);
}

FilterDef srgb_filter() {
  return transfer_filter("srgb", "encode linear light with the sRGB transfer curve", to_srgb,
                         false);
}

FilterDef premultiply_filter() {
  return alpha_filter("premultiply",
                      "colour times alpha; the filters after it filter alpha with the colour "
                      "(associated alpha) until unpremultiply",
                      premultiplied, Kind::premultiply);
}

FilterDef unpremultiply_filter() {
  return alpha_filter("unpremultiply",
                      "colour divided by alpha: after premultiply (the last channel is alpha "
                      "again), or on a file whose colour is premultiplied (EXR); fully "
                      "transparent pixels become 0",
                      unpremultiplied, Kind::unpremultiply);
}

}  // namespace halo
