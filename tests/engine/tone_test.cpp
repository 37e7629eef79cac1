// Tone and value stages: hand-computed values, and the device against the reference bit for
// bit on odd sizes, with NaN and infinities among the samples.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "filters/registry.hpp"
#include "separable_support.hpp"

using namespace halo;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Image run(const std::string& spec, const Image& in) {
  return make_stage(spec)->reference(in);
}

// A random image whose samples include NaN, +-Inf and values far above 1 (a render's).
Image hostile_render(int width, int height, int channels, bool alpha) {
  Image in = test::random_image(width, height, channels, alpha, 7);
  for (int c = 0; c < in.color_channels(); ++c)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        float& v = in.at(x, y, c);
        const int k = (x * 7 + y * 13 + c * 5) % 23;
        v = k == 0 ? kNaN : k == 1 ? kInf : k == 2 ? -kInf : k < 8 ? v * 40.0f : v;
      }
  return in;
}

}  // namespace

TEST_CASE("exposure, mul and add by hand: colour scaled or shifted, alpha unchanged") {
  const Image in = test::from_rows({{0.25f, 0.5f, 2.0f}});
  CHECK(run("exposure:stops=1", in).at(1, 0, 0) == 1.0f);
  CHECK(run("exposure:stops=-2", in).at(2, 0, 0) == 0.5f);
  CHECK(run("exposure:stops=0.5", in).at(0, 0, 0) == 0.25f * float(std::sqrt(2.0)));
  Image rgba(2, 1, 4, true);
  for (int c = 0; c < 4; ++c) rgba.at(0, 0, c) = rgba.at(1, 0, c) = 0.5f;
  const Image balanced = run("mul:k=2,1,0.5", rgba);
  CHECK(balanced.at(0, 0, 0) == 1.0f);
  CHECK(balanced.at(1, 0, 1) == 0.5f);
  CHECK(balanced.at(0, 0, 2) == 0.25f);
  CHECK(balanced.at(0, 0, 3) == 0.5f);  // alpha
  const Image lifted = run("add:k=0.25", rgba);
  CHECK(lifted.at(1, 0, 2) == 0.75f);
  CHECK(lifted.at(1, 0, 3) == 0.5f);
  CHECK_THROWS_WITH(run("mul:k=1,2", rgba), doctest::Contains("2 values for an image of 3"));
}

TEST_CASE("clamp limits the colour and lets NaN through; fixnan replaces NaN and infinities") {
  const Image in = test::from_rows({{-1.0f, 0.5f, 3.0f, kNaN}});
  const Image clamped = run("clamp:min=0:max=1", in);
  CHECK(clamped.at(0, 0, 0) == 0.0f);
  CHECK(clamped.at(1, 0, 0) == 0.5f);
  CHECK(clamped.at(2, 0, 0) == 1.0f);
  CHECK(std::isnan(clamped.at(3, 0, 0)));
  CHECK_THROWS_WITH(make_stage("clamp:min=2:max=1"), doctest::Contains("max"));

  // A NaN in the middle of 1..8: their mean; an Inf in a corner: its three finite neighbours.
  const Image grid = test::from_rows({{1, 2, 3}, {4, kNaN, 5}, {6, 7, kInf}});
  const Image fixed = run("fixnan", grid);
  CHECK(fixed.at(1, 1, 0) == 4.0f);  // (1+2+3+4+5+6+7) / 7: the Inf corner does not count
  CHECK(fixed.at(2, 2, 0) == 6.0f);  // (5 + 7) / 2: the NaN does not count either
  CHECK(fixed.at(0, 0, 0) == 1.0f);
  const Image valued = run("fixnan:mode=value:value=-1", grid);
  CHECK(valued.at(1, 1, 0) == -1.0f);
  CHECK(valued.at(2, 2, 0) == -1.0f);
  CHECK(valued.at(2, 1, 0) == 5.0f);
  const Image lonely = run("fixnan:value=0.25", test::from_rows({{kNaN}}));
  CHECK(lonely.at(0, 0, 0) == 0.25f);  // no neighbour at all
}

