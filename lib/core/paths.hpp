// Where halo looks for its own files (presets, the OpenImageIO module, denoise weights): only
// relative to its executable, plus what options and the environment name. An installed,
// unpacked or moved halo never looks into the tree it was built in, where another user could
// plant files; a halo run from inside that build tree may (presets from the source tree).
#pragma once

#include <spdlog/spdlog.h>

#include <optional>

#include <cstddef>
#include <filesystem>
#include <string>

namespace halo {

// The folder of the running executable (from /proc/self/exe); empty when unknown.
std::filesystem::path executable_dir();

// Whether the running executable lies inside the build tree it was built in.
bool in_build_tree();

// "a FIFO", "a socket" or "a device" for a file of that st_mode (reading one can block forever
// or never end), null for a regular file or folder.
const char* special_file_kind(unsigned mode);

// Side files: what halo reads besides its images (presets, ICC profiles, OpenColorIO configs
// and the LUT files they name, denoise weights, cache records, tuning files, reports read back)
// are hostile until checked: a regular file only (a FIFO, device or folder refused at once,
// never waited on nor read forever), its size capped and checked against --max-memory before a
// byte is read, read through the one descriptor that was checked.

// The whole of such a file: NoInput when it cannot be opened or is not a regular file, BadData
// when over `max_bytes` or --max-memory (naming `what` and the limit).
std::string read_small_file(const std::string& path, std::size_t max_bytes,
                            const std::string& what);
// A cache's entry (a kernel binary, a colour table, a record): the file when it exists and
// passes those checks; nothing when it is absent or refused, the reason said at `level`
// (entries are hints: a FIFO or folder planted in the cache is passed over, not waited on).
std::optional<std::string> read_cached_file(const std::string& path, std::size_t max_bytes,
                                            const std::string& what,
                                            spdlog::level::level_enum level);
// The same checks for a file a library opens by name itself (OpenColorIO's LUT files).
void check_small_file(const std::string& path, std::size_t max_bytes, const std::string& what);

// The largest a record halo keeps in its cache folder may be (start costs, tuned shapes), and
// how deep its JSON may nest: a deeper one is not halo's (100,000 '[' crashed a parse).
inline constexpr std::size_t kMaxRecordBytes = std::size_t(1) << 20;
inline constexpr int kMaxRecordDepth = 16;

}  // namespace halo
