// flop, flip and rotate=180: samples moved by hand, the device against the reference, and flip
// refusing to stream.
#include <doctest/doctest.h>

#include "filters/registry.hpp"
#include "separable_support.hpp"

using namespace halo;

TEST_CASE("flop, flip and rotate=180 move samples as drawn, alpha with them") {
  Image in(3, 2, 2, true);  // one colour plane and alpha
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) {
      in.at(x, y, 0) = float(10 * y + x);
      in.at(x, y, 1) = float(x) / 4;
    }
  const Image flop = make_stage("flop")->reference(in);
  CHECK(flop.at(0, 0, 0) == 2.0f);
  CHECK(flop.at(2, 1, 0) == 10.0f);
  CHECK(flop.at(0, 1, 1) == 0.5f);  // alpha moves with its pixel
  const Image flip = make_stage("flip")->reference(in);
  CHECK(flip.at(0, 0, 0) == 10.0f);
  CHECK(flip.at(2, 1, 0) == 2.0f);
  const Image turned = make_stage("rotate")->reference(in);
  CHECK(turned.at(0, 0, 0) == 12.0f);
  CHECK(turned.at(2, 1, 0) == 0.0f);
  CHECK(turned.at(0, 0, 1) == 0.5f);
  CHECK_THROWS_WITH(make_stage("rotate:angle=90"), doctest::Contains("angle"));
}

TEST_CASE("mirrors on the device equal the reference; flip takes the whole image") {
  for (const char* spec : {"flop", "flip", "rotate"}) {
    test::check_device_matches(test::device(), spec, test::random_image(1, 1, 1), 0.0);
    test::check_device_matches(test::device(), spec, test::random_image(7, 5, 4, true), 0.0);
    test::check_device_matches(test::device(), spec, test::random_image(1023, 517, 3), 0.0);
  }
  CHECK(make_stage("flop")->whole_image_reason(PixelType::u8).empty());
  CHECK_FALSE(make_stage("flip")->whole_image_reason(PixelType::u8).empty());
}
