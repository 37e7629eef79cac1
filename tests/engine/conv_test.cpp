// The convolution family: hand-computed cases on the reference, then the OpenCL kernel against
// the reference on awkward sizes, channel counts and every border mode.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "cl/tuning.hpp"
#include "engine/separable_support.hpp"
#include "filters/registry.hpp"
#include "pipeline/transfer.hpp"
#include "support.hpp"
#include "verify/compare.hpp"

using namespace halo;
using halo::test::from_rows;

namespace {

Image reference(const std::string& spec, const Image& in) {
  return make_stage(spec)->reference(in);
}

Image on_device(const std::string& spec, const Image& in, Device& device = test::device()) {
  const PixelBuffer pixels = to_pixels(in, PixelType::f32);
  const DeviceImage result = make_stage(spec)->enqueue(device, upload(device, pixels));
  Image out = download_image(device, result);
  device.take_timings();
  return out;
}

void check_device_matches(const std::string& spec, const Image& in,
                          Device& device = test::device()) {
  const Comparison c = compare(on_device(spec, in, device), reference(spec, in), 1e-5);
  INFO(spec, " on ", in.width(), "x", in.height(), "x", in.channels(), ": ", c.summary());
  CHECK(c.ok());
}

}  // namespace

TEST_CASE("border_index: zero, clamp, reflect (dcb|abcd|cba), wrap") {
  const int n = 4;
  CHECK(border_index(-1, n, Border::zero) == -1);
  CHECK(border_index(4, n, Border::zero) == -1);
  CHECK(border_index(2, n, Border::zero) == 2);
  CHECK(border_index(-3, n, Border::clamp) == 0);
  CHECK(border_index(9, n, Border::clamp) == 3);
  // reflect: ... c b | a b c d | c b a b ...
  const int left[] = {1, 2, 3, 2, 1, 0, 1};  // i = -1 .. -7
  for (int k = 0; k < 7; ++k) CHECK(border_index(-1 - k, n, Border::reflect) == left[k]);
  const int right[] = {2, 1, 0, 1, 2, 3, 2};  // i = 4 .. 10
  for (int k = 0; k < 7; ++k) CHECK(border_index(4 + k, n, Border::reflect) == right[k]);
  CHECK(border_index(-1, n, Border::wrap) == 3);
  CHECK(border_index(-5, n, Border::wrap) == 3);
  CHECK(border_index(9, n, Border::wrap) == 1);
  for (Border b : {Border::clamp, Border::reflect, Border::wrap})
    for (int i = -5; i < 6; ++i) CHECK(border_index(i, 1, b) == 0);
}

