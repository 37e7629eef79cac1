// Text helpers that need more than a line.
#include "core/text.hpp"

#include <cstdint>
#include <cstdio>

#include <cmath>
#include <cstdlib>
#include <mutex>
#include <set>

#include <spdlog/spdlog.h>

#include "core/error.hpp"

namespace halo {

std::size_t parse_bytes(const std::string& text, const std::string& option) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  std::string unit = lower(end);
  if (unit.ends_with("ib")) unit.resize(unit.size() - 2);
  if (unit.ends_with("b")) unit.resize(unit.size() - 1);
  const std::string units = "kmgt";
  const auto power = unit.empty() ? std::string::npos : units.find(unit);
  if (end == text.c_str() || !std::isfinite(value) || value <= 0 ||
      (!unit.empty() && (unit.size() != 1 || power == std::string::npos)))
    throw Error(ErrorKind::Usage,
                option + " '" + text + "': expected a size such as 512M, 2G or 1073741824");
  const double bytes = value * std::pow(1024.0, unit.empty() ? 0 : double(power + 1));
  if (bytes < 1 || bytes > 1e18)
    throw Error(ErrorKind::Usage, option + " '" + text + "': out of range");
  return std::size_t(bytes);
}

const std::vector<std::string>& image_extensions() {
  static const std::vector<std::string> extensions = {".png", ".jpg", ".jpeg", ".pfm",
                                                      ".exr", ".tif", ".tiff", ".hdr",
                                                      ".bmp", ".tga", ".webp", ".dpx"};
  return extensions;
}

std::string size_text(std::size_t bytes) {
  char text[32];
  if (bytes >= (std::size_t(10) << 30))
    std::snprintf(text, sizeof text, "%.0f GiB", bytes / 1073741824.0);
  else if (bytes >= (std::size_t(1) << 30))
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / 1073741824.0);
  else if (bytes >= (std::size_t(10) << 20))
    std::snprintf(text, sizeof text, "%.0f MiB", bytes / 1048576.0);
  else if (bytes >= (std::size_t(1) << 20))
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / 1048576.0);
  else
    std::snprintf(text, sizeof text, "%.0f KiB", bytes / 1024.0);
  return text;
}

std::string fnv1a_hex(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

void print_to_stderr(std::string_view text) noexcept {
  if (std::fwrite(text.data(), 1, text.size(), stderr) != text.size()) std::clearerr(stderr);
}

void warn_once(const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> said;
  {
    std::lock_guard lock(mutex);
    if (!said.insert(message).second) return;
  }
  spdlog::warn("{}", message);
}

}  // namespace halo
