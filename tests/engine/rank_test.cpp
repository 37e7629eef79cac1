// median, dilate and erode: hand-computed windows, and the device against the reference bit for
// bit on odd sizes, every border, with NaN among the samples.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "filters/rank/rank.hpp"
#include "filters/registry.hpp"
#include "separable_support.hpp"

using namespace halo;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Image run(const std::string& spec, const Image& in) {
  return make_stage(spec)->reference(in);
}

}  // namespace

TEST_CASE("median by hand: an outlier goes, an edge stays, borders pick the window") {
  // A speck of 9 in a field of 1: the 3x3 median removes it.
  const Image speck = test::from_rows({{1, 1, 1}, {1, 9, 1}, {1, 1, 1}});
  CHECK(run("median", speck).at(1, 1, 0) == 1.0f);
  // A vertical edge 0 | 1 stays where it was.
  const Image edge = test::from_rows({{0, 0, 1, 1}, {0, 0, 1, 1}, {0, 0, 1, 1}});
  const Image kept = run("median", edge);
  for (int x = 0; x < 4; ++x) CHECK(kept.at(x, 1, 0) == edge.at(x, 1, 0));
  // 1..9 in a 3x3 image: the centre's window is all of them, median 5. The corner's with
  // clamp: 1 1 2 / 1 1 2 / 4 4 5 -> sorted 1 1 1 1 2 2 4 4 5, median 2; with zero: 0 0 0 0 1 2
  // 0 4 5 -> 0 0 0 0 0 1 2 4 5, median 0.
  const Image grid = test::from_rows({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
  CHECK(run("median", grid).at(1, 1, 0) == 5.0f);
  CHECK(run("median", grid).at(0, 0, 0) == 2.0f);
  CHECK(run("median:border=zero", grid).at(0, 0, 0) == 0.0f);
  CHECK_THROWS_WITH(make_stage("median:r=4"), doctest::Contains("r"));
}

TEST_CASE("the 3x3 median network selects the median of every 0/1 input, so of any input") {
  // A comparator network selects the k-th value of every input if it does of every 0/1 input
  // (Knuth's 0-1 principle): all 512 of them.
  for (int bits = 0; bits < 512; ++bits) {
    float w[9];
    int ones = 0;
    for (int i = 0; i < 9; ++i) ones += int(w[i] = float((bits >> i) & 1));
    CHECK(median9(w) == (ones >= 5 ? 1.0f : 0.0f));
  }
}

TEST_CASE("dilate and erode by hand: the window's maximum and minimum; NaN passed over") {
  const Image grid = test::from_rows({{1, 2, 3, 4}, {5, kNaN, 7, 8}, {9, 10, 11, 12}});
  const Image up = run("dilate", grid);
  CHECK(up.at(0, 0, 0) == 5.0f);   // 1 2 5 and NaN
  CHECK(up.at(1, 1, 0) == 11.0f);  // the NaN's own window
  CHECK(up.at(3, 2, 0) == 12.0f);
  const Image down = run("erode", grid);
  CHECK(down.at(1, 1, 0) == 1.0f);
  CHECK(down.at(3, 0, 0) == 3.0f);
  CHECK(run("erode:r=2", grid).at(3, 2, 0) == 2.0f);  // columns 1..3: column 0 is 3 away
  CHECK(run("dilate:border=zero", test::from_rows({{-1, -2}})).at(0, 0, 0) == 0.0f);
  const Image all_nan = test::from_rows({{kNaN}});
  CHECK(std::isnan(run("dilate", all_nan).at(0, 0, 0)));
}

TEST_CASE("rank filters on the device equal the reference bit for bit") {
  for (const char* border : test::kBorders)
    for (const char* filter : {"median", "median:r=2", "median:r=3", "dilate:r=2", "erode:r=5"}) {
      const std::string spec = std::string(filter) + ":border=" + border;
      Image in = test::random_image(61, 29, 4, true, 3);
      for (int i = 0; i < 40; ++i) in.at((i * 17) % 61, (i * 7) % 29, i % 3) = kNaN;
      test::check_device_bits(spec, in);
      test::check_device_bits(spec, test::random_image(1, 1, 1));
      test::check_device_bits(spec, test::random_image(7, 5, 3));
    }
  test::check_device_bits("median:r=2", test::random_image(1023, 517, 3));
}
