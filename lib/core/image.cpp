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
  data_.assign(plane_size() * channels, 0.0f);
}

Image Image::like(int channels, bool alpha) const {
  Image out(width_, span(), full_height_, channels, alpha);
  out.set_source(source_);
  return out;
}

template <typename T>
static void deinterleave(const PixelBuffer& pixels, Image& image, float scale) {
  const T* src = pixels.samples<T>();
  for (int c = 0; c < pixels.channels; ++c)
    for (int y = 0; y < pixels.height; ++y) {
      float* dst = image.row(c, y);
      const T* line = src + std::size_t(y) * pixels.width * pixels.channels + c;
      for (int x = 0; x < pixels.width; ++x) dst[x] = float(line[x * pixels.channels]) * scale;
    }
}

Image to_image(const PixelBuffer& pixels) {
  return to_image(pixels, {0, pixels.height}, pixels.height);
}

Image to_image(const PixelBuffer& pixels, Span span, int full_height) {
  if (span.count() != pixels.height)
    throw Error(ErrorKind::Internal, "strip of " + std::to_string(span.count()) + " rows holds " +
                                         std::to_string(pixels.height));
  Image image(pixels.width, span, full_height, pixels.channels, pixels.alpha);
  image.set_source(pixels.type);
  const float scale = unit_scale(pixels.type);
  switch (pixels.type) {
    case PixelType::u8:
      deinterleave<std::uint8_t>(pixels, image, scale);
      break;
    case PixelType::u16:
      deinterleave<std::uint16_t>(pixels, image, scale);
      break;
    case PixelType::f32:
      deinterleave<float>(pixels, image, scale);
      break;
  }
  return image;
}

float quantize(float value, float max_code) {
  if (std::isnan(value)) return 0.0f;
  const float code = std::floor(value * max_code + 0.5f);
  return std::fmin(std::fmax(code, 0.0f), max_code);
}

// Rows [row0, row0 + pixels.height) of the rows image holds.
template <typename T>
static void interleave(const Image& image, int row0, PixelBuffer& pixels, float max_code) {
  T* dst = pixels.samples<T>();
  for (int c = 0; c < image.channels(); ++c)
    for (int y = 0; y < pixels.height; ++y) {
      const float* src = image.row(c, row0 + y);
      T* line = dst + std::size_t(y) * image.width() * image.channels() + c;
      for (int x = 0; x < image.width(); ++x)
        line[x * image.channels()] = max_code > 0 ? T(quantize(src[x], max_code)) : T(src[x]);
    }
}

PixelBuffer to_pixels(const Image& image, PixelType type) {
  return to_pixels(image, type, image.span());
}

PixelBuffer to_pixels(const Image& image, PixelType type, Span rows) {
  if (!image.span().contains(rows) || rows.empty())
    throw Error(ErrorKind::Internal, "rows " + std::to_string(rows.first) + ".." +
                                         std::to_string(rows.last) + " are not in the strip");
  PixelBuffer pixels(image.width(), rows.count(), image.channels(), type, image.alpha());
  const int row0 = rows.first - image.y0();
  switch (type) {
    case PixelType::u8:
      interleave<std::uint8_t>(image, row0, pixels, 255.0f);
      break;
    case PixelType::u16:
      interleave<std::uint16_t>(image, row0, pixels, 65535.0f);
      break;
    case PixelType::f32:
      interleave<float>(image, row0, pixels, 0.0f);
      break;
  }
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
