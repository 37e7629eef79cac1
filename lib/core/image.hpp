// The two image representations: PixelBuffer holds samples as files store them (interleaved,
// 8/16-bit or float), Image holds the planar float32 channels every filter works on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace halo {

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
  std::vector<std::byte> bytes;

  PixelBuffer() = default;
  PixelBuffer(int width, int height, int channels, PixelType type, bool alpha = false);
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

// Planar float32 channels. Each row starts on a 128-byte boundary (pitch is a multiple of 32
// floats) so that work-groups on the device read whole cache lines.
class Image {
 public:
  static constexpr int kPitchAlign = 32;

  Image() = default;
  Image(int width, int height, int channels, bool alpha = false);

  int width() const { return width_; }
  int height() const { return height_; }
  int channels() const { return channels_; }
  bool alpha() const { return alpha_; }
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

  std::vector<float>& data() { return data_; }
  const std::vector<float>& data() const { return data_; }

 private:
  int width_ = 0;
  int height_ = 0;
  int channels_ = 0;
  bool alpha_ = false;
  int pitch_ = 0;
  PixelType source_ = PixelType::f32;
  std::vector<float> data_;
};

int aligned_pitch(int width);

// CPU references of the device conversions in kernels/convert.cl; results are identical.
Image to_image(const PixelBuffer& pixels);
PixelBuffer to_pixels(const Image& image, PixelType type);
// Quantisation used when writing 8/16-bit: round to nearest, clamp, NaN to 0.
float quantize(float value, float max_code);

}  // namespace halo
