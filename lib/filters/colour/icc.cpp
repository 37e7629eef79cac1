// The icc stage: converts RGB from one ICC profile to another through LittleCMS. from=auto is
// the file's own: its embedded profile, else a profile built from PNG's gAMA and cHRM chunks,
// else sRGB (what viewers assume of an untagged file). The output is tagged with the profile
// converted to. LittleCMS's float transform is the reference; devices run it baked
// (filters/colour/color_lut.hpp).
#include <lcms2.h>

#include <array>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/paths.hpp"
#include "filters/colour/color_lut.hpp"

namespace halo {

namespace {

// Display-referred values: the cube's 0..1 evenly; curves also take -1..0 and 1..2 (a display
// view's output strays outside 0..1, and LittleCMS's float transforms carry it on).
constexpr Shaper kUnit{.kind = Shaper::Kind::linear, .lo = 0, .hi = 1};
constexpr Shaper kEncoded{
    .kind = Shaper::Kind::linear, .lo = 0, .hi = 2, .neg = 1.0f / 3, .neg_hi = 1};

using ProfileHandle = std::unique_ptr<void, decltype(&cmsCloseProfile)>;
using TransformHandle = std::shared_ptr<void>;

struct IccSpec {
  std::string from = "auto", to = "srgb";
  int intent = INTENT_PERCEPTUAL;
  bool bpc = false;
};

// A profile and what to call it.
struct Profile {
  ProfileHandle handle{nullptr, cmsCloseProfile};
  std::string name;
};

std::string description(cmsHPROFILE profile) {
  char text[256] = {};
  cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", text, sizeof text);
  return text[0] ? text : "unnamed profile";
}

Profile checked(const std::string& spec, cmsHPROFILE handle, const std::string& what) {
  if (!handle)
    throw Error(ErrorKind::Usage, fmt::format("filter '{}': {} is not an ICC profile LittleCMS "
                                              "reads",
                                              spec, what));
  Profile p{ProfileHandle(handle, cmsCloseProfile), description(handle)};
  if (cmsGetColorSpace(handle) != cmsSigRgbData)
    throw Error(ErrorKind::Usage, fmt::format("filter '{}': {} ('{}') is not an RGB profile: "
                                              "icc converts RGB images",
                                              spec, what, p.name));
  return p;
}

// A matrix-shaper profile from PNG's chunks: the gamma curve (gAMA holds the encoding
// exponent, so the decoding curve is its inverse), and cHRM's white and primaries (else
// sRGB's: D65 and Rec.709).
Profile from_png_chunks(const FileFacts& c) {
  const std::array<double, 8> srgb = {0.3127, 0.3290, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06};
  const std::array<double, 8>& x = c.has_chrm ? c.chrm : srgb;
  const cmsCIExyY white{x[0], x[1], 1.0};
  const cmsCIExyYTRIPLE primaries{{x[2], x[3], 1.0}, {x[4], x[5], 1.0}, {x[6], x[7], 1.0}};
  cmsToneCurve* curve = cmsBuildGamma(nullptr, c.gamma > 0 ? 1.0 / c.gamma : 2.2);
  cmsToneCurve* curves[3] = {curve, curve, curve};
  cmsHPROFILE profile = cmsCreateRGBProfile(&white, &primaries, curves);
  cmsFreeToneCurve(curve);
  return {ProfileHandle(profile, cmsCloseProfile),
          fmt::format("PNG gAMA {:g} (decoding gamma {:.3g}){}", c.gamma > 0 ? c.gamma : 1 / 2.2,
                      c.gamma > 0 ? 1 / c.gamma : 2.2, c.has_chrm ? " and cHRM" : "")};
}

Profile open_profile(const std::string& spec, const std::string& which, const FileFacts* file) {
  if (which == "srgb") return checked(spec, cmsCreate_sRGBProfile(), "sRGB");
  if (which == "auto") {
    if (file && !file->icc.empty())
      return checked(spec, cmsOpenProfileFromMem(file->icc.data(), file->icc.size()),
                     "the file's embedded profile");
    if (file && !file->srgb && (file->gamma > 0 || file->has_chrm)) return from_png_chunks(*file);
    return checked(spec, cmsCreate_sRGBProfile(), "sRGB");
  }
  const std::string bytes = read_small_file(which, std::size_t(64) << 20, "ICC profile");
  return checked(spec, cmsOpenProfileFromMem(bytes.data(), bytes.size()), which);
}

std::string profile_bytes(cmsHPROFILE profile) {
  cmsUInt32Number size = 0;
  cmsSaveProfileToMem(profile, nullptr, &size);
  std::string bytes(size, '\0');
  cmsSaveProfileToMem(profile, bytes.data(), &size);
  return bytes;
}

// A profile's three tone curves (red, green, blue TRC tags), owned by the profile.
std::array<const cmsToneCurve*, 3> tone_curves(cmsHPROFILE p) {
  return {static_cast<const cmsToneCurve*>(cmsReadTag(p, cmsSigRedTRCTag)),
          static_cast<const cmsToneCurve*>(cmsReadTag(p, cmsSigGreenTRCTag)),
          static_cast<const cmsToneCurve*>(cmsReadTag(p, cmsSigBlueTRCTag))};
}

// A matrix-shaper profile's RGB -> XYZ (D50) matrix: its colorant tags as columns.
std::array<std::array<double, 3>, 3> colorants(cmsHPROFILE p) {
  const cmsTagSignature tags[3] = {cmsSigRedColorantTag, cmsSigGreenColorantTag,
                                   cmsSigBlueColorantTag};
  std::array<std::array<double, 3>, 3> m{};
  for (int c = 0; c < 3; ++c) {
    const auto* xyz = static_cast<const cmsCIEXYZ*>(cmsReadTag(p, tags[c]));
    m[0][c] = xyz->X, m[1][c] = xyz->Y, m[2][c] = xyz->Z;
  }
  return m;
}

std::array<std::array<double, 3>, 3> inverse(const std::array<std::array<double, 3>, 3>& m) {
  const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                     m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                     m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  std::array<std::array<double, 3>, 3> r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const int a = (j + 1) % 3, b = (j + 2) % 3, c = (i + 1) % 3, d = (i + 2) % 3;
      r[i][j] = (m[a][c] * m[b][d] - m[a][d] * m[b][c]) / det;
    }
  return r;
}

// The affine map (rows of r, g, b, offset) that takes `in` to `out` best in least squares,
// from the normal equations in double.
std::array<double, 12> fitted_affine(const std::vector<std::array<double, 3>>& in,
                                     const std::vector<std::array<double, 3>>& out) {
  double a[4][4] = {}, b[4][3] = {};
  for (std::size_t i = 0; i < in.size(); ++i) {
    const double x[4] = {in[i][0], in[i][1], in[i][2], 1};
    for (int r = 0; r < 4; ++r) {
      for (int c = 0; c < 4; ++c) a[r][c] += x[r] * x[c];
      for (int k = 0; k < 3; ++k) b[r][k] += x[r] * out[i][k];
    }
  }
  for (int p = 0; p < 4; ++p) {  // Gauss-Jordan with partial pivoting
    int best = p;
    for (int r = p + 1; r < 4; ++r)
      if (std::fabs(a[r][p]) > std::fabs(a[best][p])) best = r;
    std::swap(a[p], a[best]);
    std::swap(b[p], b[best]);
    for (int r = 0; r < 4; ++r) {
      if (r == p || a[p][p] == 0) continue;
      const double f = a[r][p] / a[p][p];
      for (int c = 0; c < 4; ++c) a[r][c] -= f * a[p][c];
      for (int k = 0; k < 3; ++k) b[r][k] -= f * b[p][k];
    }
  }
  std::array<double, 12> m{};
  for (int k = 0; k < 3; ++k)
    for (int c = 0; c < 4; ++c) m[std::size_t(k) * 4 + c] = a[c][c] == 0 ? 0 : b[c][k] / a[c][c];
  return m;
}

// Both profiles matrix-shaper (most cameras', displays' and working spaces'): the conversion
// is the source's curves, its matrix to XYZ, the target's matrix back, the target's curves
// inverted, which a device computes nearly exactly. Black point compensation and the absolute
// intent add an affine step in XYZ, so the middle is then fitted to the transform itself
// (`exact`) in linear light. Checked against the transform when baked.
std::optional<SplitTransform> matrix_shaper_split(const IccSpec& icc, const Profile& from,
                                                  const Profile& to, const ColorTransform& exact) {
  cmsHPROFILE in = from.handle.get(), out = to.handle.get();
  if (!cmsIsMatrixShaper(in) || !cmsIsMatrixShaper(out)) return std::nullopt;
  const auto in_curves = tone_curves(in), out_curves = tone_curves(out);
  for (const auto* curve :
       {in_curves[0], in_curves[1], in_curves[2], out_curves[0], out_curves[1], out_curves[2]})
    if (!curve) return std::nullopt;
  std::shared_ptr<cmsToneCurve> reversed[3];
  for (int c = 0; c < 3; ++c) {
    reversed[c].reset(cmsReverseToneCurve(out_curves[c]), cmsFreeToneCurve);
    if (!reversed[c]) return std::nullopt;
  }
  // Linear light between the matrices: within +-16, and the target's curves read down to 2^-24
  // (a pure power curve such as Adobe RGB's rises steeply from 0).
  SplitTransform split{.before_shaper = kEncoded,
                       .after_shaper = {.kind = Shaper::Kind::log,
                                        .lo = -24,
                                        .hi = 4,
                                        .toe = 1.0f / 64,
                                        .neg = 0.5f,
                                        .neg_hi = 4}};
  if (icc.bpc || icc.intent == INTENT_ABSOLUTE_COLORIMETRIC) {
    std::vector<std::array<double, 3>> linear_in, linear_out;
    for (int i = 1; i < 8; ++i)
      for (int j = 1; j < 8; ++j)
        for (int k = 1; k < 8; ++k) {
          float rgb[3] = {float(i) / 8, float(j) / 8, float(k) / 8};
          std::array<double, 3> x{};
          for (int c = 0; c < 3; ++c) x[c] = cmsEvalToneCurveFloat(in_curves[c], rgb[c]);
          exact(rgb, 1);
          std::array<double, 3> y{};
          for (int c = 0; c < 3; ++c) y[c] = cmsEvalToneCurveFloat(out_curves[c], rgb[c]);
          linear_in.push_back(x), linear_out.push_back(y);
        }
    split.matrix = fitted_affine(linear_in, linear_out);
  } else {
    const auto to_xyz = colorants(in), from_xyz = inverse(colorants(out));
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) {
        double v = 0;
        for (int k = 0; k < 3; ++k) v += from_xyz[r][k] * to_xyz[k][c];
        split.matrix[std::size_t(r) * 4 + c] = v;
      }
      split.matrix[std::size_t(r) * 4 + 3] = 0;
    }
  }
  // Curves read from a profile belong to it, and the profiles close once the stage is made;
  // the bake comes later, so it keeps copies (the reversed ones are its own already).
  std::shared_ptr<cmsToneCurve> before[3];
  for (int c = 0; c < 3; ++c) before[c].reset(cmsDupToneCurve(in_curves[c]), cmsFreeToneCurve);
  const auto per_channel = [](std::array<std::shared_ptr<cmsToneCurve>, 3> curves) {
    return [curves](float* rgb, std::size_t pixels) {
      for (std::size_t i = 0; i < pixels * 3; ++i)
        rgb[i] = cmsEvalToneCurveFloat(curves[i % 3].get(), rgb[i]);
    };
  };
  split.before = per_channel({before[0], before[1], before[2]});
  split.after = per_channel({reversed[0], reversed[1], reversed[2]});
  return split;
}

