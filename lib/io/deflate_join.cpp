// Walking a raw deflate stream's blocks: the block headers and Huffman codes of RFC 1951
// decoded as an inflater decodes them, every literal, length and distance skipped instead of
// copied. Decoding follows zlib's puff (a table for short codes, a bit at a time for long).
#include "io/deflate_join.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

namespace halo {

namespace {

constexpr int kMaxBits = 15;   // deflate's longest code
constexpr int kFastBits = 10;  // codes up to this long decode by one table lookup

// Bits least significant first, as deflate packs them. Bits past the end read as zeros;
// `overrun` says that some were consumed.
class BitReader {
 public:
  BitReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  // The next n (at most 25) bits, not consumed.
  std::uint32_t peek(int n) const {
    const std::size_t byte = pos_ >> 3;
    std::uint64_t word = 0;
    if (byte + 8 <= size_ && std::endian::native == std::endian::little)
      std::memcpy(&word, data_ + byte, 8);
    else
      for (std::size_t i = byte; i < size_ && i < byte + 8; ++i)
        word |= std::uint64_t(data_[i]) << (8 * (i - byte));
    return std::uint32_t(word >> (pos_ & 7)) & ((1u << n) - 1);
  }
  std::uint32_t take(int n) {
    const std::uint32_t v = peek(n);
    pos_ += std::size_t(n);
    return v;
  }
  void skip(std::size_t n) { pos_ += n; }
  void align() { pos_ = (pos_ + 7) & ~std::size_t(7); }
  std::size_t pos() const { return pos_; }
  bool overrun() const { return pos_ > 8 * size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_, pos_ = 0;
};

std::uint32_t reversed(std::uint32_t code, int bits) {
  std::uint32_t r = 0;
  for (int i = 0; i < bits; ++i, code >>= 1) r = (r << 1) | (code & 1);
  return r;
}

// A canonical Huffman code given by its symbols' code lengths (0: unused).
class Huffman {
 public:
  // False when the lengths ask for more codes than fit (an over-subscribed code); incomplete
  // codes are kept, and the bits they leave out decode to no symbol.
  bool build(const std::uint8_t* lengths, int n) {
    count_.fill(0);
    for (int s = 0; s < n; ++s) ++count_[lengths[s]];
    count_[0] = 0;
    int left = 1;
    for (int len = 1; len <= kMaxBits; ++len)
      if ((left = 2 * left - count_[len]) < 0) return false;
    std::array<int, kMaxBits + 1> next{};  // where each length's symbols go in symbols_
    for (int len = 1; len < kMaxBits; ++len) next[len + 1] = next[len] + count_[len];
    for (int s = 0; s < n; ++s)
      if (lengths[s]) symbols_[std::size_t(next[lengths[s]]++)] = std::uint16_t(s);
    // Codes in order of (length, symbol), each the one before plus one, doubled at every
    // longer length; the table is indexed by the next kFastBits bits, the code's first bit
    // lowest.
    fast_.fill(0);
    std::uint32_t code = 0;
    std::size_t index = 0;
    for (int len = 1; len <= kMaxBits; ++len, code <<= 1)
      for (int i = 0; i < count_[len]; ++i, ++code, ++index) {
        if (len > kFastBits) continue;
        const auto entry = std::uint16_t(symbols_[index] << 4 | len);
        for (std::uint32_t e = reversed(code, len); e < (1u << kFastBits); e += 1u << len)
          fast_[e] = entry;
      }
    return true;
  }

  // The next symbol, or -1 where the bits are no code.
  int decode(BitReader& in) const {
    if (const std::uint16_t e = fast_[in.peek(kFastBits)]) {
      in.skip(e & 15);
      return e >> 4;
    }
    int code = 0, first = 0, index = 0;  // a longer code, a bit at a time
    for (int len = 1; len <= kMaxBits; ++len) {
      code |= int(in.take(1));
      const int count = count_[len];
      if (code - count < first) return symbols_[std::size_t(index + code - first)];
      index += count;
      first = (first + count) << 1;
      code <<= 1;
    }
    return -1;
  }

