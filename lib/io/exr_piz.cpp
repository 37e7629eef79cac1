// PIZ undone: the bitmap of the 16-bit values a chunk uses, those values' Huffman stream, then
// per channel the inverse of a two-dimensional Haar wavelet on the values' ranks, and the ranks
// mapped back to values (OpenEXR's technical introduction, "PIZ").
#include "io/exr_piz.hpp"

#include <ImfHuf.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <exception>

namespace halo {
namespace {

constexpr int kValues = 1 << 16;
constexpr std::size_t kBitmapBytes = kValues / 8;

std::uint16_t read16(const std::uint8_t* p) {
  return std::uint16_t(p[0] | p[1] << 8);
}

std::int32_t read32(const std::uint8_t* p) {
  return std::int32_t(std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
                      std::uint32_t(p[3]) << 24);
}

// One inverse step on a (low, high) pair. While every rank is below 2^14 the encoder used
// plain signed sums and differences; otherwise the same modulo 2^16, with an offset.
void inverse14(std::uint16_t l, std::uint16_t h, std::uint16_t& a, std::uint16_t& b) {
  const int hi = std::int16_t(h);
  const int ai = std::int16_t(l) + (hi & 1) + (hi >> 1);
  a = std::uint16_t(ai);
  b = std::uint16_t(ai - hi);
}

void inverse16(std::uint16_t l, std::uint16_t h, std::uint16_t& a, std::uint16_t& b) {
  const int m = l, d = h;
  const int bb = (m - (d >> 1)) & 0xffff;
  a = std::uint16_t((d + bb - 0x8000) & 0xffff);
  b = std::uint16_t(bb);
}

// The wavelet undone on nx x ny values at `in`, ox apart in a row and oy between rows: from the
// coarsest level (the largest power of two within the smaller side) to the finest, each level
// combining 2x2 blocks p apart, then an odd last column and row with 1-D steps.
template <bool kSmall>
void inverse_wavelet(std::uint16_t* in, int nx, int ox, int ny, int oy) {
  const auto step = [](std::uint16_t l, std::uint16_t h, std::uint16_t& a, std::uint16_t& b) {
    if constexpr (kSmall)
      inverse14(l, h, a, b);
    else
      inverse16(l, h, a, b);
  };
  const int n = std::min(nx, ny);
  int p = 1;
  while (p <= n) p <<= 1;
  p >>= 1;
  int p2 = p;
  p >>= 1;
  for (; p >= 1; p2 = p, p >>= 1) {
    const std::ptrdiff_t last_y = std::ptrdiff_t(oy) * (ny - p2),
                         last_x = std::ptrdiff_t(ox) * (nx - p2);
    const std::ptrdiff_t oy1 = std::ptrdiff_t(oy) * p, oy2 = std::ptrdiff_t(oy) * p2;
    const std::ptrdiff_t ox1 = std::ptrdiff_t(ox) * p, ox2 = std::ptrdiff_t(ox) * p2;
    std::uint16_t i00, i01, i10, i11;
    std::ptrdiff_t y = 0;
    for (; y <= last_y; y += oy2) {
      std::ptrdiff_t x = y;
      for (; x <= y + last_x; x += ox2) {
        std::uint16_t *p00 = in + x, *p01 = p00 + ox1, *p10 = p00 + oy1, *p11 = p10 + ox1;
        step(*p00, *p10, i00, i10);
        step(*p01, *p11, i01, i11);
        step(i00, i01, *p00, *p01);
        step(i10, i11, *p10, *p11);
      }
      if (nx & p) {  // the odd column: a vertical pair
        std::uint16_t *p00 = in + x, *p10 = p00 + oy1;
        step(*p00, *p10, i00, *p10);
        *p00 = i00;
      }
    }
    if (ny & p) {  // the odd row: horizontal pairs
      for (std::ptrdiff_t x = y; x <= y + last_x; x += ox2) {
        std::uint16_t *p00 = in + x, *p01 = p00 + ox1;
        step(*p00, *p01, i00, *p01);
        *p00 = i00;
      }
    }
  }
}

}  // namespace

std::string undo_piz(const std::uint8_t* packed, std::size_t packed_size, std::uint8_t* raw,
                     std::size_t raw_size, const std::vector<int>& words, int width, int height) {
  const std::size_t plane = std::size_t(width) * std::size_t(height);
  std::size_t total = 0;
  for (int w : words) total += std::size_t(w) * plane;
  if (total * 2 != raw_size || total > std::size_t(INT_MAX))
    return "its size does not fit its rows";
  // The bitmap: which 16-bit values occur (0 always counts); ranks replace values.
  if (packed_size < 4) return "its PIZ data is cut short";
  const std::uint16_t low = read16(packed), high = read16(packed + 2);
  std::size_t at = 4;
  std::uint8_t bitmap[kBitmapBytes] = {};
  if (low <= high) {
    if (high >= kBitmapBytes) return "its PIZ bitmap is out of range";
    const std::size_t count = std::size_t(high - low) + 1;
    if (packed_size - at < count) return "its PIZ data is cut short";
    std::memcpy(bitmap + low, packed + at, count);
    at += count;
  }
  thread_local std::vector<std::uint16_t> values(kValues);
  int ranks = 0;
  for (int v = 0; v < kValues; ++v)
    if (v == 0 || (bitmap[v >> 3] >> (v & 7) & 1)) values[std::size_t(ranks++)] = std::uint16_t(v);
  std::fill(values.begin() + ranks, values.end(), std::uint16_t(0));  // ranks no value has
  const int most = ranks - 1;
  if (packed_size - at < 4) return "its PIZ data is cut short";
  const std::int32_t length = read32(packed + at);
  at += 4;
  if (length < 0 || std::size_t(length) > packed_size - at) return "its PIZ data is cut short";
  thread_local std::vector<std::uint16_t> ranked;
  ranked.resize(total);
  try {
    Imf::hufUncompress(reinterpret_cast<const char*>(packed + at), int(length), ranked.data(),
                       int(total));
  } catch (const std::exception& e) {
    return std::string("its PIZ data is damaged: ") + e.what();
  }
  // Each channel's plane, each 16-bit word of its samples on its own.
  std::size_t start = 0;
  for (int w : words) {
    for (int j = 0; j < w; ++j) {
      std::uint16_t* in = ranked.data() + start + std::size_t(j);
      if (most < (1 << 14))
        inverse_wavelet<true>(in, width, w, height, width * w);
      else
        inverse_wavelet<false>(in, width, w, height, width * w);
    }
    start += std::size_t(w) * plane;
  }
  for (auto& r : ranked) r = values[r];
  // Planes back to rows: row y holds each channel's row y in turn, as little-endian words.
  static_assert(std::endian::native == std::endian::little, "EXR data is little-endian");
  std::uint8_t* out = raw;
  for (int y = 0; y < height; ++y) {
    start = 0;
    for (int w : words) {
      const std::size_t row = std::size_t(w) * std::size_t(width);
      std::memcpy(out, ranked.data() + start + std::size_t(y) * row, row * 2);
      out += row * 2;
      start += std::size_t(w) * plane;
    }
  }
  return "";
}

}  // namespace halo
