// kernels/convert.cl's two sample conversions as host code: to_image and to_pixels, and CPU
// devices, whose buffers are host memory the host can fill and read in place
// (Device::on_host). PoCL ran the kernels at about 2 ns a pixel (RGB8, 2 cores); these loops
// are written so that GCC vectorises them (0.25 ns widening, 0.35 ns quantising, one core,
// AVX2). Each sample gets the kernels' arithmetic (and halo::quantize's), so the results are
// the same bits.
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "core/image.hpp"

// x86-64's baseline (SSE2) has no byte shuffles or float rounding worth the name: compile each
// loop for AVX2 too and let the loader pick (GCC's function multi-versioning).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HALO_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define HALO_VECTOR_CLONES
#endif

namespace halo {

namespace {

// Calls f.template operator()<C>() with the channel count as a constant for 1-4 channels (the
// row loops then hold every channel and the compiler sees the stride), 0 for other counts.
template <typename F>
void with_channels(int channels, F&& f) {
  switch (channels) {
    case 1:
      return f.template operator()<1>();
    case 2:
      return f.template operator()<2>();
    case 3:
      return f.template operator()<3>();
    case 4:
      return f.template operator()<4>();
    default:
      return f.template operator()<0>();
  }
}

// One row of interleaved samples into plane rows `plane` floats apart.
template <typename T, int C>
HALO_VECTOR_CLONES void widen_row(const T* __restrict in, float* __restrict out, int width,
                                  std::size_t plane, float scale, int channels) {
  const int n = C ? C : channels;
  for (int x = 0; x < width; ++x)
    for (int c = 0; c < n; ++c) out[c * plane + x] = float(in[x * n + c]) * scale;
}

// halo::quantize without a floor or a NaN test: clamping first maps NaN and everything below 0
// to 0 (a comparison with NaN is false) and the rest to [0, max_code], where truncation is
// floor. Same codes as quantize for every float.
template <typename T>
HALO_VECTOR_CLONES void quantize_row(const float* __restrict in, T* __restrict out, int width,
                                     float max_code) {
  for (int x = 0; x < width; ++x) {
    float v = in[x] * max_code + 0.5f;
    v = v > 0.0f ? v : 0.0f;
    v = v < max_code ? v : max_code;
    out[x] = T(int(v));
  }
}

template <typename T, int C>
HALO_VECTOR_CLONES void interleave_row(const T* __restrict in, std::size_t plane, T* __restrict out,
                                       int width, int channels) {
  const int n = C ? C : channels;
  for (int x = 0; x < width; ++x)
    for (int c = 0; c < n; ++c) out[x * n + c] = in[c * plane + x];
}

template <typename T>
void widen(const PixelBuffer& pixels, float* planes, int pitch) {
  const T* in = pixels.samples<T>();
  const std::size_t plane = std::size_t(pitch) * pixels.height;
  const float scale = unit_scale(pixels.type);
  const std::size_t line = std::size_t(pixels.width) * pixels.channels;
  with_channels(pixels.channels, [&]<int C>() {
    for (int y = 0; y < pixels.height; ++y)
      widen_row<T, C>(in + y * line, planes + std::size_t(y) * pitch, pixels.width, plane, scale,
                      pixels.channels);
  });
}

// Quantised samples of one row go through `codes` (one plane row per channel, contiguous,
// so quantising vectorises) and are interleaved from there. Float output skips quantising.
template <typename T>
void narrow(const float* planes, int pitch, int rows, int row0, PixelBuffer& out) {
  const int width = out.width, channels = out.channels;
  const std::size_t plane = std::size_t(pitch) * rows;
  const float max_code = out.type == PixelType::u8    ? 255.0f
                         : out.type == PixelType::u16 ? 65535.0f
                                                      : 0.0f;
  std::vector<T> codes(max_code > 0 ? std::size_t(width) * channels : 0);
  with_channels(channels, [&]<int C>() {
    for (int y = 0; y < out.height; ++y) {
      const float* row = planes + std::size_t(row0 + y) * pitch;
      const T* from = reinterpret_cast<const T*>(row);
      std::size_t from_plane = plane;
      if (max_code > 0) {
        for (int c = 0; c < channels; ++c)
          quantize_row(row + c * plane, codes.data() + std::size_t(c) * width, width, max_code);
        from = codes.data();
        from_plane = width;
      }
      interleave_row<T, C>(from, from_plane, out.samples<T>() + std::size_t(y) * width * channels,
                           width, channels);
    }
  });
}

}  // namespace

void convert_to_planar(const PixelBuffer& pixels, float* planes, int pitch) {
  switch (pixels.type) {
    case PixelType::u8:
      return widen<std::uint8_t>(pixels, planes, pitch);
    case PixelType::u16:
      return widen<std::uint16_t>(pixels, planes, pitch);
    case PixelType::f32:
      return widen<float>(pixels, planes, pitch);
  }
}

void convert_from_planar(const float* planes, int pitch, int rows, int row0, PixelBuffer& out) {
  if (row0 < 0 || row0 + out.height > rows)
    throw Error(ErrorKind::Internal, "convert_from_planar: rows out of the buffer");
  switch (out.type) {
    case PixelType::u8:
      return narrow<std::uint8_t>(planes, pitch, rows, row0, out);
    case PixelType::u16:
      return narrow<std::uint16_t>(planes, pitch, rows, row0, out);
    case PixelType::f32:
      return narrow<float>(planes, pitch, rows, row0, out);
  }
}

}  // namespace halo
