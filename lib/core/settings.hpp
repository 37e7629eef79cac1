// halo's configuration from outside its command line, in one place: read once from the
// environment (the only place lib/ reads it), then overridden by the options main parsed, and
// installed for the process before any command runs. Programs without such a main (the tests,
// halo_bench) get the environment's on first use.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/limits.hpp"

namespace halo {

struct Settings {
  // Searched before the folders beside the executable (HALO_PRESET_PATH, HALO_WEIGHTS_PATH:
  // colon-separated lists).
  std::vector<std::filesystem::path> preset_path;
  std::vector<std::filesystem::path> weights_path;
  std::string oiio_module;  // HALO_OIIO_MODULE: the OpenImageIO module to load first
  // Compiled kernels, tuned launch shapes and measured device start costs: HALO_CACHE_DIR,
  // else $XDG_CACHE_HOME/halo, else ~/.cache/halo; none under HALO_NO_CACHE or --no-cache.
  std::optional<std::filesystem::path> cache_dir;
  std::string tuning;  // HALO_TUNING: launch-shape settings applied over the chosen ones
  std::filesystem::path temp_dir = "/tmp";  // TMPDIR: standard streams' spool
  // OCIO: the OpenColorIO config the ocio and display filters use without config=FILE (empty:
  // halo's built-in one).
  std::string ocio_config;
  ResourceLimits limits;  // HALO_MAX_PIXELS, HALO_MAX_MEMORY, else defaults
  bool no_color = false;  // NO_COLOR set and not empty
};

// The environment's settings (Usage error for a malformed HALO_MAX_* value).
Settings settings_from_environment();

// The process's settings: those installed, else the environment's.
const Settings& settings();
void install_settings(Settings settings);

}  // namespace halo
