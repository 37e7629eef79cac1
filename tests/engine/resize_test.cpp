// resize: sizes from w, h, scale and fit; hand-computed filters; the device against the
// reference bit for bit, whole and in strips, growing and shrinking, chained with filters.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "filters/registry.hpp"
#include "pipeline/pipeline.hpp"
#include "separable_support.hpp"

using namespace halo;
using test::chain;

namespace {

PixelBuffer resized(const std::string& spec, const Image& in) {
  return run_reference(chain({spec}), to_pixels(in, PixelType::f32), PixelType::f32);
}

}  // namespace

TEST_CASE("resize sizes: one side keeps the aspect, scale, and the three fits") {
  const Size in{400, 300};
  CHECK(chain({"resize:w=200"}).output_size(in) == Size{200, 150});
  CHECK(chain({"resize:h=100"}).output_size(in) == Size{133, 100});
  CHECK(chain({"resize:scale=0.5"}).output_size(in) == Size{200, 150});
  CHECK(chain({"resize:w=100:h=100"}).output_size(in) == Size{100, 75});  // inside
  CHECK(chain({"resize:w=100:h=100:fit=cover"}).output_size(in) == Size{133, 100});
  CHECK(chain({"resize:w=100:h=100:fit=fill"}).output_size(in) == Size{100, 100});
  CHECK(chain({"thumbnail:w=64:h=64"}).output_size(in) == Size{64, 48});
  CHECK(chain({"resize:scale=0.0001"}).output_size(in) == Size{1, 1});  // never empty
  CHECK_THROWS_WITH(make_stage("resize"), doctest::Contains("give w, h or scale"));
  CHECK_THROWS_WITH(make_stage("resize:w=3:scale=2"), doctest::Contains("scale"));
}

TEST_CASE("resize by hand: box halves by averaging, triangle doubles by 1/4 and 3/4") {
  const Image in = test::from_rows({{0.0f, 1.0f, 0.25f, 0.75f}, {0.5f, 0.5f, 1.0f, 0.0f}});
  const Image half = to_image(resized("resize:w=2:h=1:fit=fill:filter=box", in));
  CHECK(half.at(0, 0, 0) == 0.5f);  // (0 + 1 + 0.5 + 0.5) / 4
  CHECK(half.at(1, 0, 0) == 0.5f);  // (0.25 + 0.75 + 1 + 0) / 4
  // Doubling 0 1 with a triangle: sample centres at 0.25 and 0.75 of each pixel; the edges'
  // windows are clipped and renormalised, so they keep the edge value.
  const Image row = test::from_rows({{0.0f, 1.0f}});
  const Image twice = to_image(resized("resize:w=4:h=1:fit=fill:filter=triangle", row));
  CHECK(twice.at(0, 0, 0) == 0.0f);
  CHECK(twice.at(1, 0, 0) == 0.25f);
  CHECK(twice.at(2, 0, 0) == 0.75f);
  CHECK(twice.at(3, 0, 0) == 1.0f);
  // nearest picks input samples only; every filter keeps a flat image flat.
  const Image noise = test::random_image(37, 23, 1, false, 5);
  std::set<float> values;
  for (int y = 0; y < 23; ++y)
    for (int x = 0; x < 37; ++x) values.insert(noise.at(x, y, 0));
  const Image picked = to_image(resized("resize:w=80:filter=nearest", noise));
  for (int y = 0; y < picked.height(); ++y)
    for (int x = 0; x < picked.width(); ++x) CHECK(values.count(picked.at(x, y, 0)) == 1);
  Image flat(29, 17, 1);
  for (int y = 0; y < 17; ++y)
    for (int x = 0; x < 29; ++x) flat.at(x, y, 0) = 0.5f;
  for (const char* f : {"lanczos3", "mitchell", "catmull-rom", "triangle", "box"})
    for (const char* size : {"w=7", "w=100"}) {
      const Image out = to_image(resized(std::string("resize:") + size + ":filter=" + f, flat));
      for (int y = 0; y < out.height(); ++y)
        for (int x = 0; x < out.width(); ++x)
          CHECK(out.at(x, y, 0) == doctest::Approx(0.5).epsilon(1e-6));
    }
}

TEST_CASE("resize on the device equals the reference bit for bit, whole and in strips") {
  const struct {
    int w, h, channels;
    bool alpha;
    const char* spec;
  } cases[] = {{1, 1, 1, false, "resize:w=7:h=5:fit=fill"},
               {7, 5, 3, false, "resize:w=1:h=1:fit=fill"},
               {61, 29, 4, true, "resize:scale=2.7:filter=mitchell"},
               {1023, 517, 3, false, "resize:w=300"},
               {300, 200, 3, false, "resize:w=91:h=150:fit=fill:filter=catmull-rom"},
               {97, 61, 2, true, "resize:scale=0.31:filter=box"},
               {64, 48, 3, false, "resize:w=200:filter=nearest"}};
  for (const auto& c : cases) {
    const PixelBuffer in = test::random_pixels(c.w, c.h, c.channels, PixelType::f32);
    PixelBuffer input = in;
    input.alpha = c.alpha;
    const Pipeline p = chain({c.spec});
    const PixelBuffer whole = run_reference(p, input, PixelType::f32);
    INFO(c.spec, " on ", c.w, "x", c.h, "x", c.channels);
    test::check_strips(p, input, whole, {0, 1, 3, 16});
  }
  test::device().take_timings();
}

