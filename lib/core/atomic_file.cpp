// Temporary-file-and-rename output.
#include "core/atomic_file.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

// ".halo-PID-name" -> PID, or 0 when the name is not one of halo's temporaries.
pid_t temporary_owner(const std::string& name) {
  if (!name.starts_with(".halo-")) return 0;
  std::size_t end = 6;
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end == 6 || end >= name.size() || name[end] != '-') return 0;
  return pid_t(std::stol(name.substr(6, end - 6)));
}

// A run killed by SIGKILL (or the OOM killer) cannot remove its temporaries. The first
// output a process writes into a folder removes those whose process is gone: a live process,
// even an unrelated one that reuses the PID, keeps its files.
void sweep_stale_temporaries(const fs::path& dir) {
  static std::mutex mutex;
  static std::set<fs::path> swept;
  std::lock_guard lock(mutex);
  if (!swept.insert(dir).second) return;
  std::error_code ec;
  std::vector<std::string> removed;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const pid_t owner = temporary_owner(name);
    if (owner <= 0 || owner == ::getpid()) continue;
    if (::kill(owner, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code remove_ec;
    if (fs::remove(entry.path(), remove_ec)) removed.push_back(name);
  }
  if (!removed.empty())
    spdlog::warn("{}: removed {} temporary file{} left by halo runs that were killed ({}{})",
                 dir.string(), removed.size(), removed.size() == 1 ? "" : "s", removed.front(),
                 removed.size() > 1 ? ", ..." : "");
}

}  // namespace

bool is_standard_output(const std::string& path) {
  return path == "-" || path == "/dev/stdout" || path == "/dev/fd/1" || path == "/proc/self/fd/1";
}

bool writes_in_place(const fs::path& target) {
  std::error_code ec;
  const std::string text = target.lexically_normal().string();
  if (text.starts_with("/dev/") || text.starts_with("/proc/")) return true;
  const fs::file_status status = fs::status(target, ec);  // follows symlinks
  if (!ec && fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status))
    return true;
  // A symlink into /dev or /proc (/dev/stdout -> /proc/self/fd/1 -> a pipe or a file the
  // shell opened): the final file must stay the one already open.
  const fs::path resolved = fs::weakly_canonical(target, ec);
  const std::string real = resolved.string();
  return !ec &&
         (real.starts_with("/dev/") || real.starts_with("/proc/") || real.starts_with("pipe:"));
}

AtomicOutput::AtomicOutput(const fs::path& given) : target_(given) {
  if (writes_in_place(given)) {
    in_place_ = true;
    temp_ = given;
    return;
  }
  // Through a symlink: the file it points to is replaced, the link stays.
  std::error_code link_ec;
  if (fs::is_symlink(given, link_ec)) target_ = fs::weakly_canonical(given, link_ec);
  const fs::path& target = target_;
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(ErrorKind::CantCreate,
                target.string() + ": cannot create: folder " + dir.string() + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(ErrorKind::CantCreate,
                target.string() + ": cannot create: folder " + dir.string() + " is not writable");
  if (fs::is_directory(target, ec))
    throw Error(ErrorKind::CantCreate, target.string() + ": cannot create: it is a folder");
  sweep_stale_temporaries(dir);
  temp_ = dir / (".halo-" + std::to_string(::getpid()) + "-" + target.filename().string());
}

AtomicOutput::~AtomicOutput() {
  if (!committed_ && !in_place_) {
    std::error_code ignore;
    fs::remove(temp_, ignore);
  }
}

void AtomicOutput::commit() {
  if (in_place_) {
    committed_ = true;
    return;
  }
  std::error_code ec;
  fs::rename(temp_, target_, ec);
  if (ec)
    throw Error(ErrorKind::Io, target_.string() + ": cannot rename into place: " + ec.message());
  committed_ = true;
}

}  // namespace halo
