// Joining raw deflate streams (RFC 1951) that were compressed apart into one stream.
//
// libdeflate compresses a whole buffer at once and always ends with a final block; a PNG's
// image data is one zlib stream. To join blocks compressed on several cores, every stream but
// the last must end as zlib's sync flush ends one: its last block not final, then an empty
// stored block, byte aligned. libdeflate does not say where its final block starts, so
// `deflate_layout` walks the stream's blocks (Huffman codes included, without producing
// output) to find it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace halo {

// Where a raw deflate stream's blocks lie, in bits from the start of its first byte.
struct DeflateLayout {
  std::size_t final_block_bit = 0;  // the final block's header (its BFINAL bit)
  std::size_t end_bit = 0;          // just past the final block's end-of-block code
  int blocks = 0;
};

// The layout of a whole raw deflate stream of `size` bytes; nullopt when it is not valid
// deflate or has whole bytes after its final block. Distances are not checked against the
// data before them: the stream's compressor is trusted for those, not for its structure.
std::optional<DeflateLayout> deflate_layout(const std::uint8_t* data, std::size_t size);

// Room a stream needs after its bytes for `open_final_block`.
constexpr std::size_t kSyncFlushBytes = 5;

// Rewrites the stream laid out as `layout` to end as a sync flush does: clears its final
// block's BFINAL bit and the padding after its end, then appends an empty stored block
// (a header, padding to the byte, 00 00 FF FF). Another raw deflate stream may then follow it
// byte for byte. `data` needs kSyncFlushBytes of room after the stream; returns its new size.
std::size_t open_final_block(std::uint8_t* data, const DeflateLayout& layout);

}  // namespace halo
