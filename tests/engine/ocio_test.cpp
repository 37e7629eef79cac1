// The ocio and display stages: OpenColorIO's own values by hand, the device (OpenColorIO's own
// GPU program, or its baked tables) against OpenColorIO's CPU processor over the whole range of
// a render's values, NaN and infinities by the stated rule, in strips and chains, with halo's
// built-in config and with Blender's studio config; and the errors a user meets.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/error.hpp"
#include "filters/colour/color_lut.hpp"
#include "filters/registry.hpp"
#include "pipeline/pipeline.hpp"
#include "separable_support.hpp"

using namespace halo;

namespace {

// Debian's blender-data (scripts/setup installs it): a studio config with LUT files.
const std::string kBlenderConfig = "/usr/share/blender/datafiles/colormanagement/config.ocio";

float one(const std::string& spec, float r, float g, float b, int channel = 0) {
  Image in(1, 1, 3);
  in.at(0, 0, 0) = r, in.at(0, 0, 1) = g, in.at(0, 0, 2) = b;
  return make_stage(spec)->reference(in).at(0, 0, channel);
}

// A render's values: most below 1, some far above, a few negative (unless a cube takes it: it
// reads negative values as 0), with alpha.
Image render_like(int width, int height, bool alpha, bool negatives = true) {
  Image in = test::random_image(width, height, alpha ? 4 : 3, alpha, 11);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        float& v = in.at(x, y, c);
        const int k = (x * 7 + y * 13 + c * 5) % 17;
        v = k == 0 ? v * 200.0f : k == 1 && negatives ? -0.01f * v : k < 6 ? v * 4.0f : v * v;
      }
  return in;
}

const ColorLut& lut_of(const std::string& spec) {
  static std::vector<std::unique_ptr<Stage>> kept;
  kept.push_back(make_stage(spec));
  return dynamic_cast<const ColorTransformStage&>(*kept.back()).lut();
}

}  // namespace

TEST_CASE("ocio with the built-in config: OpenColorIO's values, which match the formulas") {
  // The sRGB curve: 1.055 v^(1/2.4) - 0.055 above 0.0031308, 12.92 v below.
  CHECK(one("ocio:from=linear:to=srgb", 0.5f, 0.5f, 0.5f) ==
        doctest::Approx(1.055 * std::pow(0.5, 1 / 2.4) - 0.055).epsilon(1e-5));
  CHECK(one("ocio:from=linear:to=srgb", 0.001f, 0, 0) == doctest::Approx(0.01292).epsilon(1e-4));
  CHECK(one("ocio:from=srgb:to=linear", 1, 1, 1) == doctest::Approx(1.0).epsilon(1e-5));
  // ACEScg to linear Rec.709: the AP1 -> Rec.709 matrix's first row (1.70505, -0.62179,
  // -0.08326) on pure AP1 red, green and blue.
  CHECK(one("ocio:from=ACEScg:to=linear", 1, 0, 0) == doctest::Approx(1.70505).epsilon(1e-4));
  CHECK(one("ocio:from=ACEScg:to=linear", 0, 1, 0) == doctest::Approx(-0.62179).epsilon(1e-4));
  CHECK(one("ocio:from=acescg:to=lin_srgb", 0, 0, 1) == doctest::Approx(-0.08326).epsilon(1e-3));
  // The display's default view is the ACES 1.0 SDR video transform: scene grey 0.18 shows at
  // 0.356 (ACES's own figure, about 10 nits of 48... in sRGB code values), white 1.0 at 0.81.
  CHECK(one("display", 0.18f, 0.18f, 0.18f) == doctest::Approx(0.35595).epsilon(1e-3));
  CHECK(one("display", 1, 1, 1) == doctest::Approx(0.81197).epsilon(1e-3));
  // Standard: the sRGB curve only, unbounded above.
  CHECK(one("display:view=standard", 0.18f, 0.18f, 0.18f) ==
        doctest::Approx(1.055 * std::pow(0.18, 1 / 2.4) - 0.055).epsilon(1e-4));
}

