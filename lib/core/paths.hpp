// Where halo looks for its own files (presets, the OpenImageIO module, denoise weights): only
// relative to its executable, plus what options and the environment name. An installed,
// unpacked or moved halo never looks into the tree it was built in, where another user could
// plant files; a halo run from inside that build tree may (presets from the source tree).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace halo {

// The folder of the running executable (from /proc/self/exe); empty when unknown.
std::filesystem::path executable_dir();

// Whether the running executable lies inside the build tree it was built in.
bool in_build_tree();

// NoInput error for a path that exists and is not a regular file or folder (a FIFO, socket or
// device): reading one can block forever or never end. "-" and /dev/stdin are read apart
// (io/standard_streams.hpp) and never come here.
void refuse_special_file(const std::string& path);

// The whole of a small text file (a preset, a report): special files refused, NoInput when it
// cannot be read, BadData when over `max_bytes` (naming `what` and the limit).
std::string read_small_file(const std::string& path, std::size_t max_bytes,
                            const std::string& what);

}  // namespace halo
