// The image model and the CPU side of sample conversion.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/image.hpp"

using namespace halo;

TEST_CASE("rows are padded to 32 floats for coalesced access") {
  CHECK(aligned_pitch(1) == 32);
  CHECK(aligned_pitch(32) == 32);
  CHECK(aligned_pitch(33) == 64);
  const Image image(1023, 5, 3);
  CHECK(image.pitch() == 1024);
  CHECK(image.data().size() == 1024u * 5 * 3);
  CHECK(image.color_channels() == 3);
  CHECK(Image(4, 4, 4, true).color_channels() == 3);
}

TEST_CASE("empty images are refused") {
  CHECK_THROWS_AS(Image(0, 5, 1), Error);
  CHECK_THROWS_AS(PixelBuffer(5, 5, 0, PixelType::u8), Error);
}

TEST_CASE("8-bit samples become v/255 and go back exactly") {
  PixelBuffer pixels(256, 1, 1, PixelType::u8);
  for (int v = 0; v < 256; ++v) pixels.samples<std::uint8_t>()[v] = std::uint8_t(v);
  const Image image = to_image(pixels);
  CHECK(image.source() == PixelType::u8);
  CHECK(image.at(0, 0, 0) == 0.0f);
  CHECK(image.at(255, 0, 0) == doctest::Approx(1.0f).epsilon(1e-7));
  CHECK(image.at(128, 0, 0) == doctest::Approx(128.0 / 255.0).epsilon(1e-6));
  const PixelBuffer back = to_pixels(image, PixelType::u8);
  CHECK(back.bytes == pixels.bytes);
}

TEST_CASE("16-bit samples round trip and interleaving keeps channel order") {
  PixelBuffer pixels(3, 2, 3, PixelType::u16);
  for (std::size_t i = 0; i < pixels.sample_count(); ++i)
    pixels.samples<std::uint16_t>()[i] = std::uint16_t(i * 4099);
  const Image image = to_image(pixels);
  // Pixel (1,1) channel 2 is sample index (1*3 + 1)*3 + 2 = 14.
  CHECK(image.at(1, 1, 2) == doctest::Approx(14.0 * 4099 / 65535.0).epsilon(1e-6));
  CHECK(to_pixels(image, PixelType::u16).bytes == pixels.bytes);
}

TEST_CASE("quantize rounds to nearest, clamps and maps NaN to 0") {
  CHECK(quantize(0.5f / 255.0f, 255.0f) == 1.0f);
  CHECK(quantize(0.49f / 255.0f, 255.0f) == 0.0f);
  CHECK(quantize(-0.2f, 255.0f) == 0.0f);
  CHECK(quantize(7.0f, 255.0f) == 255.0f);
  CHECK(quantize(std::numeric_limits<float>::quiet_NaN(), 255.0f) == 0.0f);
  CHECK(quantize(std::numeric_limits<float>::infinity(), 65535.0f) == 65535.0f);
}