TEST_CASE("tonemap by hand: ACES's fit and Reinhard's operator") {
  const Image in = test::from_rows({{0.0f, 1.0f, 1000.0f, -1.0f}});
  const Image aces = run("tonemap", in);
  CHECK(aces.at(0, 0, 0) == 0.0f);
  // x = 0.6: 0.6 (2.51 * 0.6 + 0.03) / (0.6 (2.43 * 0.6 + 0.59) + 0.14) = 0.9216 / 1.3688
  CHECK(aces.at(1, 0, 0) == doctest::Approx(0.9216 / 1.3688).epsilon(1e-6));
  CHECK(aces.at(2, 0, 0) == 1.0f);
  CHECK(aces.at(3, 0, 0) == 0.0f);
  // One colour channel: v / (1 + v), and with white 2: v (1 + v / 4) / (1 + v).
  const Image grey = run("tonemap:curve=reinhard", test::from_rows({{1.0f, 3.0f}}));
  CHECK(grey.at(0, 0, 0) == 0.5f);
  CHECK(grey.at(1, 0, 0) == 0.75f);
  CHECK(run("tonemap:curve=reinhard:white=2", test::from_rows({{2.0f}})).at(0, 0, 0) == 1.0f);
  // RGB: scaled by Ld / L of Rec.709 luminance, so hue is kept.
  Image rgb(1, 1, 3);
  rgb.at(0, 0, 0) = 2.0f, rgb.at(0, 0, 1) = 1.0f, rgb.at(0, 0, 2) = 0.5f;
  const Image mapped = run("tonemap:curve=reinhard", rgb);
  const double l = 0.2126 * 2 + 0.7152 * 1 + 0.0722 * 0.5, s = 1 / (1 + l);
  CHECK(mapped.at(0, 0, 0) == doctest::Approx(2 * s).epsilon(1e-6));
  CHECK(mapped.at(0, 0, 2) == doctest::Approx(0.5 * s).epsilon(1e-6));
  CHECK(mapped.at(0, 0, 0) / mapped.at(0, 0, 1) == doctest::Approx(2.0).epsilon(1e-6));
  // +Inf red was Inf / Inf = NaN in all three channels: now the operator's limit, 1 / 0.2126
  // (the largest float's luminance maps to 1); a NaN luminance makes the pixel NaN; with a
  // white point, +Inf stays bright (Inf: L (1 + L / w^2) overflows no sooner than it must).
  Image special(2, 1, 3);
  special.at(0, 0, 0) = kInf, special.at(0, 0, 1) = 1.0f, special.at(0, 0, 2) = 1.0f;
  special.at(1, 0, 0) = kNaN, special.at(1, 0, 1) = 1.0f, special.at(1, 0, 2) = 1.0f;
  const Image limit = run("tonemap:curve=reinhard", special);
  CHECK(limit.at(0, 0, 0) == doctest::Approx(1 / 0.2126).epsilon(1e-5));
  CHECK(limit.at(0, 0, 1) >= 0.0f);
  for (int c = 0; c < 3; ++c) CHECK(std::isnan(limit.at(1, 0, c)));
  const Image white = run("tonemap:curve=reinhard:white=4", special);
  CHECK(std::isfinite(white.at(0, 0, 0)));
  CHECK(white.at(0, 0, 0) > 1e36f);
}

TEST_CASE("tone stages on the device equal the reference bit for bit, NaN and Inf included") {
  const char* specs[] = {"exposure:stops=-1.3",
                         "mul:k=1.1,0.9,2",
                         "add:k=-0.5",
                         "clamp:min=0.1:max=0.9",
                         "fixnan",
                         "fixnan:mode=value:value=3",
                         "tonemap",
                         "tonemap:curve=reinhard:white=8"};
  for (const char* spec : specs) {
    test::check_device_bits(spec, hostile_render(1, 1, 3, false));
    test::check_device_bits(spec, hostile_render(7, 5, 4, true));
    test::check_device_bits(spec, hostile_render(1023, 517, 3, false));
  }
  for (const char* spec : {"tonemap:curve=reinhard", "fixnan", "exposure"})
    test::check_device_bits(spec, hostile_render(61, 29, 1, false));
}
