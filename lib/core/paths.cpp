// The executable's own folder.
#include "core/paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/limits.hpp"

namespace halo {

namespace fs = std::filesystem;

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

bool in_build_tree() {
  const fs::path dir = executable_dir();
  if (dir.empty()) return false;
  const fs::path relative = dir.lexically_relative(fs::path(HALO_BUILD_DIR).lexically_normal());
  return !relative.empty() && *relative.begin() != "..";
}

const char* special_file_kind(unsigned mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return nullptr;
}

namespace {

// Opens `path` for reading without waiting (O_NONBLOCK: a FIFO without a writer would block
// the open before fstat could refuse it) and checks it; its descriptor, and its size in `size`.
int open_small_file(const std::string& path, std::size_t max_bytes, const std::string& what,
                    std::size_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw Error(ErrorKind::NoInput, path + ": cannot read " + what + ": " + std::strerror(errno));
  struct stat status {};
  try {
    if (::fstat(fd, &status) != 0)
      throw Error(ErrorKind::NoInput, path + ": cannot read " + what + ": " + std::strerror(errno));
    const char* kind = S_ISDIR(status.st_mode) ? "a folder" : special_file_kind(status.st_mode);
    if (kind)
      throw Error(ErrorKind::NoInput, path + ": " + kind + ", not a regular file (" + what + ")");
    if (std::size_t(status.st_size) > max_bytes)
      throw Error(ErrorKind::BadData, path + ": " + std::to_string(status.st_size) +
                                          " bytes, over the " + std::to_string(max_bytes) +
                                          " bytes allowed (" + what + ")");
    check_memory(path, std::size_t(status.st_size), "the " + what);
  } catch (...) {
    ::close(fd);
    throw;
  }
  size = std::size_t(status.st_size);
  return fd;
}

}  // namespace

std::string read_small_file(const std::string& path, std::size_t max_bytes,
                            const std::string& what) {
  std::size_t size = 0;
  const int fd = open_small_file(path, max_bytes, what, size);
  std::string text(size, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw Error(ErrorKind::NoInput, path + ": cannot read " + what + ": " + std::strerror(error));
    }
    if (n == 0) break;  // it shrank while read: what is there
    got += std::size_t(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

std::optional<std::string> read_cached_file(const std::string& path, std::size_t max_bytes,
                                            const std::string& what,
                                            spdlog::level::level_enum level) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return std::nullopt;
  try {
    return read_small_file(path, max_bytes, what);
  } catch (const Error& e) {
    spdlog::log(level, "{} ({}) left out: {}", path, what, e.what());
    return std::nullopt;
  }
}

void check_small_file(const std::string& path, std::size_t max_bytes, const std::string& what) {
  std::size_t size = 0;
  ::close(open_small_file(path, max_bytes, what, size));
}

}  // namespace halo
