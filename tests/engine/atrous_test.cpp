// atrous: the B3-spline passes on hand-made cases, hard stops at geometry boundaries, and
// the device against the reference on odd sizes.
#include <doctest/doctest.h>

#include "engine/guided_support.hpp"

using namespace halo;

TEST_CASE("atrous: a constant image stays constant; one pass is the 5x5 B3 spline") {
  Image flat(9, 9, 1);
  for (float& v : flat.data()) v = 0.25f;
  auto f = test::guided_stage("atrous:iters=3", nullptr);
  const Image out = f.reference(flat);
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 9; ++x) CHECK(out.at(x, y, 0) == doctest::Approx(0.25f).epsilon(1e-6));
  // An impulse small against sigma_c: one pass spreads it as outer(h, h), h = 1,4,6,4,1 / 16.
  Image impulse(9, 9, 1);
  impulse.at(4, 4, 0) = 1e-3f;
  auto one = test::guided_stage("atrous:iters=1:sigma_c=100:border=zero", nullptr);
  const Image spread = one.reference(impulse);
  const float h[5] = {1 / 16.f, 4 / 16.f, 6 / 16.f, 4 / 16.f, 1 / 16.f};
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 5; ++i)
      CHECK(spread.at(2 + i, 2 + j, 0) == doctest::Approx(1e-3 * h[i] * h[j]).epsilon(1e-4));
}

TEST_CASE("atrous: no weight crosses between geometry and no geometry") {
  const int w = 33, h = 17;
  Guides g = test::plane_guides(w, h);
  Image in(w, h, 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if (x >= 12) {
        g.depth.at(x, y, 0) = NAN;  // background
        for (int c = 0; c < 3; ++c) in.at(x, y, c) = 1.0f;
      }
  auto f = test::guided_stage("atrous:iters=4:sigma_c=100", &g);
  for (const Image& result : test::reference_and_device(f, in))
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)  // within division rounding; one foreign tap moves it >= 1e-3
        CHECK(result.at(x, y, 0) == doctest::Approx(in.at(x, y, 0)).epsilon(1e-6));
}

TEST_CASE("atrous: device against the reference on odd sizes, guides, albedo and borders" *
          doctest::test_suite("sweeps")) {
  test::check_guided_on_odd_sizes("atrous", "atrous:iters=2:sigma_c=0.5", "atrous:iters=1");
}

TEST_CASE("atrous: whole sigma_n is a power by squaring, others pow; both match the device") {
  const Guides g = test::random_guides(61, 37, false);
  const Image rgb = test::random_image(61, 37, 3);
  for (const char* spec : {"atrous:sigma_n=0", "atrous:sigma_n=1", "atrous:sigma_n=37",
                           "atrous:sigma_n=128", "atrous:sigma_n=2.5", "atrous:sigma_n=5000"})
    test::check_guided_device(spec, rgb, &g);
  // Squaring and pow agree to rounding: sigma_n 128 against 128.0001 (the pow path).
  auto a = test::guided_stage("atrous:sigma_n=128", &g);
  auto b = test::guided_stage("atrous:sigma_n=128.0001", &g);
  const Comparison c = compare(a.reference(rgb), b.reference(rgb), 1e-4);
  INFO(c.summary());
  CHECK(c.ok());
}

TEST_CASE("atrous: an outline pixel takes its neighbours under max(0, n.n); theirs stay apart") {
  // A plane facing the camera with one pixel whose normal blends in another surface (as an
  // antialiased outline's does): n = (0, 1, 1) / sqrt(2), dot 0.7071 with its neighbours, whose
  // weight 0.7071^48 = 6e-8 leaves it with its own noise (1 against 0 around it).
  const int w = 9, h = 9;
  Guides g = test::plane_guides(w, h);
  g.normal.at(4, 4, 1) = g.normal.at(4, 4, 2) = float(1 / std::sqrt(2.0));
  Image in(w, h, 1);
  in.at(4, 4, 0) = 1.0f;
  const double k0 = 0.375 * 0.375, dot = 1 / std::sqrt(2.0), colour = std::exp(-1e-4);
  auto off = test::guided_stage("atrous:iters=1:sigma_c=100:outline=0:fireflies=0", &g);
  for (const Image& result : test::reference_and_device(off, in))
    CHECK(result.at(4, 4, 0) == doctest::Approx(1.0).epsilon(1e-5));
  // Own-surface share ~6e-8, so the relaxed sums come in whole: the centre counts twice
  // (strict and relaxed), each other tap once with max(0, n.n) = 0.7071.
  const double expected = 2 * k0 / (2 * k0 + dot * colour * (1 - k0));
  auto on = test::guided_stage("atrous:iters=1:sigma_c=100:outline=0.1:fireflies=0", &g);
  for (const Image& result : test::reference_and_device(on, in)) {
    CHECK(result.at(4, 4, 0) == doctest::Approx(expected).epsilon(1e-5));
    // Its neighbours have their own surface around them: the strict weights alone.
    CHECK(std::fabs(result.at(3, 4, 0)) < 1e-6f);
    CHECK(std::fabs(result.at(4, 5, 0)) < 1e-6f);
  }
}

