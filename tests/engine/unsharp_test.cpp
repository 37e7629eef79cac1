// unsharp: the reference against its formula on hand-made images, and the device against the
// reference on odd sizes and every border (strips: tests/engine/strips_test.cpp).
#include <doctest/doctest.h>

#include <cmath>

#include "filters/registry.hpp"
#include "separable_support.hpp"

using namespace halo;

TEST_CASE("unsharp reference: v + amount * (v - gaussian) where the detail exceeds threshold") {
  const Image in = test::random_image(31, 19, 3, false, 4);
  const Image blurred = make_stage("gaussian:r=3:sigma=1:border=reflect")->reference(in);
  const Image out = make_stage("unsharp:sigma=1:amount=0.7:border=reflect")->reference(in);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < in.height(); ++y)
      for (int x = 0; x < in.width(); ++x) {
        const float v = in.at(x, y, c), d = v - blurred.at(x, y, c);
        CHECK(out.at(x, y, c) == v + 0.7f * d);
      }
  // The threshold leaves small details exactly as they were, and sharpens the others.
  const Image gated =
      make_stage("unsharp:sigma=1:amount=0.7:threshold=0.1:border=reflect")->reference(in);
  int left = 0, sharpened = 0;
  for (int y = 0; y < in.height(); ++y)
    for (int x = 0; x < in.width(); ++x) {
      const float v = in.at(x, y, 0), d = v - blurred.at(x, y, 0);
      if (std::fabs(d) > 0.1f) {
        CHECK(gated.at(x, y, 0) == v + 0.7f * d);
        ++sharpened;
      } else {
        CHECK(gated.at(x, y, 0) == v);
        ++left;
      }
    }
  CHECK(left > 0);
  CHECK(sharpened > 0);
}

TEST_CASE("unsharp by hand: flat areas stay, an edge overshoots on both sides, alpha passes") {
  // A step from 0.2 to 0.8 between columns 3 and 4, and an alpha plane of 0.5.
  Image step(8, 3, 2, true);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 8; ++x) {
      step.at(x, y, 0) = x < 4 ? 0.2f : 0.8f;
      step.at(x, y, 1) = 0.5f;
    }
  const Image out = make_stage("unsharp:sigma=0.8:r=2:amount=1")->reference(step);
  for (int y = 0; y < 3; ++y) {
    CHECK(out.at(0, y, 0) == 0.2f);  // two pixels from the edge: nothing to sharpen
    CHECK(out.at(7, y, 0) == 0.8f);
    CHECK(out.at(3, y, 0) < 0.2f);  // the dark side darker, the bright side brighter
    CHECK(out.at(4, y, 0) > 0.8f);
    CHECK(out.at(3, y, 0) + out.at(4, y, 0) == doctest::Approx(1.0f));  // symmetric
    for (int x = 0; x < 8; ++x) CHECK(out.at(x, y, 1) == 0.5f);
  }
  // amount=0 is the identity.
  const Image same = make_stage("unsharp:amount=0")->reference(step);
  for (int x = 0; x < 8; ++x) CHECK(same.at(x, 1, 0) == step.at(x, 1, 0));
}

TEST_CASE("unsharp on the device equals the reference: odd sizes, channels, every border") {
  for (const char* border : test::kBorders) {
    const std::string spec =
        std::string("unsharp:sigma=1.5:amount=0.8:threshold=0.01:border=") + border;
    test::check_device_matches(spec, test::random_image(1, 1, 1));
    test::check_device_matches(spec, test::random_image(7, 5, 3));
    test::check_device_matches(spec, test::random_image(61, 29, 4, true));
  }
  test::check_device_matches("unsharp:sigma=3:amount=2", test::random_image(1023, 517, 3));
}

TEST_CASE("unsharp specs are checked") {
  CHECK_THROWS_WITH(make_stage("unsharp:amount=-1"), doctest::Contains("amount"));
  CHECK_THROWS_WITH(make_stage("unsharp:sigma=0"), doctest::Contains("sigma"));
  CHECK_THROWS_WITH(make_stage("unsharp:sigma=200"), doctest::Contains("sigma"));
  CHECK_THROWS_WITH(make_stage("unsharp:threshold=x"), doctest::Contains("threshold"));
}
