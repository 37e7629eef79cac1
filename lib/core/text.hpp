// Small text helpers shared across the libraries.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>

namespace halo {

// ASCII lower case: file extensions, channel and device names are compared without case.
inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace halo