TEST_CASE("atrous: the colour sigma shrinks by falloff each pass, 8 where no albedo divides") {
  const int w = 29, h = 19;
  Guides g = test::random_guides(w, h, true);
  const Image rgb = test::random_image(w, h, 3);
  // Every albedo bright: auto is sigma_c 48 everywhere; every albedo dark: 6 everywhere.
  for (const float albedo : {0.5f, 0.01f}) {
    for (float& v : g.albedo.data()) v = albedo;
    const std::string sigma = albedo > 0.02f ? "48" : "6";
    auto automatic = test::guided_stage("atrous:iters=3", &g);
    auto given = test::guided_stage("atrous:iters=3:falloff=48:sigma_c=" + sigma, &g);
    const std::vector<Image> a = test::reference_and_device(automatic, rgb);
    const std::vector<Image> b = test::reference_and_device(given, rgb);
    for (int k = 0; k < 2; ++k) {
      const Comparison c = compare(a[k], b[k], 0.0);
      INFO("albedo ", albedo, (k ? " device: " : " reference: "), c.summary());
      CHECK(c.ok());
    }
  }
  // A falloff so large that after the first pass no two colours agree: 3 passes are 1.
  g = test::random_guides(w, h, false);
  auto one = test::guided_stage("atrous:iters=1:sigma_c=2", &g);
  auto three = test::guided_stage("atrous:iters=3:sigma_c=2:falloff=1e6", &g);
  const std::vector<Image> a = test::reference_and_device(one, rgb);
  const std::vector<Image> b = test::reference_and_device(three, rgb);
  for (int k = 0; k < 2; ++k) {
    const Comparison c = compare(a[k], b[k], 1e-6);
    INFO((k ? "device: " : "reference: "), c.summary());
    CHECK(c.ok());
  }
  // With falloff 1 the passes keep one sigma: 3 passes blur more than 1.
  auto flat = test::guided_stage("atrous:iters=3:sigma_c=2:falloff=1", &g);
  CHECK_FALSE(compare(flat.reference(rgb), one.reference(rgb), 1e-3).ok());
}

TEST_CASE("atrous: a render 8x brighter with brightness=8 comes out 8x brighter, bit for bit") {
  // Scaling by a power of two is exact in floats, and the weights see (8d)^2 / (8 sigma)^2.
  const int w = 37, h = 23;
  const Guides g = test::random_guides(w, h, true);
  const Image rgb = test::random_image(w, h, 3);
  Image bright = rgb;
  for (float& v : bright.data()) v *= 8.0f;
  auto base = test::guided_stage("atrous:iters=3", &g);
  auto scaled = test::guided_stage("atrous:iters=3:brightness=8", &g);
  const std::vector<Image> a = test::reference_and_device(base, rgb);
  const std::vector<Image> b = test::reference_and_device(scaled, bright);
  for (int k = 0; k < 2; ++k) {
    Image expected = a[k];
    for (float& v : expected.data()) v *= 8.0f;
    const Comparison c = compare(b[k], expected, 0.0);
    INFO((k ? "device: " : "reference: "), c.summary());
    CHECK(c.ok());
  }
  // Without it the same render filters differently: the sigmas are in the render's units.
  auto plain = test::guided_stage("atrous:iters=3", &g);
  Image unscaled = plain.reference(bright);
  for (float& v : unscaled.data()) v /= 8.0f;
  CHECK_FALSE(compare(unscaled, a[0], 1e-4).ok());
}
