// crop: the window's samples, on the device and the reference, whole and in strips (strips map
// to the window's rows), chained with filters before and after; windows outside refused.
#include <doctest/doctest.h>

#include "filters/registry.hpp"
#include "pipeline/pipeline.hpp"
#include "separable_support.hpp"

using namespace halo;
using test::chain;

namespace {

// The input's window, sample for sample.
bool is_window(const PixelBuffer& out, const PixelBuffer& in, int x0, int y0) {
  const Image a = to_image(out), b = to_image(in);
  for (int c = 0; c < a.channels(); ++c)
    for (int y = 0; y < a.height(); ++y)
      for (int x = 0; x < a.width(); ++x)
        if (a.at(x, y, c) != b.at(x + x0, y + y0, c)) return false;
  return true;
}

}  // namespace

TEST_CASE("crop keeps the window: given, centred, to the edges; alpha included") {
  const PixelBuffer in = test::random_pixels(41, 23, 4, PixelType::f32);
  const struct {
    const char* spec;
    int w, h, x, y;
  } cases[] = {{"crop:x=3:y=5:w=10:h=7", 10, 7, 3, 5},
               {"crop:w=11:h=9", 11, 9, 15, 7},  // centred: (41-11)/2, (23-9)/2
               {"crop:x=30", 11, 23, 30, 0},
               {"crop:y=22", 41, 1, 0, 22},
               {"crop:x=0:y=0:w=41:h=23", 41, 23, 0, 0}};
  for (const auto& c : cases) {
    INFO(c.spec);
    const Pipeline p = chain({c.spec});
    CHECK(p.output_size({41, 23}) == Size{c.w, c.h});
    const PixelBuffer ref = run_reference(p, in, PixelType::f32);
    REQUIRE(ref.width == c.w);
    REQUIRE(ref.height == c.h);
    CHECK(is_window(ref, in, c.x, c.y));
    for (int strip : {0, 1, 3, 8}) {
      INFO("strips of ", strip);
      const RunResult dev = run_device(test::device(), p, in, PixelType::f32,
                                       {.stream = {.strip_rows = strip, .verify = true}});
      CHECK(dev.ok());
      CHECK(dev.pixels.bytes == ref.bytes);
    }
  }
  test::device().take_timings();
}

TEST_CASE("crop between filters: strips equal the whole image on both paths") {
  const PixelBuffer in = test::random_pixels(67, 45, 3, PixelType::u8);
  const Pipeline p = chain({"gaussian:r=3", "crop:x=9:y=11:w=40:h=30", "sharpen", "median"});
  const PixelBuffer whole = run_reference(p, in, PixelType::f32);
  CHECK(whole.width == 40);
  test::check_strips(p, in, whole, {1, 2, 5, 13, 30});
  test::device().take_timings();
  // The same as filtering the whole image and cutting the window out of the result.
  const PixelBuffer blurred = run_reference(chain({"gaussian:r=3"}), in, PixelType::f32);
  const PixelBuffer cut =
      run_reference(chain({"crop:x=9:y=11:w=40:h=30"}), blurred, PixelType::f32);
  CHECK(
      run_reference(chain({"gaussian:r=3", "crop:x=9:y=11:w=40:h=30"}), in, PixelType::f32).bytes ==
      cut.bytes);
}

TEST_CASE("crop refuses windows outside the image, and chains that cannot follow it") {
  const Pipeline p = chain({"crop:x=30:w=20"});
  CHECK_THROWS_WITH(p.output_size({41, 23}), doctest::Contains("not inside the 41x23 image"));
  CHECK_THROWS_WITH(make_stage("crop:w=0"), doctest::Contains("w"));
  CHECK_THROWS_WITH(chain({"histogram", "crop:w=4"}), doctest::Contains("put it after"));
  CHECK_THROWS_WITH(chain({"crop:w=4", "bilateral"}), doctest::Contains("guides"));
  CHECK_NOTHROW(chain({"crop:w=4", "histogram"}));
}
