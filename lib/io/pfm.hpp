// Portable Float Map: halo's own reader and writer (Debian's OpenImageIO 2.4 cannot write PFM).
// "PF" holds 3 channels, "Pf" 1; rows are stored bottom to top; a negative scale means little
// endian. Images here are always top row first.
#pragma once

#include <filesystem>

#include "core/image.hpp"

namespace halo {

// Validates the header against the file size before allocating: BadData for a malformed or
// truncated file, NoInput for a missing one.
PixelBuffer read_pfm(const std::filesystem::path& path);
// Writes little-endian float samples; the image must have 1 or 3 channels (Usage error else).
void write_pfm(const std::filesystem::path& path, const PixelBuffer& pixels);

}  // namespace halo