 private:
  std::array<int, kMaxBits + 1> count_{};
  std::array<std::uint16_t, 288> symbols_{};
  std::array<std::uint16_t, 1u << kFastBits> fast_{};  // symbol << 4 | length; 0: longer
};

const Huffman& fixed_literals() {
  static const Huffman code = [] {
    std::uint8_t lengths[288];
    std::fill(lengths, lengths + 144, 8);
    std::fill(lengths + 144, lengths + 256, 9);
    std::fill(lengths + 256, lengths + 280, 7);
    std::fill(lengths + 280, lengths + 288, 8);
    Huffman h;
    h.build(lengths, 288);
    return h;
  }();
  return code;
}

const Huffman& fixed_distances() {
  static const Huffman code = [] {
    std::uint8_t lengths[30];
    std::fill(lengths, lengths + 30, 5);
    Huffman h;
    h.build(lengths, 30);
    return h;
  }();
  return code;
}

// Extra bits after each length symbol (257..285) and distance symbol (0..29).
constexpr std::uint8_t kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                           2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr std::uint8_t kDistanceExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                             6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

// A dynamic block's two codes, from the code lengths its header sends coded themselves.
bool read_codes(BitReader& in, Huffman& literals, Huffman& distances) {
  const int nlen = int(in.take(5)) + 257, ndist = int(in.take(5)) + 1;
  const int ncode = int(in.take(4)) + 4;
  if (nlen > 286 || ndist > 30) return false;
  static constexpr std::uint8_t kOrder[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                              11, 4,  12, 3, 13, 2, 14, 1, 15};
  std::uint8_t code_lengths[19] = {};
  for (int i = 0; i < ncode; ++i) code_lengths[kOrder[i]] = std::uint8_t(in.take(3));
  Huffman lengths_code;
  if (!lengths_code.build(code_lengths, 19)) return false;
  std::uint8_t lengths[286 + 30] = {};
  for (int i = 0; i < nlen + ndist;) {
    const int s = lengths_code.decode(in);
    if (s < 0 || in.overrun()) return false;
    if (s < 16) {
      lengths[i++] = std::uint8_t(s);
      continue;
    }
    std::uint8_t value = 0;  // 17 and 18 repeat zeros, 16 the length before
    int repeat = 0;
    if (s == 16) {
      if (i == 0) return false;
      value = lengths[i - 1];
      repeat = 3 + int(in.take(2));
    } else {
      repeat = s == 17 ? 3 + int(in.take(3)) : 11 + int(in.take(7));
    }
    if (i + repeat > nlen + ndist) return false;
    while (repeat--) lengths[i++] = value;
  }
  if (lengths[256] == 0) return false;  // a block needs its end code
  return literals.build(lengths, nlen) && distances.build(lengths + nlen, ndist);
}

// Past a coded block's symbols up to its end code.
bool skip_symbols(BitReader& in, const Huffman& literals, const Huffman& distances) {
  for (;;) {
    const int s = literals.decode(in);
    if (s < 0 || in.overrun()) return false;
    if (s < 256) continue;
    if (s == 256) return true;
    if (s > 285) return false;
    in.skip(kLengthExtra[s - 257]);
    const int d = distances.decode(in);
    if (d < 0 || d > 29) return false;
    in.skip(kDistanceExtra[d]);
  }
}

}  // namespace

std::optional<DeflateLayout> deflate_layout(const std::uint8_t* data, std::size_t size) {
  BitReader in(data, size);
  DeflateLayout layout;
  Huffman literals, distances;  // a dynamic block's, rebuilt for each
  for (bool final = false; !final;) {
    const std::size_t header = in.pos();
    final = in.take(1) != 0;
    const std::uint32_t type = in.take(2);
    ++layout.blocks;
    if (type == 0) {  // stored: LEN and its complement NLEN, then LEN bytes
      in.align();
      const std::size_t at = in.pos() / 8;
      if (at + 4 > size) return std::nullopt;
      const unsigned len = data[at] | unsigned(data[at + 1]) << 8;
      const unsigned nlen = data[at + 2] | unsigned(data[at + 3]) << 8;
      if ((len ^ 0xffffu) != nlen) return std::nullopt;
      in.skip(8 * (4 + std::size_t(len)));
    } else if (type == 1) {
      if (!skip_symbols(in, fixed_literals(), fixed_distances())) return std::nullopt;
    } else if (type == 2) {
      if (!read_codes(in, literals, distances) || !skip_symbols(in, literals, distances))
        return std::nullopt;
    } else {
      return std::nullopt;
    }
    if (in.overrun()) return std::nullopt;
    if (final) layout.final_block_bit = header;
  }
  layout.end_bit = in.pos();
  if ((layout.end_bit + 7) / 8 != size) return std::nullopt;
  return layout;
}

std::size_t open_final_block(std::uint8_t* data, const DeflateLayout& layout) {
  data[layout.final_block_bit / 8] &= std::uint8_t(~(1u << (layout.final_block_bit % 8)));
  std::size_t size = (layout.end_bit + 7) / 8;
  const unsigned used = unsigned(layout.end_bit % 8);  // of the last byte; 0: all of it
  if (used) data[size - 1] &= std::uint8_t((1u << used) - 1);
  // The empty stored block's header is 3 zero bits: in the last byte's padding when 3 are
  // free, else in a byte of its own. Then LEN 0 and NLEN 0xffff, byte aligned.
  if (used == 0 || used > 5) data[size++] = 0;
  for (const std::uint8_t b : {0x00, 0x00, 0xff, 0xff}) data[size++] = b;
  return size;
}

}  // namespace halo
