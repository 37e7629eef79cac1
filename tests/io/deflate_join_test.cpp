// Joining raw deflate streams: the walk finds the final block of streams made by libdeflate
// and by zlib in every block type, the joined stream inflates (zlib) to the parts' bytes, and
// damaged streams are refused without reading past their end.
#include <doctest/doctest.h>
#include <libdeflate.h>
#include <zlib.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "io/deflate_join.hpp"

using namespace halo;

namespace {

using Bytes = std::vector<std::uint8_t>;

// Data with a bit of everything: runs of noise (stored or literal-heavy blocks), text (long
// matches) and a smooth gradient, in pieces of 20 KiB so that compressors change blocks.
Bytes mixed(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  const std::string text = "halo filters images on the GPU and proves them on the CPU. ";
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) {
    switch ((i / 20480 + seed) % 3) {
      case 0:
        out[i] = std::uint8_t(rng());
        break;
      case 1:
        out[i] = std::uint8_t(text[i % text.size()]);
        break;
      default:
        out[i] = std::uint8_t((i % 4096) / 16 + (rng() % 3));
    }
  }
  return out;
}

Bytes libdeflate_stream(const Bytes& in, int level) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  REQUIRE(c != nullptr);
  Bytes out(libdeflate_deflate_compress_bound(c, in.size()) + kSyncFlushBytes);
  const std::size_t n =
      libdeflate_deflate_compress(c, in.data(), in.size(), out.data(), out.size());
  libdeflate_free_compressor(c);
  REQUIRE(n > 0);
  out.resize(n);
  return out;
}