TEST_CASE("the table kinds: a matrix exactly, curves near-exactly, a cube within its error") {
  CHECK(lut_of("ocio:from=ACEScg:to=linear").kind == ColorLut::Kind::matrix);
  CHECK(lut_of("ocio:from=ACEScg:to=linear").error < 1e-6);
  const ColorLut& curves = lut_of("ocio:from=linear:to=srgb");
  CHECK(curves.kind == ColorLut::Kind::curves);
  CHECK(curves.shaper.kind == Shaper::Kind::log);  // curves: always by stops, both signs
  CHECK(curves.shaper.neg == 0.5f);
  CHECK(curves.error < 1e-4);
  // The ACES view as a table (devices run OpenColorIO's program for it; a table is what a
  // transform with dynamic properties gets).
  const ColorLut& cube = lut_of("display:cube=65");
  CHECK(cube.shaper.kind == Shaper::Kind::log);  // a linear-light source: spaced by stops
  CHECK(lut_of("ocio:from=srgb:to=ACEScg").shaper.kind == Shaper::Kind::linear);
  CHECK(cube.kind == ColorLut::Kind::cube);
  CHECK(cube.size == 65);
  CHECK(cube.shaper.neg == 4.0f / 64);  // small negative values have cells of their own
  CHECK(cube.error < 0.05);
  // cube=auto: 129 entries where 65 leave more than half an 8-bit code.
  const ColorLut& finer = lut_of("display");
  CHECK(finer.size == 129);
  CHECK(finer.error < cube.error);
}

TEST_CASE("a shaper's inverse is its inverse, and the toe meets the stops") {
  const Shaper log{.kind = Shaper::Kind::log, .lo = -12, .hi = 14};
  for (float u : {0.0f, 0.01f, 1.0f / 64, 0.3f, 0.999f, 1.0f})
    CHECK(log(log.inverse(u)) == doctest::Approx(u).epsilon(1e-5));
  const Shaper both{
      .kind = Shaper::Kind::log, .lo = -12, .hi = 14, .toe = 1.0f / 64, .neg = 0.5f, .neg_hi = 14};
  CHECK(both(0.0f) == 0.5f);
  CHECK(both(-2.0f) == doctest::Approx(1.0f - both(2.0f)).epsilon(1e-6));
  CHECK(both.inverse(both(-3.0f)) == doctest::Approx(-3.0f).epsilon(1e-4));
  // A cube's: a sixteenth of 64 cells for -1..0, one for the toe, so 0 and 2^-12 are edges.
  const Shaper cube{
      .kind = Shaper::Kind::log, .lo = -12, .hi = 14, .toe = 1.0f / 60, .neg = 4.0f / 64};
  CHECK(cube(0.0f) * 64 == doctest::Approx(4.0).epsilon(1e-6));
  CHECK(cube(std::exp2(-12.0f)) * 64 == doctest::Approx(5.0).epsilon(1e-5));
  CHECK(cube(-1.0f) == 0.0f);
  CHECK(cube(-0.25f) > 0.0f);
  CHECK(cube.inverse(cube(-0.1f)) == doctest::Approx(-0.1f).epsilon(1e-4));
  CHECK(log(std::exp2(-12.0f)) == doctest::Approx(1.0 / 64).epsilon(1e-6));
  CHECK(log(-3.0f) == 0.0f);
  CHECK(log(std::nanf("")) == 0.0f);
  CHECK(log(1e9f) == 1.0f);
  const Shaper unit;
  CHECK(unit(0.25f) == 0.25f);
  CHECK(unit(std::nanf("")) == 0.0f);
}

TEST_CASE("ocio and display on the device agree with OpenColorIO's CPU processor") {
  Device& device = test::device();
  for (const std::string spec :
       {"ocio:from=ACEScg:to=linear", "ocio:from=linear:to=srgb", "ocio:from=srgb:to=linear",
        "display", "display:view=Standard", "ocio:from=linear:to=ACEScct"}) {
    const auto stage = make_stage(spec);
    const double tolerance = verify_tolerance(*stage, device, 1e-6);
    const bool cube = lut_of(spec).kind == ColorLut::Kind::cube;
    for (const auto& [w, h, alpha] : {std::tuple{1, 1, false}, {7, 5, true}, {1023, 517, false}})
      test::check_device_matches(device, spec, render_like(w, h, alpha, !cube), tolerance);
  }
  // A matrix: the same float arithmetic as OpenColorIO's.
  test::check_device_matches(device, "ocio:from=ACEScg:to=linear", render_like(61, 37, true), 0);
}

// Colours of every hue over 2^-30..2^33 (past COLOUR_BOUND), zeros, negatives, NaN and
// infinities: as a render's pixels can be.
Image every_value(int width, int height) {
  Image in(width, height, 3);
  std::uint32_t state = 12345;
  const auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return float(state >> 8) / float(1 << 24);
  };
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c) {
        float v = std::exp2(next() * 63 - 30) * (next() < 0.2f ? -1.0f : 1.0f);
        const float pick = next();
        if (pick < 0.05f) v = 0;
        if (pick > 0.995f) v = std::numeric_limits<float>::infinity();
        if (pick > 0.998f) v = -std::numeric_limits<float>::infinity();
        if (pick > 0.999f) v = std::nanf("");
        in.at(x, y, c) = v;
      }
  return in;
}

