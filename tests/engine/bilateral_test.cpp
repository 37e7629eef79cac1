// bilateral: flags of hand-made guides, walks that never cross a flagged edge, albedo
// demodulation, self-guided mode, and the device against the reference on odd sizes.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "engine/guided_support.hpp"

using namespace halo;

namespace {

// The flags the reference computes for `guides` (8-bit bits from the flags image).
std::vector<std::vector<int>> flags_of(const Guides& guides,
                                       const std::string& spec = "bilateral") {
  auto f = test::guided_stage(spec, &guides);
  f.reference(Image(guides.depth.width(), guides.depth.height(), 1));
  const FlagImage* flags = f.flags();
  REQUIRE(flags);
  std::vector<std::vector<int>> bits(flags->height, std::vector<int>(flags->width));
  for (int y = 0; y < flags->height; ++y)
    for (int x = 0; x < flags->width; ++x) bits[y][x] = flags->bits[y * flags->width + x];
  return bits;
}

}  // namespace

TEST_CASE("flags: a flat plane has none; a depth step and a normal crease are flagged") {
  const Guides plane = test::plane_guides(7, 5);
  for (const auto& row : flags_of(plane))
    for (int f : row) CHECK(f == 0);

  Guides step = test::plane_guides(7, 5);
  for (int y = 0; y < 5; ++y)
    for (int x = 3; x < 7; ++x) step.depth.at(x, y, 0) = 1.2f;  // 20% further: above dz=0.05
  const auto s = flags_of(step);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) CHECK(s[y][x] == (x == 2 ? 2 : x == 3 ? 1 : 0));
  // The same 20% step passes dz=0.25.
  for (const auto& row : flags_of(step, "bilateral:dz=0.25"))
    for (int f : row) CHECK(f == 0);

  Guides crease = test::plane_guides(7, 5);
  for (int y = 2; y < 5; ++y)
    for (int x = 0; x < 7; ++x)  // 45 degrees about x: above the default angle=40
      crease.normal.at(x, y, 1) = std::sqrt(0.5f), crease.normal.at(x, y, 2) = std::sqrt(0.5f);
  const auto c = flags_of(crease);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) CHECK(c[y][x] == (y == 1 ? 8 : y == 2 ? 4 : 0));
  for (const auto& row : flags_of(crease, "bilateral:angle=50"))
    for (int f : row) CHECK(f == 0);
}

TEST_CASE("flags: zero or NaN normals and NaN depth are no geometry, one region of their own") {
  Guides g = test::plane_guides(5, 3);
  g.normal.at(1, 1, 0) = g.normal.at(1, 1, 1) = g.normal.at(1, 1, 2) = 0.0f;  // a hole
  g.depth.at(2, 1, 0) = NAN;                                                  // its neighbour
  const auto f = flags_of(g);
  // (1,1): geometry left, above and below; its right neighbour is no geometry too: no edge.
  CHECK(f[1][1] == 1 + 4 + 8);
  CHECK(f[1][2] == 2 + 4 + 8);
  CHECK(f[1][0] == 2);
  CHECK(f[1][3] == 1);
  CHECK(f[0][1] == 8);
  CHECK(f[2][2] == 4);
  // Infinite depths (sky) equal each other: no edge between them.
  Guides sky = test::plane_guides(4, 1);
  for (int x = 2; x < 4; ++x) sky.depth.at(x, 0, 0) = INFINITY;
  const auto s = flags_of(sky);
  CHECK(s[0] == std::vector<int>{0, 2, 1, 0});
}

TEST_CASE("filtering never crosses a flagged edge: a two-region image stays two-region") {
  const int w = 33, h = 17;
  Guides g = test::plane_guides(w, h);
  Image in(w, h, 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if (x + y / 2 >= 15) {
        g.depth.at(x, y, 0) = 3.0f;
        for (int c = 0; c < 3; ++c) in.at(x, y, c) = 1.0f;
      }
  // The separable walk with reflect and wrap fetches mirrored or far pixels beyond the edge
  // unchecked (documented); zero and clamp never leave the region, nor does walk=2d with
  // reflect (it checks the flags of the pixels a step maps to).
  for (const char* border : {"zero", "clamp", "zero:walk=2d", "clamp:walk=2d", "reflect:walk=2d"}) {
    const std::string spec = std::string("bilateral:r=8:sigma_r=0:border=") + border;
    auto f = test::guided_stage(spec, &g);
    for (const Image& result : test::reference_and_device(f, in))
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          INFO(spec, " at ", x, ",", y);
          // Within float division error (NVIDIA's is not correctly rounded): one tap from the
          // other region would move the value by >= 1e-3.
          CHECK(result.at(x, y, 1) == doctest::Approx(in.at(x, y, 1)).epsilon(1e-6));
        }
  }
}

