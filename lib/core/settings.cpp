// The one reader of halo's environment variables.
#include "core/settings.hpp"

#include <cstdlib>
#include <mutex>
#include <sstream>

#include "core/text.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::vector<fs::path> path_list(const std::string& text) {
  std::vector<fs::path> dirs;
  std::stringstream list(text);
  for (std::string dir; std::getline(list, dir, ':');)
    if (!dir.empty()) dirs.emplace_back(dir);
  return dirs;
}

std::optional<fs::path> cache_dir() {
  if (const std::string off = variable("HALO_NO_CACHE"); !off.empty() && off != "0")
    return std::nullopt;
  if (const std::string dir = variable("HALO_CACHE_DIR"); !dir.empty()) return fs::path(dir);
  if (const std::string xdg = variable("XDG_CACHE_HOME"); !xdg.empty())
    return fs::path(xdg) / "halo";
  if (const std::string home = variable("HOME"); !home.empty())
    return fs::path(home) / ".cache" / "halo";
  return std::nullopt;
}

std::mutex settings_mutex;
std::optional<Settings> installed;

}  // namespace

Settings settings_from_environment() {
  Settings s;
  s.preset_path = path_list(variable("HALO_PRESET_PATH"));
  s.weights_path = path_list(variable("HALO_WEIGHTS_PATH"));
  s.oiio_module = variable("HALO_OIIO_MODULE");
  s.cache_dir = cache_dir();
  s.tuning = variable("HALO_TUNING");
  s.ocio_config = variable("OCIO");
  if (const std::string tmp = variable("TMPDIR"); !tmp.empty()) s.temp_dir = tmp;
  s.limits = default_limits();
  if (const std::string text = variable("HALO_MAX_PIXELS"); !text.empty())
    s.limits.max_pixels = parse_pixels(text, "HALO_MAX_PIXELS");
  if (const std::string text = variable("HALO_MAX_MEMORY"); !text.empty())
    s.limits.max_memory = parse_bytes(text, "HALO_MAX_MEMORY");
  s.no_color = !variable("NO_COLOR").empty();
  return s;
}

const Settings& settings() {
  std::lock_guard lock(settings_mutex);
  if (!installed) installed = settings_from_environment();
  return *installed;
}

void install_settings(Settings settings) {
  std::lock_guard lock(settings_mutex);
  installed = std::move(settings);
}

}  // namespace halo
