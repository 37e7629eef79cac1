// The icc stage: LittleCMS's conversions by hand (a gamma change, wider primaries), the
// device's baked tables against LittleCMS, profiles taken from the file (embedded, or PNG's
// gAMA and cHRM), and the errors a user meets. Profiles are made here with LittleCMS.
#include <doctest/doctest.h>
#include <lcms2.h>

#include <cmath>
#include <fstream>

#include "core/error.hpp"
#include "filters/colour/color_lut.hpp"
#include "filters/registry.hpp"
#include "separable_support.hpp"

using namespace halo;

namespace {

double srgb_encode(double v) {
  return v <= 0.0031308 ? v * 12.92 : 1.055 * std::pow(v, 1 / 2.4) - 0.055;
}

// A profile's bytes, the profile closed.
std::string bytes_of(cmsHPROFILE profile) {
  cmsUInt32Number size = 0;
  cmsSaveProfileToMem(profile, nullptr, &size);
  std::string bytes(size, '\0');
  cmsSaveProfileToMem(profile, bytes.data(), &size);
  cmsCloseProfile(profile);
  return bytes;
}

// An RGB profile with sRGB's white and primaries (or Adobe RGB (1998)'s) and a pure gamma.
std::string rgb_profile(double gamma, bool adobe_primaries) {
  const cmsCIExyY white{0.3127, 0.3290, 1.0};
  const cmsCIExyYTRIPLE srgb{{0.64, 0.33, 1.0}, {0.30, 0.60, 1.0}, {0.15, 0.06, 1.0}};
  const cmsCIExyYTRIPLE adobe{{0.64, 0.33, 1.0}, {0.21, 0.71, 1.0}, {0.15, 0.06, 1.0}};
  cmsToneCurve* curve = cmsBuildGamma(nullptr, gamma);
  cmsToneCurve* curves[3] = {curve, curve, curve};
  cmsHPROFILE p = cmsCreateRGBProfile(&white, adobe_primaries ? &adobe : &srgb, curves);
  cmsFreeToneCurve(curve);
  return bytes_of(p);
}

std::string saved(const std::string& name, const std::string& bytes) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

Image ramp(int width, int height, bool alpha) {
  Image in = test::random_image(width, height, alpha ? 4 : 3, alpha, 3);
  return in;  // values in [0, 1): an 8/16-bit file's
}

float converted(const Stage& stage, float r, float g, float b, int channel) {
  Image in(1, 1, 3);
  in.at(0, 0, 0) = r, in.at(0, 0, 1) = g, in.at(0, 0, 2) = b;
  return stage.reference(in).at(0, 0, channel);
}

}  // namespace

TEST_CASE("icc by hand: a gamma 1.8 file to sRGB, and Adobe RGB's green to sRGB's") {
  const std::string g18 = saved("halo-test-g18.icc", rgb_profile(1.8, false));
  const auto stage = make_stage("icc:from=" + g18);
  for (const float v : {0.1f, 0.5f, 0.9f})  // the same primaries: v^1.8, then the sRGB curve
    CHECK(converted(*stage, v, v, v, 0) ==
          doctest::Approx(srgb_encode(std::pow(v, 1.8))).epsilon(2e-3));
  // Adobe RGB's pure green is outside sRGB: red goes negative (the float transform does not
  // clip), green above... at least its sRGB value exceeds Adobe's own green's share.
  const std::string adobe = saved("halo-test-adobe.icc", rgb_profile(563.0 / 256, true));
  const auto wide = make_stage("icc:from=" + adobe + ":intent=relative");
  CHECK(converted(*wide, 0, 1, 0, 0) < 0.0f);
  CHECK(converted(*wide, 0.5f, 0.5f, 0.5f, 1) ==
        doctest::Approx(srgb_encode(std::pow(0.5, 563.0 / 256))).epsilon(3e-3));
  // sRGB to sRGB changes nothing but rounding.
  CHECK(converted(*make_stage("icc"), 0.25f, 0.5f, 0.75f, 2) ==
        doctest::Approx(0.75f).epsilon(1e-3));
}

TEST_CASE("icc on the device agrees with LittleCMS: curves, a matrix and curves") {
  const std::string g18 = saved("halo-test-g18.icc", rgb_profile(1.8, false));
  const std::string adobe = saved("halo-test-adobe.icc", rgb_profile(563.0 / 256, true));
  Device& device = test::device();
  for (const std::string& spec :
       {"icc:from=" + g18, "icc:from=" + adobe, "icc:from=srgb:to=" + adobe}) {
    const auto stage = make_stage(spec);
    const auto& lut = dynamic_cast<const ColorTransformStage&>(*stage).lut();
    // Matrix-shaper profiles: their curves, one matrix, the target's curves inverted.
    CHECK(lut.kind == ColorLut::Kind::split);
    CHECK(lut.error < 1e-4);
    const double tolerance = verify_tolerance(*stage, device, 1e-6);
    for (const auto& [w, h, alpha] : {std::tuple{1, 1, false}, {7, 5, true}, {1023, 517, false}})
      test::check_device_matches(device, spec, ramp(w, h, alpha), tolerance);
  }
}

