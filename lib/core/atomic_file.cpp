// Temporary-file-and-rename output.
#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/text.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

// Temporaries are named .halo-TAG-PID-RANDOM.EXT: TAG names this host and PID namespace, so
// that a sweep judges only PIDs it can see; RANDOM makes the name unguessable; EXT is the
// target's, for writers that choose the format by name. Short, so any target name fits.
constexpr std::string_view kPrefix = ".halo-";
// Temporaries of other hosts (a shared NFS folder) or PID namespaces (containers) are removed
// only once nothing has written to them for this long: a live run writes as it goes.
constexpr auto kForeignAge = std::chrono::hours(24);

}  // namespace

// 8 hex digits of the FNV-1a of the host name and this process's PID namespace (its inode, as
// /proc shows it).
const std::string& temporary_tag() {
  static const std::string tag = [] {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    char ns[64] = {};
    const ssize_t n = ::readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    return fnv1a_hex(std::string(host) + '/' + (n > 0 ? std::string(ns, std::size_t(n)) : ""))
        .substr(0, 8);
  }();
  return tag;
}

namespace {

struct TemporaryName {
  std::string tag;
  pid_t pid = 0;
};

// The tag and PID of one of halo's temporaries; nullopt for any other name (a name of the
// older form .halo-PID-NAME has no tag: it is judged by its age).
std::optional<TemporaryName> parse_temporary(const std::string& name) {
  if (!name.starts_with(kPrefix)) return std::nullopt;
  std::size_t at = kPrefix.size();
  TemporaryName parsed;
  const std::size_t dash = name.find('-', at);
  if (dash == std::string::npos) return std::nullopt;
  if (dash - at == 8) {
    parsed.tag = name.substr(at, 8);
    at = dash + 1;
  }
  std::size_t end = at;
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end == at || end >= name.size() || name[end] != '-' || end - at > 9) return std::nullopt;
  parsed.pid = pid_t(std::stol(name.substr(at, end - at)));
  return parsed;
}

bool process_gone(pid_t pid) {
  return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

bool untouched_for(const fs::path& path, fs::file_time_type::duration age) {
  std::error_code ec;
  const auto written = fs::last_write_time(path, ec);
  return !ec && fs::file_time_type::clock::now() - written > age;
}

// A run killed by SIGKILL (or the OOM killer) cannot remove its temporaries. The first
// output a process writes into a folder removes those that are provably dead: of this host
// and PID namespace with their process gone (a live process, even an unrelated one that
// reuses the PID, keeps its files), or of elsewhere and untouched for kForeignAge.
void sweep_stale_temporaries(const fs::path& dir) {
  static std::mutex mutex;
  static std::set<fs::path> swept;
  std::lock_guard lock(mutex);
  if (!swept.insert(dir).second) return;
  std::error_code ec;
  std::vector<std::string> removed;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const auto temporary = parse_temporary(name);
    if (!temporary || (temporary->tag == temporary_tag() && temporary->pid == ::getpid())) continue;
    std::error_code type_ec;
    if (!entry.is_regular_file(type_ec) || entry.is_symlink(type_ec)) continue;
    const bool dead = temporary->tag == temporary_tag() ? process_gone(temporary->pid)
                                                        : untouched_for(entry.path(), kForeignAge);
    std::error_code remove_ec;
    if (dead && fs::remove(entry.path(), remove_ec)) removed.push_back(name);
  }
  if (!removed.empty())
    spdlog::warn("{}: removed {} temporary file{} left by halo runs that were killed ({}{})",
                 dir.string(), removed.size(), removed.size() == 1 ? "" : "s", removed.front(),
                 removed.size() > 1 ? ", ..." : "");
}