// The ACES view through a 65^3 cube was up to 10 codes from OpenColorIO in 8-bit output on such
// colours, and made NaN where the CPU made a value (and the other way round).
TEST_CASE(
    "display and ocio on the device: OpenColorIO's own program, within 1e-4 of its CPU "
    "over every value, NaN and infinities as stated") {
  Device& device = test::device();
  const Image in = every_value(211, 97);
  for (const std::string spec : {"display", "display:view=Standard", "ocio:from=linear:to=ACEScct",
                                 "ocio:from=ACEScg:to=srgb"}) {
    INFO(spec);
    const auto stage = make_stage(spec);
    CHECK(stage->details()[1] == "on a device: OpenColorIO's own GPU program (analytic, no table)");
    const double tolerance = verify_tolerance(*stage, device, 1e-6);
    CHECK(tolerance == 1e-4);
    test::check_device_matches(device, spec, in, tolerance);
    // The rule itself: a NaN sample makes the pixel NaN; +Inf is taken as 2^32.
    const Image out = stage->reference(in);
    for (int y = 0; y < in.height(); ++y)
      for (int x = 0; x < in.width(); ++x) {
        const bool nan =
            std::isnan(in.at(x, y, 0)) || std::isnan(in.at(x, y, 1)) || std::isnan(in.at(x, y, 2));
        for (int c = 0; c < 3; ++c) REQUIRE(std::isnan(out.at(x, y, c)) == nan);
      }
    CHECK(one(spec, std::numeric_limits<float>::infinity(), 1, 1) == one(spec, 0x1p32f, 1, 1));
  }
}

TEST_CASE("Blender's config: its Filmic view through its LUT files, on the device too") {
  REQUIRE_MESSAGE(std::filesystem::exists(kBlenderConfig), "blender-data is not installed");
  const std::string filmic = "display:config=" + kBlenderConfig + ":view=Filmic";
  // Filmic puts scene grey 0.18 at about half the display's range.
  CHECK(one(filmic, 0.18f, 0.18f, 0.18f) == doctest::Approx(0.5).epsilon(0.05));
  CHECK(one(filmic, 0.18f, 0.18f, 0.18f) < one(filmic, 1, 1, 1));
  CHECK(one("display:config=" + kBlenderConfig + ":view=standard", 0.18f, 0.18f, 0.18f) ==
        doctest::Approx(1.055 * std::pow(0.18, 1 / 2.4) - 0.055).epsilon(1e-3));
  const std::string to_aces = "ocio:config=" + kBlenderConfig + ":from=Linear:to=Linear ACES";
  CHECK(lut_of(to_aces).kind == ColorLut::Kind::matrix);
  // Filmic through OpenColorIO's GPU program with its LUT files as textures (a 65^3 cube, and a
  // 129^3 one, were 0.0044 and 0.0047 off near its floor at 2^-12.5).
  CHECK(make_stage(filmic)->details()[1] ==
        "on a device: OpenColorIO's own GPU program (analytic, no table)");
  Device& device = test::device();
  const std::string false_colour =
      "display:config=" + kBlenderConfig + ":view=False Color";  // two 3D LUTs
  for (const std::string& spec : {filmic, to_aces, false_colour}) {
    const double tolerance = verify_tolerance(*make_stage(spec), device, 1e-6);
    CHECK(tolerance <= 1e-4);
    test::check_device_matches(device, spec, render_like(97, 41, true, false), tolerance);
    test::check_device_matches(device, spec, every_value(67, 31), tolerance);
  }
}

TEST_CASE("ocio and display in strips and chains equal the whole image, under --verify") {
  Device& device = test::device();
  // A render without negative values (a cube, display's, reads them as 0 where OpenColorIO
  // extends them), and a photo's values in [0, 1].
  const PixelBuffer render = to_pixels(render_like(53, 37, true, false), PixelType::f32);
  const PixelBuffer photo = to_pixels(test::random_image(53, 37, 4, true, 5), PixelType::f32);
  for (const auto& entry :
       {std::pair<std::string, const PixelBuffer&>{"exposure:stops=2,display", render},
        {"ocio:from=srgb:to=linear,gaussian:sigma=1.5,ocio:from=linear:to=srgb", photo}}) {
    const std::string& chain = entry.first;  // not a binding: INFO captures it
    const PixelBuffer& input = entry.second;
    std::vector<StageSpec> steps;
    for (std::size_t at = 0, next; at != std::string::npos; at = next) {
      next = chain.find(',', at);
      steps.push_back({chain.substr(at, next == std::string::npos ? next : next - at), ""});
      if (next != std::string::npos) ++next;
    }
    const Pipeline pipeline(steps);
    RunOptions options;
    options.stream.verify = true;
    options.stream.tolerance = 1e-6;
    for (const int strip_rows : {1, 6, 37}) {
      options.stream.strip_rows = strip_rows;
      const RunResult got = run_device(device, pipeline, input, PixelType::f32, options);
      device.take_timings();
      std::string checks;
      for (const auto& check : got.checks)
        checks += check.stage + " " + check.result.summary() + "; ";
      INFO(chain, " in strips of ", strip_rows, ": ", checks);
      CHECK(got.ok());
    }
  }
}

