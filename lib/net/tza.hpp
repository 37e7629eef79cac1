// OIDN's Tensor Archive (.tza, version 2): the named tensors of a trained network, as Intel Open
// Image Denoise publishes its weights (Apache-2.0). The denoise filter reads them.
//
// Layout (little-endian): u16 magic 0x41D7, u8 major version (2), u8 minor, u64 offset of the
// table; the table is a u32 count, then per tensor a u16 name length and the name, a u8 rank,
// that many u32 dimensions, a layout string of `rank` characters ("oihw" for convolution
// weights, "x" for biases), a data type character ('h' half, 'f' float) and the u64 offset of
// the data from the start of the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace halo {

struct Tensor {
  std::vector<int> dims;
  std::string layout;         // "oihw", "x"
  std::vector<float> values;  // row-major in `layout`, widened to float
};

using TensorMap = std::map<std::string, Tensor>;

// Every tensor of an archive; Error(BadData) naming `what` (the file) and the first thing that is
// wrong: magic, version, a table or tensor past the end, an unknown layout or type.
TensorMap parse_tza(std::span<const std::byte> bytes, const std::string& what);
// The same from a file (Error(NoInput) when it cannot be read).
TensorMap read_tza(const std::filesystem::path& path);

// IEEE 754 binary16 to float, exactly (subnormals, infinities and NaN included).
float half_to_float(std::uint16_t h);

}  // namespace halo
