// Cache records read as side files.
#include "core/record.hpp"

#include <spdlog/spdlog.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/paths.hpp"

namespace halo {

std::optional<nlohmann::json> read_record(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return std::nullopt;
  try {
    const std::string text = read_small_file(path.string(), kMaxRecordBytes, "cache record");
    bool too_deep = false;
    nlohmann::json doc = nlohmann::json::parse(
        text,
        [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
          too_deep |= depth > kMaxRecordDepth;
          return !too_deep;
        },
        false);
    if (too_deep || doc.is_discarded() || !doc.is_object()) {
      spdlog::info("{}: not a record of halo's; left out", path.string());
      return std::nullopt;
    }
    return doc;
  } catch (const std::exception& e) {
    spdlog::info("{} left out: {}", path.string(), e.what());
    return std::nullopt;
  }
}

void write_record(const std::filesystem::path& path, const nlohmann::json& doc) {
  if (writes_in_place(path))
    throw Error(ErrorKind::CantCreate, path.string() + ": not a file halo writes a record into");
  write_atomically(path.string(), [&](std::ostream& out) { out << json_text(doc, 2) << "\n"; });
}

std::string json_text(const nlohmann::json& doc, int indent) {
  return doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace halo