TEST_CASE("conv by hand: 3x3 box sum with each border on a 3x3 image") {
  const Image in = from_rows({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
  const std::string sum = "conv:k=1,1,1,1,1,1,1,1,1:scale=1";
  // Top-left output: neighbours of (0,0).
  CHECK(reference(sum + ":border=zero", in).at(0, 0, 0) == 1 + 2 + 4 + 5);
  CHECK(reference(sum + ":border=clamp", in).at(0, 0, 0) == 1 + 1 + 2 + 1 + 1 + 2 + 4 + 4 + 5);
  CHECK(reference(sum + ":border=reflect", in).at(0, 0, 0) == 5 + 4 + 5 + 2 + 1 + 2 + 5 + 4 + 5);
  CHECK(reference(sum + ":border=wrap", in).at(0, 0, 0) == 9 + 7 + 8 + 3 + 1 + 2 + 6 + 4 + 5);
  CHECK(reference(sum, in).at(1, 1, 0) == 45);
  // scale=auto divides by the sum of the kernel: the mean.
  CHECK(reference("conv:k=1,1,1,1,1,1,1,1,1", in).at(1, 1, 0) == doctest::Approx(5.0));
}

TEST_CASE("conv is correlation; flip=1 is convolution; offset and scale apply") {
  const Image in = from_rows({{0, 0, 0}, {0, 1, 0}, {0, 0, 0}});
  // Correlating an impulse with k puts k mirrored around the centre.
  const Image corr = reference("conv:k=1,2,3,4,5,6,7,8,9:scale=1:border=zero", in);
  CHECK(corr.at(0, 0, 0) == 9);
  CHECK(corr.at(2, 0, 0) == 7);
  CHECK(corr.at(0, 2, 0) == 3);
  const Image conv = reference("conv:k=1,2,3,4,5,6,7,8,9:scale=1:flip=1:border=zero", in);
  CHECK(conv.at(0, 0, 0) == 1);
  CHECK(conv.at(2, 2, 0) == 9);
  const Image scaled = reference("conv:k=0,0,0,0,4,0,0,0,0:scale=2:offset=0.25", in);
  CHECK(scaled.at(1, 1, 0) == 2.25f);
  CHECK(scaled.at(0, 0, 0) == 0.25f);
}

TEST_CASE("non-square kernels: 3x1 horizontal difference") {
  const Image in = from_rows({{1, 4, 9, 16}});
  const Image out = reference("conv:k=-1,0,1:w=3:h=1:border=clamp", in);
  CHECK(out.at(0, 0, 0) == 4 - 1);
  CHECK(out.at(1, 0, 0) == 9 - 1);
  CHECK(out.at(3, 0, 0) == 16 - 9);
}

TEST_CASE("named kernels by hand: emboss, sharpen, edge") {
  const Image in = from_rows({{0.1f, 0.2f, 0.3f}, {0.4f, 0.5f, 0.6f}, {0.7f, 0.8f, 0.9f}});
  // emboss at the centre: 2*0.1 - 0.5 - 0.9 + 0.5 offset.
  CHECK(reference("emboss", in).at(1, 1, 0) == doctest::Approx(2 * 0.1 - 0.5 - 0.9 + 0.5));
  // sharpen k=1 at the centre: 9*0.5 - (sum of the rest = 4.5 - 0.5).
  CHECK(reference("sharpen", in).at(1, 1, 0) == doctest::Approx(9 * 0.5 - 4.0));
  CHECK(reference("sharpen:k=0", in).at(1, 1, 0) == doctest::Approx(0.5));
  // A linear ramp has no Laplacian inside; Sobel gradients are 8*0.1 across and 8*0.3 down.
  CHECK(reference("edge", in).at(1, 1, 0) == doctest::Approx(0.0).epsilon(1e-6));
  CHECK(reference("edge:mode=vertical", in).at(1, 1, 0) == doctest::Approx(0.8));
  CHECK(reference("edge:mode=horizontal", in).at(1, 1, 0) == doctest::Approx(2.4));
  CHECK(reference("edge:mode=sobel", in).at(1, 1, 0) ==
        doctest::Approx(std::sqrt(0.8 * 0.8 + 2.4 * 2.4)));
}

TEST_CASE("gray=1 uses Rec.601 for integer data and Rec.709 for float; alpha passes through") {
  Image in(1, 1, 4, true);
  in.at(0, 0, 0) = 1.0f, in.at(0, 0, 1) = 0.5f, in.at(0, 0, 2) = 0.25f, in.at(0, 0, 3) = 0.75f;
  const std::string identity_gray = "conv:k=1:gray=1";
  in.set_source(PixelType::f32);
  Image out = reference(identity_gray, in);
  REQUIRE(out.channels() == 2);
  CHECK(out.alpha());
  CHECK(out.at(0, 0, 0) == doctest::Approx(0.2126 + 0.7152 * 0.5 + 0.0722 * 0.25));
  CHECK(out.at(0, 0, 1) == 0.75f);
  in.set_source(PixelType::u8);
  CHECK(reference(identity_gray, in).at(0, 0, 0) ==
        doctest::Approx(0.299 + 0.587 * 0.5 + 0.114 * 0.25));
  // Alpha is never filtered.
  CHECK(reference("sharpen:k=3", in).at(0, 0, 3) == 0.75f);
}

TEST_CASE("device matches reference: odd sizes, 1/3/4 channels, every border") {
  const int sizes[][2] = {{1, 1}, {2, 3}, {7, 5}, {33, 17}, {1023, 517}};
  const char* specs[] = {
      "emboss", "sharpen:k=0.7", "edge:mode=sobel",
      "conv:k=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25"};
  for (const auto& size : sizes)
    for (int channels : {1, 3, 4})
      for (const char* border : {"zero", "clamp", "reflect", "wrap"})
        for (const char* spec : specs) {
          const Image in = test::random_image(size[0], size[1], channels, channels == 4,
                                              unsigned(size[0] * 31 + channels));
          check_device_matches(std::string(spec) + ":border=" + border, in);
        }
}

TEST_CASE("device matches reference: non-square and large kernels") {
  std::string k31 = "conv:k=";
  for (int i = 0; i < 31 * 31; ++i) k31 += i ? "," : "", k31 += std::to_string((i * 7919) % 13 - 6);
  std::string k3x7 = "conv:w=3:h=7:k=";
  for (int i = 0; i < 21; ++i) k3x7 += i ? "," : "", k3x7 += std::to_string(i % 5 - 2);
  for (const char* border : {"zero", "clamp", "reflect", "wrap"}) {
    // Images smaller than the kernel exercise borders that wrap or reflect several times.
    check_device_matches(k31 + ":border=" + border + ":scale=100", test::random_image(7, 5, 1));
    check_device_matches(k31 + ":border=" + border + ":scale=100", test::random_image(70, 45, 3));
    check_device_matches(k3x7 + ":border=" + border, test::random_image(33, 17, 3));
    check_device_matches(k3x7 + ":flip=1:offset=0.5:border=" + border, test::random_image(2, 3, 1));
  }
}

TEST_CASE("device handles HDR values beyond [0,1]") {
  check_device_matches("sharpen:k=2", test::random_image(65, 33, 3, false, 5, -100.0f, 4000.0f));
}

TEST_CASE("the tiled conv kernel GPUs run, against the reference: sizes, kernels, borders") {
  Device& tiled = test::tiled_device();
  for (const char* border : test::kBorders)
    for (const auto& size : {std::pair{1, 1}, {7, 5}, {33, 17}, {1023, 517}}) {
      const Image in = test::random_image(size.first, size.second, 3, false, 3);
      const std::string b = std::string(":border=") + border;
      check_device_matches("sharpen" + b, in, tiled);
      check_device_matches("edge:mode=sobel" + b, in, tiled);
      check_device_matches("conv:k=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15:w=5:h=3" + b, in, tiled);
    }
}

TEST_CASE("conv_vec at GPU shapes (the NVIDIA row's conv_vec 4, 4 rows, 32x4), every border" *
          doctest::test_suite("sweeps")) {
  // The GPU form (conv_slide): aligned vector loads with scalar edges, vec_conv rows a
  // work-item; 7x7 reaches further than a vector, 1x5 has no horizontal edge. Kernels up to
  // (rows + KH - 1) x (vector + KW - 1) <= 64 floats (3x3 to 5x5 at 4 rows of 4) load all
  // their rows first, the rest slide.
  Device device(test::gpu_info(), default_cache_dir());
  for (const char* shape : test::sweep<const char*>(
           {"conv_vec=4,vec_conv=4,vec_w=32,vec_h=4", "conv_vec=2,vec_conv=3",
            "conv_vec=4,vec_conv=1", "conv_vec=8,vec_conv=9,vec_w=8,vec_h=2"},
           {"conv_vec=4,vec_conv=4,vec_w=32,vec_h=4", "conv_vec=8,vec_conv=9,vec_w=8,vec_h=2"})) {
    test::retune(device, shape);
    for (const char* border : test::kBorders)
      for (const auto& size : test::sweep<std::pair<int, int>>(
               {{1, 1}, {7, 5}, {9, 4}, {1023, 517}}, {{1, 1}, {9, 4}, {203, 131}})) {
        INFO(std::string(shape), " ", std::string(border), " ", size.first, "x", size.second);
        const Image in = test::random_image(size.first, size.second, 3, false, 5);
        const std::string b = std::string(":border=") + border;
        check_device_matches("sharpen" + b, in, device);
        check_device_matches("edge:mode=sobel" + b, in, device);
        check_device_matches("conv:k=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15:w=5:h=3" + b, in, device);
        check_device_matches("conv:k=1,2,3,4,5:w=1:h=5" + b, in, device);
        std::string k49 = "conv:k=1";
        for (int i = 2; i <= 49; ++i) k49 += fmt::format(",{}", i % 7 - 3);
        check_device_matches(k49 + ":scale=7" + b, in, device);
      }
  }
}
