// flop, flip and rotate (90, 180, 270): samples moved by hand, the device against the reference,
// and flip refusing to stream.
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
  CHECK_THROWS_WITH(make_stage("rotate:angle=4000"), doctest::Contains("angle"));
}

TEST_CASE("rotate=90 and 270 turn the image on its side, and back") {
  // 0 1 2        90:  10  0       270:  2 12
  // 10 11 12          11  1             1 11
  //                   12  2             0 10
  const Image in = test::from_rows({{0, 1, 2}, {10, 11, 12}});
  const Image cw = make_stage("rotate:angle=90")->reference(in);
  REQUIRE(cw.width() == 2);
  REQUIRE(cw.height() == 3);
  CHECK(cw.at(0, 0, 0) == 10.0f);
  CHECK(cw.at(1, 0, 0) == 0.0f);
  CHECK(cw.at(0, 2, 0) == 12.0f);
  const Image ccw = make_stage("rotate:angle=270")->reference(in);
  CHECK(ccw.at(0, 0, 0) == 2.0f);
  CHECK(ccw.at(1, 0, 0) == 12.0f);
  CHECK(ccw.at(0, 2, 0) == 0.0f);
  const PixelBuffer photo = test::random_pixels(37, 23, 4, PixelType::f32);
  const Pipeline round = test::chain({"rotate:angle=90", "sharpen", "rotate:angle=270"});
  CHECK(round.output_size({37, 23}) == Size{37, 23});
  const PixelBuffer back =
      run_reference(test::chain({"rotate:angle=90", "rotate:angle=270"}), photo, PixelType::f32);
  CHECK(back.bytes == photo.bytes);
  for (const char* spec : {"rotate:angle=90", "rotate:angle=270"}) {
    test::check_device_matches(test::device(), spec, test::random_image(1, 1, 1), 0.0);
    test::check_device_matches(test::device(), spec, test::random_image(7, 5, 4, true), 0.0);
    test::check_device_matches(test::device(), spec, test::random_image(1023, 517, 3), 0.0);
  }
  const RunResult dev = run_device(test::device(), round, photo, PixelType::f32,
                                   {.stream = {.strip_rows = 5, .verify = true}});
  CHECK(dev.ok());
  CHECK(dev.pixels.bytes == run_reference(round, photo, PixelType::f32).bytes);
  test::device().take_timings();
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
