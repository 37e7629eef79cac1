// Presets: presets/NAME.halo, one spec per line, '#' comments; the first comment line says what
// the preset is for.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace halo {

struct PresetLine {
  std::string spec;
  std::string origin;  // "path:line", for error messages
};

struct Preset {
  std::string name;
  std::filesystem::path path;
  std::string summary;
  std::vector<PresetLine> lines;
};

// Folders searched for presets by name: $HALO_PRESET_PATH (colon-separated), then
// ../share/halo/presets beside the executable (an install, wherever it was put), else the
// source tree's presets/.
std::vector<std::filesystem::path> preset_dirs();

// A name (searched in preset_dirs()) or a path to a .halo file. Usage error when missing.
Preset load_preset(const std::string& name_or_path);
std::vector<Preset> list_presets();

}  // namespace halo
