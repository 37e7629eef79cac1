// Small text helpers shared across the libraries.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace halo {

// ASCII lower case: file extensions, channel and device names are compared without case.
inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// ASCII upper case: a tuning knob's name as its kernels' define (cl/tuning.hpp).
inline std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

// A size as people write it: 1073741824, 512K, 512M, 1.5G, 2GiB (powers of 1024). Usage error
// naming `option` otherwise.
std::size_t parse_bytes(const std::string& text, const std::string& option);
// A size for messages: 640 KiB, 858 MiB, 3.8 GiB.
std::string size_text(std::size_t bytes);

// 64-bit FNV-1a of text as 16 hex digits, stable across compilers and runs (unlike
// std::hash): names of cache entries (kernels, tuned launch shapes).
std::string fnv1a_hex(const std::string& text);

// spdlog::warn, once per process for each message: a file is opened more than once in a run
// (its format recognised, then read), and what its content deserves is said once.
void warn_once(const std::string& message);

// `text` on standard error, as a log line halo writes itself (spdlog's lines never throw
// either): a stderr that cannot be written (closed, a full disk) loses the line, never the
// exit code of work that succeeded.
void print_to_stderr(std::string_view text) noexcept;

// The image formats halo reads and writes, by lower-case extension with the dot: halo's own
// (PNG, JPEG, PFM), then OpenImageIO's that Debian's build has. Folder inputs take these
// files; standard output may be written in any of them.
const std::vector<std::string>& image_extensions();

}  // namespace halo
