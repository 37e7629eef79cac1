// The two image representations: PixelBuffer holds samples as files store them (interleaved,
// 8/16-bit or float), Image holds the planar float32 channels every filter works on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <string>
#include <type_traits>
#include <vector>

namespace halo {

// Allocates from a memory resource (page-locked memory for fast device transfers, see
// cl/pinned_pool.hpp), unlike std::pmr's allocator it moves with its storage on move
// assignment, so `buffer = make_pinned()` keeps the memory instead of copying it. Copies are
// ordinary heap memory.
template <class T>
struct HostAllocator {
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  std::pmr::memory_resource* resource = std::pmr::new_delete_resource();

  HostAllocator() = default;
  explicit HostAllocator(std::pmr::memory_resource* r) : resource(r) {}
  template <class U>
  HostAllocator(const HostAllocator<U>& other) : resource(other.resource) {}

  T* allocate(std::size_t n) { return static_cast<T*>(resource->allocate(n * sizeof(T), 64)); }
  void deallocate(T* p, std::size_t n) { resource->deallocate(p, n * sizeof(T), 64); }
  HostAllocator select_on_container_copy_construction() const { return {}; }
  template <class U>
  bool operator==(const HostAllocator<U>& other) const {
    return resource == other.resource;
  }
};

using HostBytes = std::vector<std::byte, HostAllocator<std::byte>>;

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
  // memory: where the samples live (nullptr: the heap); a batch passes page-locked memory.
  PixelBuffer(int width, int height, int channels, PixelType type, bool alpha = false,
              std::pmr::memory_resource* memory = nullptr);
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