TEST_CASE("albedo demodulation: colour / albedo is filtered, albedo below albedo_min is not") {
  Guides g = test::plane_guides(9, 7);
  g.albedo = Image(9, 7, 3);
  Image in(9, 7, 3);
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 9; ++x) {
      // Texture in the albedo, constant irradiance 0.5: demodulated, the filter sees 0.5
      // everywhere and the texture comes back untouched. Channel 2 has albedo 0 (metal).
      const float a = 0.2f + 0.1f * float((x + y) % 4);
      g.albedo.at(x, y, 0) = g.albedo.at(x, y, 1) = a;
      for (int c = 0; c < 2; ++c) in.at(x, y, c) = 0.5f * a;
      in.at(x, y, 2) = 0.25f;
    }
  // Multiplied back by the albedo as given (albedo_filter=0), the texture comes back exactly.
  auto f = test::guided_stage("bilateral:r=3:albedo_filter=0", &g);
  const Image out = f.reference(in);
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 9; ++x) {
      CHECK(out.at(x, y, 0) == doctest::Approx(in.at(x, y, 0)).epsilon(1e-6));
      CHECK(out.at(x, y, 2) == doctest::Approx(0.25f).epsilon(1e-6));
    }
  // Without demodulation the texture is blurred.
  const Guides no_albedo = test::plane_guides(9, 7);
  auto plain = test::guided_stage("bilateral:r=3:albedo=off", &no_albedo);
  CHECK(plain.reference(in).at(4, 3, 0) != doctest::Approx(in.at(4, 3, 0)).epsilon(1e-3));
}

TEST_CASE("albedo_filter: multiplied back by the smoothed albedo, never across a depth step") {
  // A plane of albedo 0.5 with one outlier of 0.9 (a pixel whose few samples hit something
  // else), constant irradiance 0.4; columns 6.. are a nearer plane of albedo 0.8.
  Guides g = test::plane_guides(11, 9);
  g.albedo = Image(11, 9, 3);
  Image in(11, 9, 3);
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 11; ++x) {
      const bool near = x >= 6;
      if (near) g.depth.at(x, y, 0) = 0.5f;
      const float a = near ? 0.8f : x == 2 && y == 4 ? 0.9f : 0.5f;
      for (int c = 0; c < 3; ++c) g.albedo.at(x, y, c) = a, in.at(x, y, c) = 0.4f * a;
    }
  // The smoothing pass by hand at the outlier: 24 spline taps of 0.5 with colour weight
  // exp(-3 * 0.4^2), the centre's 0.375^2 of 0.9; its neighbours up to x=4 are all 0.5.
  const double far = 1.0 - 0.375 * 0.375, wc = std::exp(-3.0 * 0.4 * 0.4);
  const double smoothed =
      (0.375 * 0.375 * 0.9 + far * wc * 0.5) / (0.375 * 0.375 + far * wc);  // 0.5837
  for (const char* spec : {"bilateral:r=3", "atrous:iters=2"}) {
    INFO(spec);
    auto f = test::guided_stage(spec, &g);
    for (const Image& out : test::reference_and_device(f, in)) {
      // Demodulated, the filter sees 0.4 everywhere; the outlier comes back with the
      // smoothed albedo instead of its own.
      CHECK(out.at(2, 4, 0) == doctest::Approx(0.4 * smoothed).epsilon(1e-5));
      CHECK(out.at(0, 0, 1) == doctest::Approx(0.2).epsilon(1e-6));
      // The nearer plane is half as deep: depth weight exp(-0.5 / (0.005 * 0.5)), zero in
      // float, so its albedo 0.8 never mixes with the far plane's and neither do colours.
      for (int y = 0; y < 9; ++y) {
        CHECK(out.at(5, y, 2) == doctest::Approx(0.2).epsilon(1e-6));  // 3 from the outlier
        CHECK(out.at(6, y, 2) == doctest::Approx(0.32).epsilon(1e-6));
      }
    }
    // Off: the outlier keeps its own albedo.
    auto off = test::guided_stage(std::string(spec) + ":albedo_filter=0", &g);
    CHECK(off.reference(in).at(2, 4, 0) == doctest::Approx(0.36).epsilon(1e-6));
  }
}

