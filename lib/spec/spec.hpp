// The filter spec grammar shared by -f, presets and help text: name[:key=value]...
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace halo {

struct Spec {
  std::string text;  // as the user wrote it, for error messages
  std::string name;
  std::vector<std::pair<std::string, std::string>> options;
};

// Splits a spec; rejects empty names, parts without '=' and repeated keys (Usage error).
Spec parse_spec(std::string_view text);

}  // namespace halo
