// The guided filters' fireflies step: hand-made cases and the device against the reference.
#include <doctest/doctest.h>

#include "engine/guided_support.hpp"

using namespace halo;

namespace {

// The step's result on the reference and on the device, for every row of `in`.
std::vector<Image> clamped(const Image& in, const Guides* g, const Fireflies& f) {
  const Span all{0, in.height()};
  Image reference = clamp_fireflies(in, g, f, all);
  const DeviceGuides dg = upload_guides(test::device(), g);
  const DeviceImage out = clamp_fireflies(
      test::device(), dg, upload(test::device(), to_pixels(in, PixelType::f32)), f, all);
  Image on_device = download_image(test::device(), out);
  test::device().take_timings();
  return {std::move(reference), std::move(on_device)};
}

}  // namespace

TEST_CASE("fireflies: a lone bright pixel comes down to ratio x its brightest neighbour") {
  Image in(5, 5, 1);
  for (float& v : in.data()) v = 0.1f;
  in.at(2, 2, 0) = 10.0f;
  in.at(0, 0, 0) = 0.2f;  // a corner: clamp's copies of it are not its neighbours
  for (const Image& out : clamped(in, nullptr, {.ratio = 1.5f})) {
    CHECK(out.at(2, 2, 0) == doctest::Approx(0.15f).epsilon(1e-6));
    CHECK(out.at(0, 0, 0) == doctest::Approx(0.15f).epsilon(1e-6));
    CHECK(out.at(1, 1, 0) == 0.1f);  // its brightest neighbour is the firefly
    CHECK(out.at(4, 4, 0) == 0.1f);
  }
  for (const Image& out : clamped(in, nullptr, {.ratio = 200.0f})) {
    CHECK(out.at(2, 2, 0) == 10.0f);
    CHECK(out.at(0, 0, 0) == 0.2f);
  }
}

TEST_CASE("fireflies: a highlight of two pixels stays; a lone one keeps its hue") {
  Image in(6, 4, 3);
  for (float& v : in.data()) v = 0.05f;
  for (int c = 0; c < 3; ++c) in.at(2, 1, c) = in.at(3, 1, c) = 8.0f;   // two pixels wide
  in.at(5, 3, 0) = 4.0f, in.at(5, 3, 1) = 2.0f, in.at(5, 3, 2) = 1.0f;  // a lone coloured one
  for (const Image& out : clamped(in, nullptr, {.ratio = 1.5f})) {
    CHECK(out.at(2, 1, 0) == 8.0f);
    CHECK(out.at(3, 1, 2) == 8.0f);
    // Luminance 0.2126 * 4 + 0.7152 * 2 + 0.0722 = 2.3626 down to 1.5 * 0.05: the same scale
    // on every channel.
    const double scale = 1.5 * 0.05 / (0.2126 * 4 + 0.7152 * 2 + 0.0722 * 1);
    CHECK(out.at(5, 3, 0) == doctest::Approx(4 * scale).epsilon(1e-5));
    CHECK(out.at(5, 3, 1) == doctest::Approx(2 * scale).epsilon(1e-5));
    CHECK(out.at(5, 3, 2) == doctest::Approx(1 * scale).epsilon(1e-5));
  }
}

TEST_CASE("fireflies: luminance after demodulation; no neighbours, no clamp; negatives kept") {
  // Albedo 1 under the bright pixel, 0.1 around it: demodulated, 5 against 5, no firefly.
  Guides g = test::plane_guides(3, 3, true);
  for (float& v : g.albedo.data()) v = 0.1f;
  Image in(3, 3, 3);
  for (float& v : in.data()) v = 0.5f;
  for (int c = 0; c < 3; ++c) in.at(1, 1, c) = 5.0f, g.albedo.at(1, 1, c) = 1.0f;
  for (const Image& out : clamped(in, &g, {.ratio = 1.5f, .demod = true}))
    CHECK(out.at(1, 1, 0) == 5.0f);
  for (const Image& out : clamped(in, &g, {.ratio = 1.5f}))  // as radiance it is one
    CHECK(out.at(1, 1, 0) == doctest::Approx(0.75f).epsilon(1e-5));
  for (int c = 0; c < 3; ++c) in.at(1, 1, c) = 50.0f;  // demodulated 50 against 5: down to 7.5
  for (const Image& out : clamped(in, &g, {.ratio = 1.5f, .demod = true}))
    CHECK(out.at(1, 1, 0) == doctest::Approx(7.5f).epsilon(1e-5));
  Image one(1, 1, 1);
  one.at(0, 0, 0) = 7.0f;
  for (const Image& out : clamped(one, nullptr, {.ratio = 1.5f, .border = Border::zero}))
    CHECK(out.at(0, 0, 0) == 7.0f);
  Image dark(3, 1, 1);
  dark.at(0, 0, 0) = dark.at(2, 0, 0) = -1.0f, dark.at(1, 0, 0) = -0.5f;
  for (const Image& out : clamped(dark, nullptr, {.ratio = 1.5f})) CHECK(out.at(1, 0, 0) == -0.5f);
}

TEST_CASE("fireflies: device against the reference on odd sizes, borders and strips") {
  const int sizes[][2] = {{1, 1}, {7, 5}, {33, 17}, {1023, 517}};
  for (const auto& size : sizes) {
    const Guides ga = test::random_guides(size[0], size[1], true);
    // Values spread over 4 decades, so many pixels are fireflies.
    Image in = test::random_image(size[0], size[1], 3, false, 9, 0.0f, 1.0f);
    for (float& v : in.data()) v = std::pow(10.0f, 4 * v - 2);
    for (const char* border : test::kBorders)
      for (const bool demod : {false, true}) {
        const Fireflies f{.ratio = 1.5f, .demod = demod, .border = parse_border(border)};
        const std::vector<Image> both = clamped(in, &ga, f);
        const Comparison c = compare(both[1], both[0], 1e-6);
        INFO(size[0], "x", size[1], " ", border, " demod ", demod, ": ", c.summary());
        CHECK(c.ok());
      }
  }
  // The filters with the step on and off stream as they run whole (strips_test covers the
  // default, where it is on with guides).
  const Guides g = test::random_guides(61, 37, true);
  const Image rgb = test::random_image(61, 37, 3);
  for (const char* spec : {"atrous:fireflies=0", "atrous:fireflies=3", "bilateral:fireflies=0",
                           "bilateral:fireflies=1.1"})
    test::check_guided_device(spec, rgb, &g);
}