// zlib's raw deflate of `in` with a strategy: Z_FIXED gives fixed-code blocks, level 0 stored
// ones, Z_HUFFMAN_ONLY dynamic blocks without distances.
Bytes zlib_stream(const Bytes& in, int level, int strategy) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, level, Z_DEFLATED, -15, 8, strategy) == Z_OK);
  Bytes out(deflateBound(&z, uLong(in.size())) + kSyncFlushBytes);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = uInt(in.size());
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// What zlib inflates from a raw deflate stream; "error" when it refuses it.
std::string inflated(const Bytes& stream, std::size_t expected) {
  z_stream z{};
  REQUIRE(inflateInit2(&z, -15) == Z_OK);
  std::string out(expected + 1, '\0');
  z.next_in = const_cast<Bytef*>(stream.data());
  z.avail_in = uInt(stream.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  const int status = inflate(&z, Z_FINISH);
  const bool whole = status == Z_STREAM_END && z.avail_in == 0;
  out.resize(z.total_out);
  inflateEnd(&z);
  return whole ? out : "error";
}

// The parts' streams joined: every one but the last opened after its final block.
Bytes joined(std::vector<Bytes> parts, int* blocks = nullptr) {
  Bytes out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    Bytes& s = parts[i];
    const std::optional<DeflateLayout> layout = deflate_layout(s.data(), s.size());
    REQUIRE(layout.has_value());
    CHECK(layout->end_bit <= 8 * s.size());
    if (blocks) *blocks += layout->blocks;
    if (i + 1 < parts.size()) {
      s.resize(s.size() + kSyncFlushBytes);
      s.resize(open_final_block(s.data(), *layout));
      // As zlib's sync flush ends a stream: an empty stored block, byte aligned.
      CHECK(Bytes(s.end() - 4, s.end()) == Bytes{0x00, 0x00, 0xff, 0xff});
    }
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

std::vector<Bytes> pieces(const Bytes& data, std::size_t piece) {
  std::vector<Bytes> out;
  for (std::size_t at = 0; at < data.size() || out.empty(); at += piece)
    out.emplace_back(data.begin() + std::ptrdiff_t(at),
                     data.begin() + std::ptrdiff_t(std::min(data.size(), at + piece)));
  return out;
}

}  // namespace

TEST_CASE("deflate join: libdeflate's streams compressed apart inflate as one") {
  const Bytes data = mixed(1'500'000, 7);
  for (const int level : {0, 1, 6, 9, 12}) {
    for (const std::size_t piece : {std::size_t(1) << 18, std::size_t(333'333), data.size()}) {
      INFO("level ", level, ", pieces of ", piece);
      std::vector<Bytes> streams;
      for (const Bytes& p : pieces(data, piece)) streams.push_back(libdeflate_stream(p, level));
      int blocks = 0;
      const Bytes stream = joined(streams, &blocks);
      CHECK(blocks > int(streams.size()));  // streams of several blocks each
      CHECK(inflated(stream, data.size()) == std::string(data.begin(), data.end()));
    }
  }
}

TEST_CASE("deflate join: every block type, and streams from nothing to a byte") {
  const Bytes data = mixed(300'000, 1);
  struct Kind {
    const char* name;
    int level, strategy;
  };
  for (const Kind k : {Kind{"stored", 0, Z_DEFAULT_STRATEGY}, Kind{"fixed codes", 6, Z_FIXED},
                       Kind{"literals only", 6, Z_HUFFMAN_ONLY}, Kind{"runs", 6, Z_RLE},
                       Kind{"dynamic codes", 9, Z_DEFAULT_STRATEGY}}) {
    INFO(k.name);
    std::vector<Bytes> streams;
    for (const Bytes& p : pieces(data, 70'001))
      streams.push_back(zlib_stream(p, k.level, k.strategy));
    CHECK(inflated(joined(streams), data.size()) == std::string(data.begin(), data.end()));
  }
  // Empty and one-byte inputs: a lone final block, once ending on a byte boundary (stored).
  for (const int level : {0, 1, 6, 12}) {
    INFO("level ", level);
    const std::vector<Bytes> streams = {
        libdeflate_stream({}, level), libdeflate_stream({42}, level), libdeflate_stream({}, level),
        libdeflate_stream({7}, level)};
    CHECK(inflated(joined(streams), 2) == std::string{char(42), char(7)});
  }
}

TEST_CASE("deflate join: damaged streams are refused, never read past their end") {
  const Bytes whole = libdeflate_stream(mixed(60'000, 3), 6);
  REQUIRE(deflate_layout(whole.data(), whole.size()).has_value());
  // Cut anywhere: the final block's end code is always in the bytes cut off. Each cut is a
  // copy of its own length, so that AddressSanitizer sees a read past it.
  for (std::size_t size = 0; size < whole.size(); ++size) {
    const Bytes cut(whole.begin(), whole.begin() + std::ptrdiff_t(size));
    CHECK_FALSE(deflate_layout(cut.data(), cut.size()).has_value());
  }
  Bytes longer = whole;
  longer.push_back(0);  // a byte after the final block
  CHECK_FALSE(deflate_layout(longer.data(), longer.size()).has_value());
  const Bytes reserved = {0x07};  // BFINAL, then block type 3 (reserved)
  CHECK_FALSE(deflate_layout(reserved.data(), reserved.size()).has_value());
  const Bytes bad_nlen = {0x01, 0x01, 0x00, 0x00, 0x00, 0x00};  // stored, LEN 1, NLEN not ~LEN
  CHECK_FALSE(deflate_layout(bad_nlen.data(), bad_nlen.size()).has_value());
  // Noise and flipped bits: whatever the answer, a layout within the bytes.
  std::mt19937 rng(11);
  for (int i = 0; i < 2000; ++i) {
    Bytes noisy = i % 2 ? whole : Bytes(std::size_t(rng() % 300));
    if (i % 2)
      noisy[rng() % noisy.size()] ^= std::uint8_t(1u << (rng() % 8));
    else
      for (auto& b : noisy) b = std::uint8_t(rng());
    const auto layout = deflate_layout(noisy.data(), noisy.size());
    if (layout) CHECK(layout->end_bit <= 8 * noisy.size());
  }
}