// Creates dir/.halo-TAG-PID-RANDOM.EXT exclusively: O_EXCL and O_NOFOLLOW, so that a name
// planted in a shared folder (a file, or a link to one) is never opened; the mode is the
// user's umask's, as the output's own would be. `fd` is left open on it.
fs::path create_temporary(const fs::path& dir, const fs::path& target, int& fd) {
  static std::mutex mutex;
  static std::mt19937_64 random{std::random_device{}()};
  const std::string extension = target.extension().string().substr(0, 16);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::uint64_t draw;
    {
      std::lock_guard lock(mutex);
      draw = random();
    }
    const fs::path temp =
        dir / (std::string(kPrefix) + temporary_tag() + "-" + std::to_string(::getpid()) + "-" +
               fmt::format("{:08x}", draw & 0xffffffffu) + extension);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return temp;
    if (errno != EEXIST)
      throw Error(ErrorKind::CantCreate, target.string() +
                                             ": cannot create its temporary file in " +
                                             dir.string() + ": " + std::strerror(errno));
  }
  throw Error(ErrorKind::CantCreate, target.string() + ": cannot create a temporary file in " +
                                         dir.string() + ": 100 random names taken");
}

// The path through which the open file `fd` is opened again, whatever becomes of its name.
fs::path through_descriptor(int fd, const fs::path& name) {
  const fs::path proc = "/proc/self/fd/" + std::to_string(fd);
  struct stat by_fd {
  }, by_proc{};
  if (::fstat(fd, &by_fd) == 0 && ::stat(proc.c_str(), &by_proc) == 0 &&
      by_fd.st_dev == by_proc.st_dev && by_fd.st_ino == by_proc.st_ino)
    return proc;
  return name;  // no /proc: by name, as before
}

// Whether `path` names the file open as `fd` (not a link, nor another file put there).
bool is_open_file(const fs::path& path, int fd) {
  struct stat by_fd {
  }, by_name{};
  return ::fstat(fd, &by_fd) == 0 && ::lstat(path.c_str(), &by_name) == 0 &&
         by_fd.st_dev == by_name.st_dev && by_fd.st_ino == by_name.st_ino;
}

// rename() that fails with EEXIST rather than replace the target (renameat2's
// RENAME_NOREPLACE; a hard link and unlink where the file system has no such rename).
int rename_no_replace(const fs::path& from, const fs::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (::link(from.c_str(), to.c_str()) != 0) return -1;
  ::unlink(from.c_str());
  return 0;
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

AtomicOutput::AtomicOutput(const fs::path& given, Replace replace)
    : target_(given), replace_(replace) {
  if (writes_in_place(given)) {
    in_place_ = true;
    temp_ = write_path_ = given;
    return;
  }
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
  // Found before any work, not by the rename at the end.
  const long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name_max > 0 && long(target.filename().string().size()) > name_max)
    throw Error(ErrorKind::CantCreate,
                target.string() + ": cannot create: its name is longer than the " +
                    std::to_string(name_max) + " bytes the file system allows");
  sweep_stale_temporaries(dir);
  temp_ = create_temporary(dir, target, fd_);
  write_path_ = through_descriptor(fd_, temp_);
  registration_.emplace(temp_.string());
}

AtomicOutput::~AtomicOutput() {
  if (!committed_ && !in_place_ && fd_ >= 0 && is_open_file(temp_, fd_)) ::unlink(temp_.c_str());
  if (fd_ >= 0) ::close(fd_);
}

void AtomicOutput::commit() {
  if (in_place_) {
    committed_ = true;
    return;
  }
  // The name must still be the file halo created and wrote: a link or file put in its place
  // is not published (nor is it written: writers went through the descriptor).
  if (!is_open_file(temp_, fd_))
    throw Error(ErrorKind::Io, target_.string() + ": its temporary " + temp_.string() +
                                   " was replaced by another process; not published");
  if (replace_ == Replace::never) {
    if (rename_no_replace(temp_, target_) != 0) {
      if (errno == EEXIST) throw OutputExists(target_.string());
      throw Error(ErrorKind::CantCreate,
                  target_.string() + ": cannot create: " + std::strerror(errno));
    }
  } else if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    throw Error(ErrorKind::Io,
                target_.string() + ": cannot rename into place: " + std::strerror(errno));
  }
  committed_ = true;
  if (!is_open_file(target_, fd_))
    spdlog::warn("{}: another process replaced the output as it was renamed into place",
                 target_.string());
}

}  // namespace halo
