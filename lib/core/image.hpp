// The two image representations: PixelBuffer holds samples as files store them (interleaved,
// 8/16-bit or float), Image holds the planar float32 channels every filter works on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <string>
#include <vector>

#include "core/host_memory.hpp"

namespace halo {

using Samples = std::vector<float, UnsetAllocator<float>>;

enum class PixelType { u8, u16, f32 };

std::size_t sample_size(PixelType type);
std::string to_string(PixelType type);

// Scale from stored integers to [0,1]. A multiplication (not v/255) so that the OpenCL kernels,
// whose division is not correctly rounded, produce the same floats as the CPU.
float unit_scale(PixelType type);

// Interleaved samples, row-major, top row first, as image files hold them.
struct PixelBuffer {
  int width = 0;
  int height = 0;
  int channels = 0;
  PixelType type = PixelType::f32;
  bool alpha = false;  // the last channel is alpha and passes through filters unchanged
  HostBytes bytes;

  PixelBuffer() = default;
  // memory: where the samples live (nullptr: large_page_resource()); a batch passes
  // page-locked memory.
  PixelBuffer(int width, int height, int channels, PixelType type, bool alpha = false,
              std::pmr::memory_resource* memory = nullptr);
  // The same, with samples left unset, for buffers that are filled right away (strips).
  static PixelBuffer uninitialized(int width, int height, int channels, PixelType type,
                                   bool alpha = false, std::pmr::memory_resource* memory = nullptr);
  std::size_t sample_count() const;
  template <typename T>
  T* samples() {
    return reinterpret_cast<T*>(bytes.data());
  }
  template <typename T>
  const T* samples() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

// Image rows [first, last): what a stage computes, or what a strip holds.
struct Span {
  int first = 0, last = 0;

  int count() const { return last - first; }
  bool empty() const { return last <= first; }
  bool contains(Span other) const { return first <= other.first && other.last <= last; }
  // `by` more rows on each side, within an image `height` rows tall.
  Span widened(int by, int height) const;
  bool operator==(const Span&) const = default;
};

// An image's width and height.
struct Size {
  int width = 0, height = 0;
  bool operator==(const Size&) const = default;
};

// Planar float32 channels. Each row starts on a 128-byte boundary (pitch is a multiple of 32
// floats) so that work-groups on the device read whole cache lines.
//
// An Image is a whole image or a strip of one: its height() rows are the image rows
// [y0(), y0() + height()) of an image full_height() rows tall. row(c, y) indexes the rows held
// (0 .. height() - 1); filters address image rows and subtract y0().
class Image {
 public:
  static constexpr int kPitchAlign = 32;

  Image() = default;
  Image(int width, int height, int channels, bool alpha = false);
  // Rows `span` of an image `full_height` rows tall.
  Image(int width, Span span, int full_height, int channels, bool alpha = false);
  // The same with the samples left unset (only each row's padding past the width is zero),
  // for images whose rows are written right away: a strip's planes then cost no pass over
  // their memory (zeroing was a tenth of a blur's time on the host).
  static Image uninitialized(int width, Span span, int full_height, int channels,
                             bool alpha = false);

  int width() const { return width_; }
  int height() const { return height_; }  // rows held
  int y0() const { return y0_; }
  int full_height() const { return full_height_; }
  Span span() const { return {y0_, y0_ + height_}; }
  // The same width, rows, image height and source, with other channels (contents zero).
  Image like(int channels, bool alpha) const;
  // The same with the samples unset (Image::uninitialized).
  Image like_uninitialized(int channels, bool alpha) const;
  int channels() const { return channels_; }
  bool alpha() const { return alpha_; }
  // Whether the last channel is alpha that filters pass through (premultiply makes it a plane
  // filtered with the colour; unpremultiply makes it alpha again).
  void set_alpha(bool alpha) { alpha_ = alpha; }
  // Channels that filters touch: all but a trailing alpha.
  int color_channels() const { return channels_ - (alpha_ ? 1 : 0); }
  int pitch() const { return pitch_; }
  std::size_t plane_size() const { return std::size_t(pitch_) * height_; }
  // The sample type the pixels came from; decides luma weights (integer: Rec.601, float: 709).
  PixelType source() const { return source_; }
  void set_source(PixelType type) { source_ = type; }

  float* row(int c, int y) { return data_.data() + c * plane_size() + std::size_t(y) * pitch_; }
  const float* row(int c, int y) const {
    return data_.data() + c * plane_size() + std::size_t(y) * pitch_;
  }
  float& at(int x, int y, int c) { return row(c, y)[x]; }
  float at(int x, int y, int c) const { return row(c, y)[x]; }

  Samples& data() { return data_; }
  const Samples& data() const { return data_; }

 private:
  int width_ = 0;
  int height_ = 0;
  int y0_ = 0;
  int full_height_ = 0;
  int channels_ = 0;
  bool alpha_ = false;
  int pitch_ = 0;
  PixelType source_ = PixelType::f32;
  Samples data_;

  struct Unset {};
  Image(int width, Span span, int full_height, int channels, bool alpha, Unset);
};

int aligned_pitch(int width);

// Groups needed to cover n items, `per` at a time (work-groups, tiles, bins).
inline int ceil_div(int n, int per) {
  return (n + per - 1) / per;
}

// CPU references of the device conversions in kernels/convert.cl; results are identical.
Image to_image(const PixelBuffer& pixels);
// The rows of a strip: `pixels` holds the image rows `span` of an image `full_height` tall.
Image to_image(const PixelBuffer& pixels, Span span, int full_height);
PixelBuffer to_pixels(const Image& image, PixelType type);
// Image rows `rows` (within image.span()) only.
PixelBuffer to_pixels(const Image& image, PixelType type, Span rows);
// Quantisation used when writing 8/16-bit: round to nearest, clamp, NaN to 0.
float quantize(float value, float max_code);

// The loops behind to_image and to_pixels (core/planar_rows.cpp; the host code of
// kernels/convert.cl, same bits), for buffers the caller owns: samples into planes of
// `pixels.height` rows `pitch` floats apart; and rows row0.. of planes of `rows` rows into
// `out`'s rows.
void convert_to_planar(const PixelBuffer& pixels, float* planes, int pitch);
void convert_from_planar(const float* planes, int pitch, int rows, int row0, PixelBuffer& out);

// Reproducible noise (seeded mt19937) over each type's range (floats in [-0.5, 1.5)): benchmark
// and tuning inputs that are never constant, so every tile and border matters.
PixelBuffer random_pixels(int width, int height, int channels, PixelType type, unsigned seed);

}  // namespace halo