class IccStage : public ColorTransformStage, public BoundToFile {
 public:
  IccStage(std::string spec, IccSpec icc, const FileFacts* file)
      : IccStage(spec, icc, open_profile(spec, icc.from, file),
                 open_profile(spec, icc.to, nullptr)) {}

  std::unique_ptr<Stage> for_file(const FileFacts& colour) const override {
    if (icc_.from != "auto") return nullptr;
    return std::make_unique<IccStage>(spec(), icc_, &colour);
  }

  // The output is tagged with the profile converted to.
  ImageDesc describe(const ImageDesc& in) const override {
    ImageDesc out = in;
    out.icc = output_icc_;
    return out;
  }

 private:
  IccStage(std::string spec, IccSpec icc, Profile from, Profile to)
      : ColorTransformStage(spec, plan(spec, icc, from, to)),
        icc_(std::move(icc)),
        output_icc_(profile_bytes(to.handle.get())) {}

  static Plan plan(const std::string& spec, const IccSpec& icc, const Profile& from,
                   const Profile& to) {
    const cmsUInt32Number flags =
        cmsFLAGS_NOCACHE | (icc.bpc ? cmsFLAGS_BLACKPOINTCOMPENSATION : 0);  // NOCACHE: threads
    void* made = cmsCreateTransform(from.handle.get(), TYPE_RGB_FLT, to.handle.get(), TYPE_RGB_FLT,
                                    cmsUInt32Number(icc.intent), flags);
    if (!made)
      throw Error(ErrorKind::Usage,
                  fmt::format("filter '{}': LittleCMS cannot convert '{}' to '{}' with this "
                              "intent",
                              spec, from.name, to.name));
    TransformHandle transform(made, cmsDeleteTransform);
    const ColorTransform exact = [transform](float* rgb, std::size_t pixels) {
      cmsDoTransform(transform.get(), rgb, rgb, cmsUInt32Number(pixels));
    };
    return {.bake = {.exact = exact,
                     .shaper = kUnit,
                     .curves_shaper = kEncoded,
                     .split = matrix_shaper_split(icc, from, to, exact)},
            .what = fmt::format("LittleCMS: '{}' -> '{}'", from.name, to.name),
            .key = fmt::format("icc {} {} ", icc.intent, int(icc.bpc)) +
                   profile_bytes(from.handle.get()) + profile_bytes(to.handle.get())};
  }

