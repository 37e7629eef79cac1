// Image storage and the CPU side of sample conversion.
#include "core/image.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.hpp"

namespace halo {

std::size_t sample_size(PixelType type) {
  switch (type) {
    case PixelType::u8:
      return 1;
    case PixelType::u16:
      return 2;
    case PixelType::f32:
      return 4;
  }
  return 4;
}

std::string to_string(PixelType type) {
  switch (type) {
    case PixelType::u8:
      return "u8";
    case PixelType::u16:
      return "u16";
    case PixelType::f32:
      return "float";
  }
  return "?";
}

float unit_scale(PixelType type) {
  switch (type) {
    case PixelType::u8:
      return 1.0f / 255.0f;
    case PixelType::u16:
      return 1.0f / 65535.0f;
    case PixelType::f32:
      return 1.0f;
  }
  return 1.0f;
}

static void check_shape(int width, int height, int channels) {
  if (width <= 0 || height <= 0 || channels <= 0)
    throw Error(ErrorKind::BadData, "image size " + std::to_string(width) + "x" +
                                        std::to_string(height) + "x" + std::to_string(channels) +
                                        " is empty");
}

PixelBuffer::PixelBuffer(int width, int height, int channels, PixelType type, bool alpha,
                         std::pmr::memory_resource* memory)
    : width(width),
      height(height),
      channels(channels),
      type(type),
      alpha(alpha),
      bytes(memory ? HostAllocator<std::byte>(memory) : HostAllocator<std::byte>()) {
  check_shape(width, height, channels);
  bytes.resize(sample_count() * sample_size(type));
  std::fill(bytes.begin(), bytes.end(), std::byte{0});
}

PixelBuffer PixelBuffer::uninitialized(int width, int height, int channels, PixelType type,
                                       bool alpha, std::pmr::memory_resource* memory) {
  PixelBuffer pixels;
  pixels.width = width, pixels.height = height, pixels.channels = channels;
  pixels.type = type, pixels.alpha = alpha;
  pixels.bytes = HostBytes(memory ? HostAllocator<std::byte>(memory) : HostAllocator<std::byte>());
  check_shape(width, height, channels);
  pixels.bytes.resize(pixels.sample_count() * sample_size(type));
  return pixels;
}

std::size_t PixelBuffer::sample_count() const {
  return std::size_t(width) * height * channels;
}

int aligned_pitch(int width) {
  return (width + Image::kPitchAlign - 1) / Image::kPitchAlign * Image::kPitchAlign;
}

Span Span::widened(int by, int height) const {
  return {std::max(0, first - by), std::min(height, last + by)};
}

Image::Image(int width, int height, int channels, bool alpha)
    : Image(width, Span{0, height}, height, channels, alpha) {}

Image::Image(int width, Span span, int full_height, int channels, bool alpha)
    : Image(width, span, full_height, channels, alpha, Unset{}) {
  std::fill(data_.begin(), data_.end(), 0.0f);
}

Image Image::uninitialized(int width, Span span, int full_height, int channels, bool alpha) {
  Image image(width, span, full_height, channels, alpha, Unset{});
  if (image.pitch_ > width)
    for (int c = 0; c < channels; ++c)
      for (int y = 0; y < image.height_; ++y)
        std::fill(image.row(c, y) + width, image.row(c, y) + image.pitch_, 0.0f);
  return image;
}

Image::Image(int width, Span span, int full_height, int channels, bool alpha, Unset)
    : width_(width),
      height_(span.count()),
      y0_(span.first),
      full_height_(full_height),
      channels_(channels),
      alpha_(alpha) {
  check_shape(width, height_, channels);
  if (span.first < 0 || span.last > full_height)
    throw Error(ErrorKind::Internal, "strip rows " + std::to_string(span.first) + ".." +
                                         std::to_string(span.last) + " outside an image of " +
                                         std::to_string(full_height) + " rows");
  pitch_ = aligned_pitch(width);
  data_.resize(plane_size() * channels);
}

Image Image::like(int channels, bool alpha) const {
  Image out(width_, span(), full_height_, channels, alpha);
  out.set_source(source_);
  return out;
}

Image Image::like_uninitialized(int channels, bool alpha) const {
  Image out = uninitialized(width_, span(), full_height_, channels, alpha);
  out.set_source(source_);
  return out;
}

Image to_image(const PixelBuffer& pixels) {
  return to_image(pixels, {0, pixels.height}, pixels.height);
}

Image to_image(const PixelBuffer& pixels, Span span, int full_height) {
  if (span.count() != pixels.height)
    throw Error(ErrorKind::Internal, "strip of " + std::to_string(span.count()) + " rows holds " +
                                         std::to_string(pixels.height));
  Image image =
      Image::uninitialized(pixels.width, span, full_height, pixels.channels, pixels.alpha);
  image.set_source(pixels.type);
  convert_to_planar(pixels, image.data().data(), image.pitch());
  return image;
}

float quantize(float value, float max_code) {
  if (std::isnan(value)) return 0.0f;
  const float code = std::floor(value * max_code + 0.5f);
  return std::fmin(std::fmax(code, 0.0f), max_code);
}

PixelBuffer to_pixels(const Image& image, PixelType type) {
  return to_pixels(image, type, image.span());
}

PixelBuffer to_pixels(const Image& image, PixelType type, Span rows) {
  if (!image.span().contains(rows) || rows.empty())
    throw Error(ErrorKind::Internal, "rows " + std::to_string(rows.first) + ".." +
                                         std::to_string(rows.last) + " are not in the strip");
  PixelBuffer pixels = PixelBuffer::uninitialized(image.width(), rows.count(), image.channels(),
                                                  type, image.alpha());
  convert_from_planar(image.data().data(), image.pitch(), image.height(), rows.first - image.y0(),
                      pixels);
  return pixels;
}

PixelBuffer random_pixels(int width, int height, int channels, PixelType type, unsigned seed) {
  PixelBuffer pixels(width, height, channels, type);
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < pixels.sample_count(); ++i) {
    switch (type) {
      case PixelType::u8:
        pixels.samples<std::uint8_t>()[i] = std::uint8_t(rng() & 0xff);
        break;
      case PixelType::u16:
        pixels.samples<std::uint16_t>()[i] = std::uint16_t(rng() & 0xffff);
        break;
      case PixelType::f32:
        pixels.samples<float>()[i] = float(rng() % 100000) / 50000.0f - 0.5f;
        break;
    }
  }
  return pixels;
}

}  // namespace halo