TEST_CASE("self-guided on photos: the range kernel keeps a strong step and smooths noise") {
  Image in(16, 8, 1);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 16; ++x)
      in.at(x, y, 0) = (x < 8 ? 0.1f : 0.9f) + ((x * 7 + y * 3) % 5) * 0.01f;
  auto f = test::guided_stage("bilateral:r=4", nullptr);
  const Image out = f.reference(in);
  CHECK(out.at(7, 4, 0) < 0.2f);  // the step survives (sigma_r 0.1 against a 0.8 jump)
  CHECK(out.at(8, 4, 0) > 0.8f);
  CHECK(f.flags() == nullptr);
  CHECK(std::fabs(out.at(3, 4, 0) - 0.12f) < std::fabs(in.at(3, 4, 0) - 0.12f) + 1e-6f);
}

TEST_CASE("bilateral: device against the reference on odd sizes, guides, albedo and borders" *
          doctest::test_suite("sweeps")) {
  test::check_guided_on_odd_sizes("bilateral", "bilateral:r=7:sigma_r=0.3",
                                  "bilateral:r=2");  // the last without guides: self-guided
  test::check_guided_on_odd_sizes("bilateral:walk=2d", "bilateral:walk=2d:r=5:sigma_r=0.3",
                                  "bilateral:walk=2d:r=2");
}

TEST_CASE("bilateral walk=2d: taps around a corner, one pass of w[|dx|] w[|dy|]; r up to 31") {
  // A 5x5 plane, r=1, no range kernel, no flags: the centre's 3x3 with weights w[|dx|] w[|dy|].
  const Guides g = test::plane_guides(5, 5);
  Image in(5, 5, 1);
  in.at(2, 2, 0) = 1.0f;
  auto f = test::guided_stage("bilateral:walk=2d:r=1:sigma=1:sigma_r=0:fireflies=0", &g);
  const double w0 = 1, w1 = std::exp(-0.5);  // gaussian_weights(1, 1) before normalising
  const double total = (w0 + 2 * w1) * (w0 + 2 * w1);
  for (const Image& out : test::reference_and_device(f, in)) {
    CHECK(out.at(2, 2, 0) == doctest::Approx(w0 * w0 / total).epsilon(1e-5));
    CHECK(out.at(1, 1, 0) == doctest::Approx(w1 * w1 / total).epsilon(1e-5));  // a corner tap
    CHECK(out.at(2, 1, 0) == doctest::Approx(w0 * w1 / total).epsilon(1e-5));
  }
  // A pocket: the pixel (1, 1) is cut off from its right and lower neighbours (depth 3 there
  // and beyond), so only its left, upper and upper-left taps remain: the diagonal (2, 2) is
  // not reached by either L-shaped path.
  Guides pocket = test::plane_guides(5, 5);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 5; ++x)
      if (x >= 2 || y >= 2) pocket.depth.at(x, y, 0) = 3.0f;
  Image step(5, 5, 1);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 5; ++x) step.at(x, y, 0) = x >= 2 || y >= 2 ? 1.0f : 0.0f;
  auto p = test::guided_stage("bilateral:walk=2d:r=2:sigma_r=0:fireflies=0:border=zero", &pocket);
  for (const Image& out : test::reference_and_device(p, step)) {
    CHECK(out.at(1, 1, 0) == 0.0f);
    CHECK(out.at(3, 3, 0) == doctest::Approx(1.0f).epsilon(1e-6));
  }
  CHECK_THROWS_WITH_AS(make_stage("bilateral:walk=2d:r=32"),
                       doctest::Contains("walk=2d takes r up to 31"), Error);
}

TEST_CASE("bilateral: guides of the wrong size or shape are refused before any work") {
  Image n(4, 4, 3), z(4, 3, 1), two(4, 4, 2);
  CHECK_THROWS_WITH_AS(prepare_guides(n, z, Image(), 4, 4), doctest::Contains("depth guide is 4x3"),
                       Error);
  CHECK_THROWS_WITH_AS(prepare_guides(two, Image(), Image(), 4, 4),
                       doctest::Contains("normal guide has 2 channels, needs 3"), Error);
  const Guides g = test::plane_guides(4, 4, true);
  auto f = test::guided_stage("bilateral", &g);
  CHECK_THROWS_WITH_AS(f.reference(Image(5, 4, 3)), doctest::Contains("guides are 4x4"), Error);
  CHECK_THROWS_WITH_AS(f.reference(Image(4, 4, 1)),
                       doctest::Contains("albedo demodulation needs 3 colour channels"), Error);
  CHECK_THROWS_WITH(make_stage("bilateral:r=0"), doctest::Contains("out of range"));
  CHECK_THROWS_WITH(make_stage("bilateral:normal="), doctest::Contains("missing value"));
}