  IccSpec icc_;
  std::string output_icc_;
};

int intent_of(const std::string& name) {
  if (name == "relative") return INTENT_RELATIVE_COLORIMETRIC;
  if (name == "saturation") return INTENT_SATURATION;
  if (name == "absolute") return INTENT_ABSOLUTE_COLORIMETRIC;
  return INTENT_PERCEPTUAL;
}

}  // namespace

std::string lcms_version() {
  const int v = cmsGetEncodedCMMversion();  // 2140 for 2.14
  return fmt::format("LittleCMS {}.{}", v / 1000, v / 10 % 100);
}

FilterDef icc_filter() {
  return {.name = "icc",
          .summary =
              "convert RGB from the file's ICC profile (or PNG gamma) to sRGB or another "
              "profile; the output is tagged with it",
          .params = {{.name = "to",
                      .type = ParamType::Text,
                      .fallback = "srgb",
                      .doc = "srgb, or an ICC profile file"},
                     {.name = "from",
                      .type = ParamType::Text,
                      .fallback = "auto",
                      .doc = "auto: the file's embedded profile, else its PNG gAMA/cHRM chunks, "
                             "else sRGB; or srgb, or an ICC profile file"},
                     {.name = "intent",
                      .type = ParamType::Choice,
                      .fallback = "perceptual",
                      .doc = "the ICC rendering intent",
                      .choices = {"perceptual", "relative", "saturation", "absolute"}},
                     {.name = "bpc",
                      .type = ParamType::Flag,
                      .fallback = "0",
                      .doc = "black point compensation"},
                     border_param()},
          .notes = {"on the values as stored (8/16-bit: 0..1; run it before --linear's decoding "
                    "stages, which assume sRGB)",
                    "reference: LittleCMS's float transform; device: three curves when no channel "
                    "feeds another (a gamma change), curves, a matrix and curves between two "
                    "matrix-shaper profiles, else a 65^3 cube; -v shows which and its largest "
                    "error; --verify holds it to 2e-3 (half an 8-bit code)",
                    "samples outside the table's range (-1..2 for curves, 0..1 for a cube; -v) "
                    "are clamped to it first, on the reference too; a pixel with a NaN sample "
                    "comes out NaN",
                    "RGB(A), or grey as R = G = B keeping the result's green; a profile that is "
                    "not RGB is refused"},
          .example = "icc:to=srgb",
          .make =
              [](const Args& args) {
                const IccSpec spec{.from = args.text("from"),
                                   .to = args.text("to"),
                                   .intent = intent_of(args.text("intent")),
                                   .bpc = args.flag("bpc")};
                return std::make_unique<IccStage>(args.spec_text(), spec, nullptr);
              },
          .mixes_neighbours = false,
          .swept = false};  // RGB only, within the table's error: tests/engine/icc_test.cpp
}

}  // namespace halo
