// Sample conversion on the device must equal the CPU conversion bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "cl/program_cache.hpp"
#include "filters/colour/convert.hpp"
#include "pipeline/transfer.hpp"
#include "support.hpp"
#include "verify/compare.hpp"

using namespace halo;
using test::stored;

namespace {

// The test device, and the same device typed as a GPU without a tuning row: on a CPU the
// first converts with host code in its mapped buffers, the second with the kernels GPUs run.
std::vector<Device*> both_paths() {
  static Device per_pixel(test::gpu_info(), default_cache_dir());
  return {&test::device(), &per_pixel};
}

std::uint32_t bits(float value) {
  std::uint32_t b;
  std::memcpy(&b, &value, sizeof b);
  return b;
}

}  // namespace

TEST_CASE("upload widens 8/16-bit and float samples exactly as to_image") {
  for (Device* device : both_paths())
    for (const auto& size : {std::pair{37, 19}, {1, 1}, {16, 3}, {33, 2}}) {
      const int w = size.first, h = size.second;  // not a binding: INFO captures them
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
}

TEST_CASE("download quantises exactly as to_pixels, including NaN and out-of-range") {
  for (Device* device : both_paths()) {
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

TEST_CASE(
    "host conversions, to_image and to_pixels equal the sample definitions on odd widths, strips "
    "and 1-5 channels") {
  // Against the scalar definitions (a sample times unit_scale; quantize): planar_rows.cpp's
  // loops, behind to_image and to_pixels too, are specialised for 1-4 channels and vectorised in
  // blocks: widths around the vector sizes and a generic channel count cover their tails and
  // fallback.
  for (const int w : {1, 7, 15, 16, 17, 33, 1023})
    for (PixelType type : {PixelType::u8, PixelType::u16, PixelType::f32})
      for (int channels : {1, 2, 3, 4, 5}) {
        INFO(w, " wide, ", to_string(type), " x", channels);
        const int h = 5, pitch = (w + 31) / 32 * 32;
        const PixelBuffer pixels = test::random_pixels(w, h, channels, type);
        std::vector<float> planes(std::size_t(pitch) * h * channels, -7.0f);
        convert_to_planar(pixels, planes.data(), pitch);
        const Image image_of = to_image(pixels);
        bool same = true;
        for (int c = 0; c < channels; ++c)
          for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
              const float want = stored(pixels, x, y, c) * unit_scale(type);
              same = same && bits(planes[(std::size_t(c) * h + y) * pitch + x]) == bits(want) &&
                     bits(image_of.at(x, y, c)) == bits(want);
            }
        CHECK(same);

        // Rows 1..3 of the planes back to samples, with every special value among them.
        Image image = test::random_image(w, h, channels, false, 3, -0.5f, 1.5f);
        const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                                  std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(),
                                  0.5f / 255.0f,
                                  std::nextafter(0.5f / 255.0f, 0.0f),
                                  -0.0f,
                                  -0.9f / 255.0f,
                                  std::numeric_limits<float>::denorm_min(),
                                  1.0f - 0.4f / 65535.0f,
                                  3e38f};
        int k = 0;
        for (int c = 0; c < channels; ++c)
          for (int x = 0; x < w; x += 2) image.at(x, 2, c) = specials[k++ % std::size(specials)];
        for (int c = 0; c < channels; ++c)
          for (int y = 0; y < h; ++y)
            std::memcpy(&planes[(std::size_t(c) * h + y) * pitch], image.row(c, y),
                        sizeof(float) * w);
        PixelBuffer got = PixelBuffer::uninitialized(w, 3, channels, type);
        convert_from_planar(planes.data(), pitch, h, 1, got);
        const PixelBuffer pixels_of = to_pixels(image, type, {1, 4});
        const float max_code = type == PixelType::u8 ? 255.0f : 65535.0f;
        bool equal = true;
        for (int y = 0; y < 3; ++y)
          for (int c = 0; c < channels; ++c)
            for (int x = 0; x < w; ++x) {
              const float v = image.at(x, y + 1, c);
              const float want = type == PixelType::f32 ? v : quantize(v, max_code);
              equal = equal && bits(stored(got, x, y, c)) == bits(want) &&
                      bits(stored(pixels_of, x, y, c)) == bits(want);
            }
        CHECK(equal);
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
