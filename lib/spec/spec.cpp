// Parsing of filter specs. Values are kept as text here; spec/params.cpp types and checks them.
#include "spec/spec.hpp"

#include "core/error.hpp"

namespace halo {

static std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

static std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == sep) {
      parts.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  return parts;
}

Spec parse_spec(std::string_view text) {
  Spec spec;
  spec.text = trim(text);
  const auto fail = [&](const std::string& why) {
    throw Error(ErrorKind::Usage, "filter '" + spec.text + "': " + why);
  };
  const auto parts = split(spec.text, ':');
  spec.name = parts[0];
  if (spec.name.empty()) fail("missing filter name");
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto& part = parts[i];
    const auto eq = part.find('=');
    if (eq == std::string::npos) fail("expected key=value, got '" + part + "'");
    auto key = trim(std::string_view(part).substr(0, eq));
    auto value = trim(std::string_view(part).substr(eq + 1));
    if (key.empty()) fail("missing key before '=' in '" + part + "'");
    if (value.empty()) fail("missing value for key '" + key + "'");
    for (const auto& [seen, _] : spec.options)
      if (seen == key) fail("key '" + key + "' given twice");
    spec.options.emplace_back(std::move(key), std::move(value));
  }
  return spec;
}

}  // namespace halo
