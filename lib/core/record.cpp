// Cache records read as side files.
#include "core/record.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/paths.hpp"

namespace halo {

std::optional<nlohmann::json> read_record(const std::filesystem::path& path) {
  const std::optional<std::string> text =
      read_cached_file(path.string(), kMaxRecordBytes, "cache record", spdlog::level::info);
  if (!text) return std::nullopt;
  if (json_nesting(*text) > kMaxRecordDepth) {
    spdlog::info("{}: not a record of halo's (nested too deep); left out", path.string());
    return std::nullopt;
  }
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    spdlog::info("{}: not a record of halo's; left out", path.string());
    return std::nullopt;
  }
  return doc;
}

void write_record(const std::filesystem::path& path, const nlohmann::json& doc) {
  if (writes_in_place(path))
    throw Error(ErrorKind::CantCreate, path.string() + ": not a file halo writes a record into");
  write_atomically(path.string(), [&](std::ostream& out) { out << json_text(doc, 2) << "\n"; });
}

int json_nesting(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

std::string json_text(const nlohmann::json& doc, int indent) {
  return doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace halo