TEST_CASE("colour errors name the filter, the config and what it has") {
  CHECK_THROWS_WITH(make_stage("ocio:from=nope:to=linear"),
                    doctest::Contains("no colour space 'nope' in halo's built-in config (have "));
  CHECK_THROWS_WITH(make_stage("ocio:from=nope:to=linear"), doctest::Contains("ACEScg"));
  CHECK_THROWS_WITH(make_stage("ocio:from=linear"), doctest::Contains("'to': required"));
  CHECK_THROWS_WITH(make_stage("display:view=Filmic"),
                    doctest::Contains("no view 'Filmic' for display 'sRGB'"));
  CHECK_THROWS_WITH(make_stage("display:display=P3"), doctest::Contains("(have sRGB)"));
  CHECK_THROWS_WITH(make_stage("display:config=/nonexistent.ocio"),
                    doctest::Contains("filter 'display:config=/nonexistent.ocio': "
                                      "/nonexistent.ocio: cannot read OpenColorIO config"));
  Image two(3, 2, 2);  // two colour channels, no alpha
  CHECK_THROWS_WITH(make_stage("display")->reference(two),
                    doctest::Contains("needs three colour channels (RGB or RGBA) or one (grey); "
                                      "this image has 2"));
}

TEST_CASE("a grey image goes through a colour stage as R = G = B, keeping the result's green") {
  Image grey(1, 1, 1);
  grey.at(0, 0, 0) = 0.18f;
  for (const char* spec : {"display", "ocio:from=linear:to=srgb", "ocio:from=ACEScg:to=linear"})
    CHECK(make_stage(spec)->reference(grey).at(0, 0, 0) == one(spec, 0.18f, 0.18f, 0.18f, 1));
  Device& device = test::device();
  for (const std::string spec : {"display", "ocio:from=linear:to=srgb", "ocio:from=srgb:to=ACEScg",
                                 "ocio:from=ACEScg:to=linear"}) {
    const double tolerance = verify_tolerance(*make_stage(spec), device, 1e-6);
    Image in = test::random_image(61, 37, 2, true, 4);  // grey and alpha
    test::check_device_matches(device, spec, in, tolerance);
  }
}

TEST_CASE("a colour table is kept in the cache folder and read back by the next process") {
  const auto dir = std::filesystem::temp_directory_path() / "halo-colour-table-test";
  std::filesystem::remove_all(dir);
  int calls = 0;
  ColorBake bake{.exact =
                     [&calls](float* rgb, std::size_t n) {
                       ++calls;
                       for (std::size_t i = 0; i < n * 3; i += 3) std::swap(rgb[i], rgb[i + 2]);
                     },
                 .shaper = {.kind = Shaper::Kind::linear, .lo = 0, .hi = 1},
                 .cube_size = 17};
  const ColorLut first = cached_color_lut("swap red and blue", bake, dir);
  CHECK(calls > 0);
  CHECK(first.kind == ColorLut::Kind::cube);  // channels trade places: no curves hold it
  REQUIRE(std::filesystem::exists(dir / "colour-tables"));
  calls = 0;
  const ColorLut again = cached_color_lut("swap red and blue", bake, dir);
  CHECK(calls == 0);  // read, not baked
  CHECK(again.table == first.table);
  CHECK(again.error == first.error);
  CHECK(again.size == 17);
  // Another key, or another cube size, is another table; a damaged file is baked again.
  cached_color_lut("another transform", bake, dir);
  CHECK(calls > 0);
  for (const auto& file : std::filesystem::directory_iterator(dir / "colour-tables"))
    std::filesystem::resize_file(file.path(), 20);
  calls = 0;
  const ColorLut rebaked = cached_color_lut("swap red and blue", bake, dir);
  CHECK(calls > 0);
  CHECK(rebaked.table == first.table);
  std::filesystem::remove_all(dir);
}
