// FLIP and SSIM on the device against their references (lib/verify): LDR and HDR, grey, RGB and
// RGBA, odd sizes, and strips of one row, a few rows and the whole image, which must all give
// the reference's errors within float rounding of the device's pow and exp. The reference
// itself is checked against the papers in the oracle suite (tests/oracle/metric_cases.py).
#include <doctest/doctest.h>

#include <cmath>

#include "cl/device.hpp"
#include "support.hpp"
#include "verify/flip.hpp"
#include "verify/ssim.hpp"

#include <random>

using namespace halo;

namespace {

// A test image: the reference with noise and a shifted block, so that colour and features
// both differ.
Image disturbed(const Image& reference, unsigned seed) {
  Image test = reference;
  const Image noise = test::random_image(reference.width(), reference.height(),
                                         reference.channels(), reference.alpha(), seed);
  for (int c = 0; c < test.channels(); ++c)
    for (int y = 0; y < test.height(); ++y)
      for (int x = 0; x < test.width(); ++x)
        test.at(x, y, c) += 0.1f * (noise.at(x, y, c) - 0.5f) + (x > test.width() / 2 ? 0.2f : 0);
  return test;
}

double largest_difference(const Flip& a, const Flip& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.errors.size(); ++i)
    worst = std::max(worst, double(std::fabs(a.errors[i] - b.errors[i])));
  return worst;
}

}  // namespace

TEST_CASE("flip on the device equals the reference: LDR and HDR, any size, any strip height") {
  for (const auto& [w, h, channels] : {std::tuple{1, 1, 3}, {7, 5, 1}, {61, 37, 4}, {97, 45, 3}}) {
    for (const bool hdr : {false, true}) {
      Image reference = test::random_image(w, h, channels, channels == 4, 3);
      if (hdr)  // radiance up to 8, so that the exposures span several stops
        for (float& v : reference.data()) v = 8.0f * v * v;
      const Image test_image = disturbed(reference, 4);
      const FlipOptions options{.hdr = hdr};
      const Flip want = flip(reference, test_image, options);
      // Strips of one row, of 7 rows (the 21-row reach around them) and the whole image.
      const std::size_t row_bytes = 14 * std::size_t(w) * sizeof(float);
      for (const std::size_t budget : {row_bytes * 21, row_bytes * 27, std::size_t(256) << 20}) {
        INFO(w, "x", h, "x", channels, hdr ? " HDR" : " LDR", " strips of ", budget / row_bytes,
             " rows");
        const Flip got = flip_device(test::device(), reference, test_image, options, budget);
        CHECK(got.exposures == want.exposures);
        CHECK(largest_difference(got, want) < 1e-4);
        CHECK(got.mean == doctest::Approx(want.mean).epsilon(1e-5));
        if (hdr) CHECK(got.exposure_at.size() == want.exposure_at.size());
      }
    }
  }
}

// A smooth bright area (a sky): variance as E[x^2] - E[x]^2 in float cancels to noise far
// from 0; the device takes the moments about a nearby sample. Taken about 0 this pair was
// 9.7e-7 from the reference (a photo against its JPEG at quality 30: 1.9e-5, over the stated
// 1e-5); about a nearby sample, 1e-10.
TEST_CASE("ssim on the device equals the reference on a smooth bright area to 1e-8") {
  const int w = 400, h = 300;
  Image a(w, h, 1), b(w, h, 1);
  std::mt19937 rng(11);
  std::normal_distribution<float> grain(0.0f, 0.002f);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      a.at(x, y, 0) = 0.85f + 0.1f * float(x) / w + 0.05f * float(y) / h + grain(rng);
      b.at(x, y, 0) = a.at(x, y, 0) + 2.0f * grain(rng);
    }
  const Ssim want = ssim(a, b, 1.0);
  const Ssim got = ssim_device(test::device(), a, b, 1.0, std::size_t(256) << 20);
  CHECK(std::fabs(got.mean - want.mean) < 1e-8);
}

TEST_CASE("ssim on the device equals the reference: grey and colour, any strip height") {
  for (const auto& [w, h, channels] : {std::tuple{11, 11, 1}, {37, 29, 3}, {64, 71, 4}}) {
    const Image a = test::random_image(w, h, channels, false, 5);
    const Image b = disturbed(a, 6);
    const Ssim want = ssim(a, b, 1.0);
    const std::size_t row_bytes = 5 * std::size_t(w) * sizeof(float);
    // One centre row a strip (11 rows), 4 centre rows, and the whole image.
    for (const std::size_t budget : {row_bytes * 11, row_bytes * 14, std::size_t(256) << 20}) {
      INFO(w, "x", h, "x", channels, " strips of ", budget / row_bytes, " rows");
      const Ssim got = ssim_device(test::device(), a, b, 1.0, budget);
      REQUIRE(got.channels.size() == want.channels.size());
      for (std::size_t c = 0; c < got.channels.size(); ++c)
        CHECK(got.channels[c] == doctest::Approx(want.channels[c]).epsilon(1e-5));
      CHECK(got.mean == doctest::Approx(want.mean).epsilon(1e-5));
    }
  }
}
