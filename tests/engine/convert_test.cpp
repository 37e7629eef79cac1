// Sample conversion on the device must equal the CPU conversion bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "cl/program_cache.hpp"
#include "filters/convert.hpp"
#include "support.hpp"
#include "verify/compare.hpp"

using namespace halo;

namespace {

// The test device, and the same device typed as a GPU without a tuning row: on a CPU the
// first runs the VEC-pixels-per-work-item kernels, the second the per-pixel ones GPUs run.
std::vector<Device*> both_kernel_forms() {
  static Device per_pixel = [] {
    DeviceInfo info = test::device().info();
    info.type = "gpu";
    return Device(info, default_cache_dir());
  }();
  return {&test::device(), &per_pixel};
}

}  // namespace

TEST_CASE("upload widens 8/16-bit and float samples exactly as to_image") {
  for (Device* device : both_kernel_forms())
    for (const auto [w, h] : {std::pair{37, 19}, {1, 1}, {16, 3}, {33, 2}})
      for (PixelType type : {PixelType::u8, PixelType::u16, PixelType::f32})
        for (int channels : {1, 2, 3, 4}) {
          const PixelBuffer pixels = test::random_pixels(w, h, channels, type);
          const Image got = download_image(*device, upload(*device, pixels));
          const Comparison c = compare(got, to_image(pixels), 0.0);
          INFO(device->info().type, " ", w, "x", h, " ", to_string(type), " x", channels, ": ",
               c.summary());
          CHECK(c.max_error == 0.0);
          device->take_timings();
        }
}

TEST_CASE("download quantises exactly as to_pixels, including NaN and out-of-range") {
  for (Device* device : both_kernel_forms()) {
    Image image = test::random_image(41, 7, 3, false, 3, -0.5f, 1.5f);
    image.at(0, 0, 0) = std::numeric_limits<float>::quiet_NaN();
    image.at(1, 0, 0) = std::numeric_limits<float>::infinity();
    image.at(2, 0, 0) = 0.5f / 255.0f;  // exactly half a step: rounds up
    const PixelBuffer source = to_pixels(image, PixelType::f32);
    const DeviceImage on_device = upload(*device, source);
    for (PixelType type : {PixelType::u8, PixelType::u16, PixelType::f32}) {
      const PixelBuffer got = download(*device, on_device, type);
      const PixelBuffer expected = to_pixels(image, type);
      INFO(device->info().type, " ", to_string(type));
      if (type == PixelType::f32) {
        // Float samples pass through as values; drivers may canonicalise a NaN's payload bits
        // (NVIDIA does), so compare values with NaN matching NaN.
        CHECK(compare(to_image(got), to_image(expected), 0.0).max_error == 0.0);
        CHECK(std::isnan(got.samples<float>()[0]));
      } else {
        CHECK(std::memcmp(got.bytes.data(), expected.bytes.data(), got.bytes.size()) == 0);
      }
    }
    CHECK(download(*device, on_device, PixelType::u8).samples<std::uint8_t>()[0] == 0);
    CHECK(download(*device, on_device, PixelType::u8).samples<std::uint8_t>()[3] == 255);
    CHECK(download(*device, on_device, PixelType::u8).samples<std::uint8_t>()[6] == 1);
    device->take_timings();
  }
}

TEST_CASE("luminance on the device equals the reference") {
  Device& device = test::device();
  for (PixelType type : {PixelType::u8, PixelType::f32}) {
    PixelBuffer pixels = test::random_pixels(29, 13, 4, type);
    pixels.alpha = true;
    const Image expected = to_gray(to_image(pixels), luma_weights(type), "test");
    const Image got =
        download_image(device, to_gray(device, upload(device, pixels), luma_weights(type), "test"));
    REQUIRE(got.channels() == 2);
    CHECK(compare(got, expected, 0.0).max_error == 0.0);
  }
  device.take_timings();
}
