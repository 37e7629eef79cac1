// PIZ, OpenEXR's wavelet and Huffman compression, undone for one chunk by halo: OpenEXRCore 3.1
// (Debian 12's) decodes its Huffman stream bit by bit, and that was three quarters of reading a
// PIZ file; OpenEXR's C++ library has the table-driven decoder, so the Huffman stream goes
// there (Imf::hufUncompress) and the rest, small and exact integer arithmetic, is here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace halo {

// The chunk `packed` (PIZ's layout) into `raw`: every row of the chunk, each channel's samples
// in turn, little-endian, as an uncompressed chunk holds them. `words` has a channel's 16-bit
// words a sample (1 for half, 2 for float and uint), in the file's channel order; every
// channel has `width` x `height` samples. Returns why the data is damaged, or "" when `raw`
// holds the chunk.
std::string undo_piz(const std::uint8_t* packed, std::size_t packed_size, std::uint8_t* raw,
                     std::size_t raw_size, const std::vector<int>& words, int width, int height);

}  // namespace halo
