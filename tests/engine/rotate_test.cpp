// rotate by angles other than multiples of 90: the turned image's size, where samples go, flat
// areas kept, the exact angles recognised however written, the device bit for bit on odd sizes,
// and streaming in strips equal to the whole image.
#include <doctest/doctest.h>

#include <cmath>

#include "filters/registry.hpp"
#include "pipeline/pipeline.hpp"
#include "separable_support.hpp"

using namespace halo;

TEST_CASE("rotate by 30 degrees: oiiotool's box, flat areas kept, corners background") {
  Image flat(100, 50, 1);
  for (int y = 0; y < 50; ++y)
    for (int x = 0; x < 100; ++x) flat.at(x, y, 0) = 0.5f;
  const Image turned = make_stage("rotate:angle=30:background=0.25")->reference(flat);
  // The whole pixels holding the turned centres about the centre, as oiiotool
  // --rotate:recompute_roi=1 (112x92): 99 cos 30 + 49 sin 30 = 110.2 about x = 50 spans
  // pixels -6..105; 99 sin 30 + 49 cos 30 = 91.9 about y = 25 spans -21..70.
  CHECK(turned.width() == 112);
  CHECK(turned.height() == 92);
  CHECK(turned.at(56, 46, 0) == doctest::Approx(0.5).epsilon(1e-6));  // the middle: the image
  CHECK(turned.at(0, 0, 0) == doctest::Approx(0.25).epsilon(1e-6));   // a corner: background
  CHECK(turned.at(111, 91, 0) == doctest::Approx(0.25).epsilon(1e-6));
  Image rgba(100, 50, 4, true);
  for (int c = 0; c < 4; ++c)
    for (int y = 0; y < 50; ++y)
      for (int x = 0; x < 100; ++x) rgba.at(x, y, c) = 1.0f;
  const Image cut_out = make_stage("rotate:angle=30")->reference(rgba);
  CHECK(cut_out.at(0, 0, 3) == 0.0f);  // alpha 0 outside: the corners are transparent
  CHECK(cut_out.at(56, 47, 3) == doctest::Approx(1.0).epsilon(1e-6));
  const Image same = make_stage("rotate:angle=30:size=same")->reference(flat);
  CHECK(same.width() == 100);
  CHECK(same.height() == 50);
}

TEST_CASE("rotate turns clockwise: a left-to-right ramp runs top to bottom at 91 degrees") {
  Image ramp(41, 21, 2, true);
  for (int y = 0; y < 21; ++y)
    for (int x = 0; x < 41; ++x) ramp.at(x, y, 0) = float(x), ramp.at(x, y, 1) = 1.0f;
  for (const char* taps : {"nearest", "bilinear", "bicubic"}) {
    const Image turned = make_stage(std::string("rotate:angle=91:filter=") + taps)->reference(ramp);
    CHECK(turned.width() == 21);  // oiiotool's box: 40 |cos 91| + 20 sin 91 = 20.7 about 20.5
    CHECK(turned.height() == 41);
    const int mid = turned.width() / 2;
    CHECK(turned.at(mid, 8, 0) < turned.at(mid, 20, 0));
    CHECK(turned.at(mid, 20, 0) < turned.at(mid, 33, 0));
    CHECK(turned.at(mid, 21, 1) == doctest::Approx(1.0).epsilon(1e-6));  // alpha inside
  }
}

TEST_CASE("rotate's exact angles however written; 30 then -30 comes back in the middle") {
  const Image in = test::random_image(9, 6, 3, false, 3);
  const auto bits = [](const Image& a, const Image& b) {
    if (a.width() != b.width() || a.height() != b.height() || a.channels() != b.channels())
      return false;
    for (int c = 0; c < a.channels(); ++c)
      for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x)
          if (a.at(x, y, c) != b.at(x, y, c)) return false;
    return true;
  };
  CHECK(bits(make_stage("rotate:angle=-90")->reference(in),
             make_stage("rotate:angle=270")->reference(in)));
  CHECK(bits(make_stage("rotate:angle=450")->reference(in),
             make_stage("rotate:angle=90")->reference(in)));
  CHECK(bits(make_stage("rotate:angle=360")->reference(in), in));

  // A smooth image turned there and back: the middle within a few percent.
  Image smooth(64, 64, 1);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x)
      smooth.at(x, y, 0) = 0.5f + 0.25f * std::sin(x * 0.2f) * std::cos(y * 0.15f);
  const Image there = make_stage("rotate:angle=30:size=same")->reference(smooth);
  const Image back = make_stage("rotate:angle=-30:size=same")->reference(there);
  for (int y = 24; y < 40; ++y)
    for (int x = 24; x < 40; ++x)
      CHECK(back.at(x, y, 0) == doctest::Approx(smooth.at(x, y, 0)).epsilon(0.03));
}

TEST_CASE("rotate by any angle on the device equals the reference bit for bit") {
  for (const char* spec :
       {"rotate:angle=33", "rotate:angle=-12.5:filter=bilinear",
        "rotate:angle=200:filter=nearest:background=1", "rotate:angle=45:size=same"}) {
    test::check_device_bits(spec, test::random_image(1, 1, 3, false, 1));
    test::check_device_bits(spec, test::random_image(7, 5, 4, true, 2));
    test::check_device_bits(spec, test::random_image(1023, 517, 1, false, 3));
  }
}

TEST_CASE("rotate streams: strips of any height equal the whole image, in a chain") {
  Device& device = test::device();
  PixelBuffer input = test::random_pixels(97, 61, 4, PixelType::u8, 9);
  input.alpha = true;
  for (const std::string chain : {"rotate:angle=33", "rotate:angle=-70:filter=bilinear"}) {
    const Pipeline pipeline({{chain, ""}, {"gaussian:r=2", ""}});
    const PixelBuffer whole = run_reference(pipeline, input, PixelType::f32, {});
    for (const int strip_rows : {1, 7, 64}) {
      RunOptions options;
      options.stream.verify = true;
      options.stream.strip_rows = strip_rows;
      const RunResult got = run_device(device, pipeline, input, PixelType::f32, options);
      device.take_timings();
      INFO(chain, " in strips of ", strip_rows);
      CHECK(got.ok());
      CHECK(got.pixels.bytes == whole.bytes);
    }
  }
}
