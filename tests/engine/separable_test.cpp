// sep and rank-1 conv: any pair of 1D kernels, and conv kernels split automatically.
#include <doctest/doctest.h>

#include "filters/registry.hpp"
#include "separable_support.hpp"

using namespace halo;
using halo::test::from_rows;

TEST_CASE("sep by hand: rows by h, then columns by v") {
  const Image in = from_rows({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
  // h = [0 0 1] takes the right neighbour; v = [1 0 0] the one above.
  const Image out = make_stage("sep:h=0,0,1:v=1,0,0:border=zero")->reference(in);
  CHECK(out.at(0, 1, 0) == 2);
  CHECK(out.at(1, 2, 0) == 6);
  CHECK(out.at(2, 1, 0) == 0);
  CHECK(out.at(0, 0, 0) == 0);
  const Image scaled = make_stage("sep:h=1:v=1:scale=4:offset=1")->reference(in);
  CHECK(scaled.at(1, 1, 0) == 5.0f / 4 + 1);
}

TEST_CASE("sep rejects even lengths") {
  CHECK_THROWS_WITH(make_stage("sep:h=1,1:v=1"), doctest::Contains("key 'h'"));
  CHECK_THROWS_WITH(make_stage("sep:h=1:v=1,2,3,4"), doctest::Contains("odd count"));
}

TEST_CASE("rank-1 conv kernels run separably and agree with the 2D pass") {
  const auto stage = make_stage("conv:k=1,2,1,2,4,2,1,2,1");
  CHECK(stage->details()[0].starts_with("rank 1"));
  CHECK(make_stage("emboss")->details()[0].find("one 2D pass") != std::string::npos);
  CHECK(make_stage("conv:k=1,2,1,2,4,2,1,2,1:separable=off")->details()[0].find("2D") !=
        std::string::npos);
  const Image in = test::random_image(31, 19, 3);
  const char* kernels[] = {"conv:k=1,2,1,2,4,2,1,2,1", "conv:k=-1,0,1,-2,0,2,-1,0,1:offset=0.5",
                           "conv:w=5:h=3:k=1,2,3,2,1,2,4,6,4,2,1,2,3,2,1:flip=1",
                           "conv:w=3:h=1:k=1,0,-1"};
  for (const char* k : kernels)
    for (const char* border : test::kBorders) {
      const std::string spec = std::string(k) + ":border=" + border;
      const Comparison c = compare(make_stage(spec)->reference(in),
                                   make_stage(spec + ":separable=off")->reference(in), 1e-6);
      INFO(spec, ": ", c.summary());
      CHECK(c.ok());
      test::check_device_matches(spec, in);
    }
}

TEST_CASE("device matches reference: sep with different h and v, all borders") {
  for (const char* border : test::kBorders) {
    test::check_device_matches(std::string("sep:h=1,4,6,4,1:v=-1,0,1:border=") + border,
                               test::random_image(33, 17, 4, true));
    test::check_device_matches(std::string("sep:h=1:v=1,1,1,1,1,1,1,1,1:border=") + border,
                               test::random_image(7, 5, 1));
  }
}
