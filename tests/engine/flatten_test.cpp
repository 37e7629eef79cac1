// flatten: the colour over a background and alpha dropped, by hand for straight (8/16-bit
// sources) and premultiplied (float sources) colour, and the device against the reference bit
// for bit.
#include <doctest/doctest.h>

#include "filters/registry.hpp"
#include "separable_support.hpp"

using namespace halo;

TEST_CASE("flatten by hand: straight and premultiplied colour, opaque pixels exact") {
  Image in(3, 1, 4, true);
  const float colour[3][4] = {{0.8f, 0.4f, 0.2f, 1.0f}, {0.8f, 0.4f, 0.2f, 0.25f}, {1, 1, 1, 0}};
  for (int x = 0; x < 3; ++x)
    for (int c = 0; c < 4; ++c) in.at(x, 0, c) = colour[x][c];
  in.set_source(PixelType::u8);  // straight: c a + b (1 - a)
  const Image straight = make_stage("flatten:background=0.5")->reference(in);
  CHECK(straight.channels() == 3);
  CHECK_FALSE(straight.alpha());
  CHECK(straight.at(0, 0, 0) == 0.8f);  // opaque: the colour exactly
  CHECK(straight.at(1, 0, 0) == doctest::Approx(0.8 * 0.25 + 0.5 * 0.75));
  CHECK(straight.at(2, 0, 2) == 0.5f);  // transparent: the background
  in.set_source(PixelType::f32);        // premultiplied: c + b (1 - a)
  const Image pre = make_stage("flatten:background=1,0,0")->reference(in);
  CHECK(pre.at(1, 0, 0) == doctest::Approx(0.8 + 0.75));
  CHECK(pre.at(1, 0, 1) == doctest::Approx(0.4));
  // Without alpha: unchanged.
  const Image rgb = test::random_image(5, 3, 3, false, 2);
  CHECK(compare(make_stage("flatten")->reference(rgb), rgb, 0).ok());
}

TEST_CASE("flatten on the device equals the reference bit for bit") {
  Device& device = test::device();
  const auto stage = make_stage("flatten:background=0.25,0.5,1");
  for (const auto& [w, h] : {std::pair{1, 1}, {7, 5}, {1023, 517}}) {
    const Image in = test::random_image(w, h, 4, true, 3);
    test::check_device_matches(device, stage->spec(), in, 0);  // float: premultiplied
    // 8-bit samples (straight colour), uploaded as codes as a PNG's are.
    const PixelBuffer codes = to_pixels(in, PixelType::u8);
    const Image expected = stage->reference(to_image(codes));
    const Image got = download_image(device, stage->enqueue(device, upload(device, codes)));
    CHECK(compare(got, expected, 0).ok());
    device.take_timings();
  }
}