TEST_CASE("icc from the file: its embedded profile, else PNG gamma and chromaticities, else sRGB") {
  const auto stage = make_stage("icc");
  CHECK(*stage->describe({}).icc == *make_stage("icc:to=srgb")->describe({}).icc);
  FileFacts png{.gamma = 1 / 1.8};
  const auto from_gamma = for_file(*stage, png);
  REQUIRE(from_gamma);
  CHECK(converted(*from_gamma, 0.5f, 0.5f, 0.5f, 1) ==
        doctest::Approx(srgb_encode(std::pow(0.5, 1.8))).epsilon(2e-3));
  FileFacts embedded{.icc = rgb_profile(1.8, false)};
  CHECK(converted(*for_file(*stage, embedded), 0.5f, 0.5f, 0.5f, 1) ==
        doctest::Approx(srgb_encode(std::pow(0.5, 1.8))).epsilon(2e-3));
  FileFacts marked_srgb{.gamma = 0.45455, .srgb = true};  // the sRGB chunk wins over gAMA
  CHECK(converted(*for_file(*stage, marked_srgb), 0.5f, 0.5f, 0.5f, 1) ==
        doctest::Approx(0.5).epsilon(1e-3));
  CHECK_FALSE(for_file(*make_stage("icc:from=srgb"), png));  // not from=auto: not the file's
}

TEST_CASE("icc errors name the filter and the profile") {
  const std::string junk = saved("halo-test-junk.icc", "not a profile at all");
  CHECK_THROWS_WITH(make_stage("icc:from=" + junk),
                    doctest::Contains("is not an ICC profile LittleCMS reads"));
  cmsToneCurve* curve = cmsBuildGamma(nullptr, 2.2);
  cmsHPROFILE grey = cmsCreateGrayProfile(cmsD50_xyY(), curve);
  cmsFreeToneCurve(curve);
  CHECK_THROWS_WITH(make_stage("icc:to=" + saved("halo-test-grey.icc", bytes_of(grey))),
                    doctest::Contains("is not an RGB profile"));
  CHECK_THROWS_WITH(make_stage("icc:to=/nonexistent.icc"), doctest::Contains("/nonexistent.icc"));
  CHECK_THROWS_WITH(make_stage("icc:intent=best"), doctest::Contains("'intent'"));
}

// A 65^3 cube was 0.024 (6 codes) off LittleCMS near black for Adobe RGB with bpc=1.
TEST_CASE(
    "icc with black point compensation or the absolute intent: curves, a fitted affine "
    "step, curves") {
  const std::string adobe = saved("halo-test-adobe.icc", rgb_profile(563.0 / 256, true));
  Device& device = test::device();
  for (const std::string& spec :
       {"icc:from=" + adobe + ":bpc=1", "icc:from=" + adobe + ":intent=absolute",
        "icc:to=" + adobe + ":intent=absolute:bpc=1"}) {
    INFO(spec);
    const auto stage = make_stage(spec);
    const auto& lut = dynamic_cast<const ColorTransformStage&>(*stage).lut();
    CHECK(lut.kind == ColorLut::Kind::split);
    CHECK(lut.error < 1e-4);
    test::check_device_matches(device, spec, ramp(61, 37, true),
                               verify_tolerance(*stage, device, 1e-6));
  }
}

TEST_CASE("icc carries values outside 0..1 (a display view's output) as LittleCMS does") {
  Image in = test::random_image(67, 9, 3, false, 8);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 9; ++y)
      for (int x = 0; x < 67; ++x) in.at(x, y, c) = in.at(x, y, c) * 2.6f - 0.8f;  // -0.8..1.8
  const std::string adobe = saved("halo-test-adobe.icc", rgb_profile(563.0 / 256, true));
  Device& device = test::device();
  for (const std::string& spec : {std::string("icc"), "icc:to=" + adobe + ":intent=relative"}) {
    const auto stage = make_stage(spec);
    CHECK(dynamic_cast<const ColorTransformStage&>(*stage).lut().error < 1e-3);
    test::check_device_matches(device, spec, in, verify_tolerance(*stage, device, 1e-6));
  }
}
