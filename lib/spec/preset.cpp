// Loading preset files.
#include "spec/preset.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/paths.hpp"
#include "core/settings.hpp"

namespace halo {

namespace fs = std::filesystem;

static std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// $HALO_PRESET_PATH, then the folder an installed halo has beside it (PREFIX/bin/halo ->
// PREFIX/share/halo/presets), wherever the tree was installed, unpacked or moved to; a halo
// that has none uses the source tree's only when it runs from its build tree (core/paths.hpp).
std::vector<fs::path> preset_dirs() {
  std::vector<fs::path> dirs = settings().preset_path;
  std::error_code ec;
  const fs::path bin = executable_dir();
  const fs::path installed = bin.parent_path() / "share/halo/presets";
  if (!bin.empty() && fs::is_directory(installed, ec)) {
    dirs.push_back(installed);
    return dirs;
  }
#ifdef HALO_PRESET_SOURCE_DIR
  if (in_build_tree()) dirs.emplace_back(HALO_PRESET_SOURCE_DIR);
#endif
  return dirs;
}

// A preset is a few lines of specs: a file far larger, or with control characters, is not one,
// and none of it is echoed (a mistyped --preset /etc/shadow must not print its first line).
constexpr std::size_t kMaxPresetBytes = 1 << 20;
constexpr std::size_t kMaxLineBytes = 4096;

void check_preset_line(const std::string& line, const fs::path& path, int number) {
  const std::string where = path.string() + ":" + std::to_string(number);
  if (line.size() > kMaxLineBytes)
    throw Error(ErrorKind::Usage,
                where + ": not a preset line (over " + std::to_string(kMaxLineBytes) + " bytes)");
  for (unsigned char c : line)
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
      throw Error(ErrorKind::Usage, where + ": not a preset line (control characters)");
}

static Preset read_preset(const fs::path& path) {
  std::istringstream in(read_small_file(path.string(), kMaxPresetBytes, "preset"));
  Preset preset;
  preset.name = path.stem().string();
  preset.path = path;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    check_preset_line(line, path, number);
    const auto hash = line.find('#');
    if (hash != std::string::npos) {
      if (preset.summary.empty() && trim(line.substr(0, hash)).empty())
        preset.summary = trim(line.substr(hash + 1));
      line = line.substr(0, hash);
    }
    line = trim(line);
    if (!line.empty()) preset.lines.push_back({line, path.string() + ":" + std::to_string(number)});
  }
  if (preset.lines.empty())
    throw Error(ErrorKind::Usage, path.string() + ": preset has no filter lines");
  return preset;
}

Preset load_preset(const std::string& name_or_path) {
  const fs::path direct(name_or_path);
  if (name_or_path.find('/') != std::string::npos || direct.extension() == ".halo") {
    std::error_code ec;  // a name too long for the file system is "does not exist", not a throw
    if (!fs::exists(direct, ec))
      throw Error(ErrorKind::NoInput, name_or_path + ": preset file does not exist");
    if (direct.extension() != ".halo")
      throw Error(ErrorKind::Usage,
                  name_or_path + ": not a preset (preset files are named NAME.halo)");
    return read_preset(direct);
  }
  for (const auto& dir : preset_dirs()) {
    const auto path = dir / (name_or_path + ".halo");
    std::error_code ec;
    if (fs::exists(path, ec)) return read_preset(path);
  }
  std::string known;
  for (const auto& p : list_presets()) known += (known.empty() ? "" : ", ") + p.name;
  throw Error(ErrorKind::Usage,
              "unknown preset '" + name_or_path + "' (have " + known + "; see halo presets)");
}

std::vector<Preset> list_presets() {
  std::vector<Preset> presets;
  std::set<std::string> seen;  // earlier folders shadow later ones
  for (const auto& dir : preset_dirs()) {
    std::error_code ec;
    std::set<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".halo") files.insert(entry.path());
    // One file that cannot be read (a FIFO, no permission, over its size, not a preset) is
    // named and passed over: the others are still listed.
    for (const auto& file : files) {
      if (!seen.insert(file.stem().string()).second) continue;
      try {
        presets.push_back(read_preset(file));
      } catch (const Error& e) {
        spdlog::warn("{} (left out of the presets)", e.what());
      }
    }
  }
  return presets;
}

}  // namespace halo
