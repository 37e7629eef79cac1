// pad: margins by each border rule, hand-computed; on the device and the reference, whole and
// in strips (strips map to the input's rows), chained with filters before and after.
#include <doctest/doctest.h>

#include "filters/registry.hpp"
#include "pipeline/pipeline.hpp"
#include "separable_support.hpp"

using namespace halo;
using test::chain;

namespace {

// A 3x2 one-channel image holding 1..6, row by row.
PixelBuffer small() {
  PixelBuffer p = test::random_pixels(3, 2, 1, PixelType::f32);
  Image image = to_image(p);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) image.at(x, y, 0) = float(1 + x + 3 * y);
  return to_pixels(image, PixelType::f32);
}

std::vector<float> samples(const PixelBuffer& p) {
  const Image image = to_image(p);
  std::vector<float> v;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) v.push_back(image.at(x, y, 0));
  return v;
}

}  // namespace

TEST_CASE("pad fills its margins by each border rule (hand-computed)") {
  // 1 2 3
  // 4 5 6, padded by 1 left and 2 right, 1 above, none below.
  const struct {
    const char* spec;
    std::vector<float> want;  // 6x3
  } cases[] = {
      {"pad:left=1:right=2:top=1:bottom=0",
       {0, 0, 0, 0, 0, 0,  //
        0, 1, 2, 3, 0, 0,  //
        0, 4, 5, 6, 0, 0}},
      {"pad:left=1:right=2:top=1:bottom=0:border=clamp",
       {1, 1, 2, 3, 3, 3,  //
        1, 1, 2, 3, 3, 3,  //
        4, 4, 5, 6, 6, 6}},
      {"pad:left=1:right=2:top=1:bottom=0:border=reflect",
       {5, 4, 5, 6, 5, 4,  //
        2, 1, 2, 3, 2, 1,  //
        5, 4, 5, 6, 5, 4}},
      {"pad:left=1:right=2:top=1:bottom=0:border=wrap",
       {6, 4, 5, 6, 4, 5,  //
        3, 1, 2, 3, 1, 2,  //
        6, 4, 5, 6, 4, 5}},
  };
  const PixelBuffer in = small();
  for (const auto& c : cases) {
    INFO(std::string(c.spec));
    const Pipeline p = chain({c.spec});
    CHECK(p.output_size({3, 2}) == Size{6, 3});
    const PixelBuffer ref = run_reference(p, in, PixelType::f32);
    CHECK(samples(ref) == c.want);
    const RunResult dev =
        run_device(test::device(), p, in, PixelType::f32, {.stream = {.verify = true}});
    CHECK(dev.ok());
    CHECK(dev.pixels.bytes == ref.bytes);
  }
  // `all` for every margin not given.
  CHECK(chain({"pad:all=3:top=0"}).output_size({3, 2}) == Size{9, 5});
  CHECK(chain({"pad"}).output_size({3, 2}) == Size{3, 2});
  test::device().take_timings();
}

TEST_CASE("pad streams: strips equal the whole image on both paths, odd sizes, alpha included") {
  const struct {
    int w, h, channels;
    const char* spec;
  } cases[] = {{1, 1, 4, "pad:all=2:border=reflect"},
               {1, 1, 3, "pad:left=4:bottom=7:border=clamp"},
               {7, 5, 4, "pad:left=3:right=1:top=9:bottom=2"},
               {7, 5, 1, "pad:all=11:border=reflect"},  // margins past the image's size
               {1023, 517, 3, "pad:left=64:top=33:bottom=1:border=reflect"}};
  for (const auto& c : cases) {
    INFO(c.w, "x", c.h, "x", c.channels, " ", std::string(c.spec));
    const PixelBuffer in = test::random_pixels(c.w, c.h, c.channels, PixelType::f32);
    const Pipeline p = chain({c.spec});
    const PixelBuffer whole = run_reference(p, in, PixelType::f32);
    CHECK(whole.alpha == in.alpha);
    test::check_strips(p, in, whole, {1, 3, 8, 64});
  }
  test::device().take_timings();
}

TEST_CASE("pad between filters: the same as padding the filtered image; wrap runs whole") {
  const PixelBuffer in = test::random_pixels(67, 45, 3, PixelType::u8);
  const Pipeline p = chain({"gaussian:r=3", "pad:all=5:border=reflect", "sharpen"});
  const PixelBuffer whole = run_reference(p, in, PixelType::f32);
  CHECK(whole.width == 77);
  CHECK(whole.height == 55);
  test::check_strips(p, in, whole, {1, 5, 13});
  const PixelBuffer blurred = run_reference(chain({"gaussian:r=3"}), in, PixelType::f32);
  CHECK(run_reference(chain({"gaussian:r=3", "pad:all=5"}), in, PixelType::f32).bytes ==
        run_reference(chain({"pad:all=5"}), blurred, PixelType::f32).bytes);
  CHECK(chain({"pad:all=1:border=wrap"}).whole_image_reason(PixelType::f32) != "");
  CHECK(chain({"pad:all=1:border=reflect"}).whole_image_reason(PixelType::f32) == "");
  test::device().take_timings();
}

TEST_CASE("pad moves the window's origin; rows of the margins own no input rows") {
  const Pipeline p = chain({"crop:x=10:y=4:w=20:h=10", "pad:left=3:top=7"});
  const ImageDesc out = p.describe(ImageDesc{{64, 32}});
  CHECK(out.size == Size{23, 17});
  REQUIRE(out.origin);
  CHECK((*out.origin)[0] == 7);
  CHECK((*out.origin)[1] == -3);
  const auto& pad = *p.stages()[1];
  CHECK(pad.input_row(0, {20, 10}, {23, 17}) == 0);
  CHECK(pad.input_row(7, {20, 10}, {23, 17}) == 0);
  CHECK(pad.input_row(12, {20, 10}, {23, 17}) == 5);
  CHECK(pad.input_row(17, {20, 10}, {23, 17}) == 10);
}

TEST_CASE("pad refuses negative margins and results too large") {
  CHECK_THROWS_WITH(make_stage("pad:left=-1"), doctest::Contains("left"));
  CHECK_THROWS_WITH(chain({"pad:all=100000"}).output_size({100000, 100000}),
                    doctest::Contains("too large"));
}