TEST_CASE("resize between filters, and filters that cannot come before it") {
  const PixelBuffer in = test::random_pixels(83, 57, 3, PixelType::u8);
  const Pipeline p = chain({"gaussian:r=2", "resize:w=40", "sharpen", "crop:w=30:h=10"});
  CHECK(p.output_size({83, 57}) == Size{30, 10});
  const PixelBuffer whole = run_reference(p, in, PixelType::f32);
  for (int strip : {1, 4, 9}) {
    const RunResult dev = run_device(test::device(), p, in, PixelType::f32,
                                     {.stream = {.strip_rows = strip, .verify = true}});
    CHECK(dev.ok());
    CHECK(dev.pixels.bytes == whole.bytes);
  }
  test::device().take_timings();
  CHECK_THROWS_WITH(chain({"histogram", "resize:w=4"}), doctest::Contains("put it after"));
  CHECK_THROWS_WITH(chain({"resize:w=4", "atrous"}), doctest::Contains("guides"));
}

TEST_CASE("resize and crop called on a whole image give the whole output (as benchmarks call)") {
  const Image in = test::random_image(61, 37, 3, false, 9);
  for (const char* spec : {"resize:w=20", "resize:scale=1.7", "crop:x=5:w=30:h=9"}) {
    INFO(spec);
    const Image out = make_stage(spec)->reference(in);
    const PixelBuffer streamed =
        run_reference(chain({spec}), to_pixels(in, PixelType::f32), PixelType::f32);
    CHECK(out.width() == streamed.width);
    CHECK(out.height() == streamed.height);
    CHECK(to_pixels(out, PixelType::f32).bytes == streamed.bytes);
    test::check_device_matches(test::device(), spec, in, 0.0);
  }
}

namespace {

// The shrink a single stage allows a decoder: through the pipeline that holds it alone.
int decode_shrink(const std::string& spec, Size in, DecodeShrink how = DecodeShrink::dct) {
  return Pipeline({{spec, ""}}).decode_shrink(in, how);
}

}  // namespace

TEST_CASE("thumbnail lets a decoder shrink first while twice the output remains; resize does not") {
  const Size photo{5120, 2880};
  CHECK(decode_shrink("thumbnail:w=256:h=256", photo) == 8);  // 640x360 >= 512x288
  CHECK(decode_shrink("thumbnail:w=640:h=640", photo) == 4);  // 1280x720
  CHECK(decode_shrink("thumbnail:w=1600:h=1600", photo) == 1);
  CHECK(decode_shrink("thumbnail:w=256:h=256:fast=0", photo) == 1);
  CHECK(decode_shrink("resize:w=256", photo) == 1);  // exact unless asked
  CHECK(decode_shrink("resize:w=256:fast=1", photo) == 8);
  CHECK(decode_shrink("resize:scale=0.05:fast=1", photo) == 1);  // size would change
  // Through stages that only move samples, to the first that does more.
  const Pipeline oriented({{"orient", ""}, {"flop", ""}, {"thumbnail:w=256:h=256", ""}});
  CHECK(oriented.decode_shrink(photo, DecodeShrink::dct) == 8);
  const Pipeline blurred({{"gaussian:r=2", ""}, {"thumbnail:w=256:h=256", ""}});
  CHECK(blurred.decode_shrink(photo, DecodeShrink::dct) == 1);
}

TEST_CASE("averaged blocks: any factor leaving twice the output, through premultiply only") {
  const Size photo{5120, 2880};
  const auto blocks = [&](const std::string& spec, Size in = {5120, 2880}) {
    return decode_shrink(spec, in, DecodeShrink::blocks);
  };
  CHECK(blocks("thumbnail:w=256:h=256") == 10);  // 512x288: exactly twice 256x144
  CHECK(blocks("thumbnail:w=512:h=512") == 5);
  CHECK(blocks("thumbnail:w=16:h=16") == 161);  // 32x18 (ceil 5120/161 = 32)
  CHECK(blocks("thumbnail:w=1600:h=1600") == 1);
  CHECK(blocks("thumbnail:w=256:h=256:fast=0") == 1);
  // 533x411 into 37x80 is 37x29; at 1/7 (77x59) it would be 37x28, so 1/6 (89x69).
  CHECK(blocks("thumbnail:w=37:h=80", {533, 411}) == 6);
  // premultiply commutes with averages weighted by alpha, not with a decoder's DCT scaling.
  const Pipeline alpha({{"premultiply", ""}, {"thumbnail:w=256:h=256", ""}});
  CHECK(alpha.decode_shrink(photo, DecodeShrink::blocks) == 10);
  CHECK(alpha.decode_shrink(photo, DecodeShrink::dct) == 1);
  const Pipeline curve({{"unpremultiply", ""}, {"thumbnail:w=256:h=256", ""}});
  CHECK(curve.decode_shrink(photo, DecodeShrink::blocks) == 1);
}
