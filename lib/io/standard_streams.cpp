// Standard input and output as image files, through a private temporary folder.
#include "io/standard_streams.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/settings.hpp"
#include "core/temporaries.hpp"
#include "core/text.hpp"
#include "io/codec.hpp"

namespace halo {

namespace {

// Writes all of `size` bytes to `fd`, retrying short writes and interrupted calls.
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= std::size_t(n);
  }
  return true;
}

// Copies `from` to `to` until the end of `from`, or until more than `limit` bytes came; the
// errno of a failure is kept.
enum class CopyFailure { none, read, write, too_long };
CopyFailure copy_fd(int from, int to, std::size_t& copied,
                    std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  std::vector<char> buffer(std::size_t(1) << 20);
  copied = 0;
  for (;;) {
    const ssize_t n = ::read(from, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return CopyFailure::read;
    if (n == 0) return CopyFailure::none;
    if (std::size_t(n) > limit - copied) return CopyFailure::too_long;
    if (!write_all(to, buffer.data(), std::size_t(n))) return CopyFailure::write;
    copied += std::size_t(n);
  }
}

}  // namespace

PrivateFolder::PrivateFolder() {
  const std::string pattern =
      (settings().temp_dir / ("halo-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data()))
    throw Error(ErrorKind::CantCreate, pattern +
                                           ": cannot create a temporary folder for "
                                           "standard input or output: " +
                                           std::strerror(errno));
  path_ = name.data();
  registered_.push_back(std::make_unique<TemporaryPath>(path_));
}

std::string PrivateFolder::file(const std::string& name) {
  const std::string path = path_ + "/" + name;
  registered_.push_back(std::make_unique<TemporaryPath>(path));
  return path;
}

PrivateFolder::~PrivateFolder() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

bool is_standard_input(const std::string& path) {
  return path == "-" || path == "/dev/stdin";
}

StandardInput::StandardInput() {
  if (::isatty(0))
    throw Error(ErrorKind::Usage,
                "input '-' is standard input, which is a terminal; pipe an image in "
                "(cat a.png | halo run - ...) or redirect one (< a.png)");
  struct stat status {};
  if (::fstat(0, &status) == 0 && S_ISREG(status.st_mode) && status.st_size > 0 &&
      ::lseek(0, 0, SEEK_CUR) == 0) {
    path_ = "/dev/stdin";  // a redirected file: its readers reopen it from the start
    return;
  }
  path_ = folder_.emplace().file("stdin");
  const int out = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0)
    throw Error(ErrorKind::CantCreate,
                path_ + ": cannot spool standard input: " + std::strerror(errno));
  // A spool is held on disk, yet bounded like pixels in memory: an endless pipe is refused
  // instead of filling $TMPDIR.
  const std::size_t limit = resource_limits().max_memory;
  std::size_t copied = 0;
  const CopyFailure failure = copy_fd(0, out, copied, limit);
  const int error = errno;
  const bool closed = ::close(out) == 0;
  if (failure == CopyFailure::too_long)
    throw Error(ErrorKind::BadData,
                "standard input: more than " + std::to_string(limit >> 20) +
                    " MiB, the memory limit (--max-memory); name a file instead of a pipe");
  if (failure == CopyFailure::read)
    throw Error(ErrorKind::Io, std::string("standard input: read failed: ") + std::strerror(error));
  if (failure == CopyFailure::write || !closed)
    throw Error(ErrorKind::Io, path_ + ": cannot spool standard input: " + std::strerror(error));
  if (copied == 0) throw Error(ErrorKind::BadData, "standard input: no data (an empty pipe)");
}

StandardInput::~StandardInput() = default;

std::string StandardInput::named(std::string message) const {
  if (!folder_) return message;
  for (auto at = message.find(path_); at != std::string::npos; at = message.find(path_, at))
    message.replace(at, path_.size(), "standard input");
  return message;
}

std::optional<std::string> standard_output_format(const std::string& output,
                                                  const std::string& format) {
  const std::string wanted = lower(format);
  if (!wanted.empty() && !is_writable_format("." + wanted))
    throw Error(ErrorKind::Usage, "--format " + format + ": not a format halo writes (" +
                                      writable_formats_text() + ")");
  if (output == "-" || output == "/dev/stdout") {
    if (wanted.empty())
      throw Error(ErrorKind::Usage,
                  "-o " + output +
                      " writes standard output, which has no extension to name a format: use "
                      "-o png:- (or exr:-, jpg:-, ...) or --format png");
    return wanted;
  }
  if (output.size() > 2 && output.ends_with(":-")) {
    const std::string named = lower(output.substr(0, output.size() - 2));
    if (!is_writable_format("." + named))
      throw Error(ErrorKind::Usage, "-o " + output + ": '" + named +
                                        "' is not a format halo writes (" +
                                        writable_formats_text() + ")");
    if (!wanted.empty() && wanted != named)
      throw Error(ErrorKind::Usage, "-o " + output + " and --format " + format + " disagree");
    return named;
  }
  if (!wanted.empty() && extension(output) != "." + wanted)
    throw Error(ErrorKind::Usage, "--format " + format + " applies to standard output (-o -); " +
                                      output + " is written in the format its extension names");
  return std::nullopt;
}

StandardOutput::StandardOutput(const std::string& format)
    : path_(folder_.file("stdout." + format)) {}

StandardOutput::~StandardOutput() = default;

void StandardOutput::send() const {
  const int in = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    throw Error(ErrorKind::Io,
                path_ + ": cannot reopen the finished output: " + std::strerror(errno));
  std::size_t copied = 0;
  const CopyFailure failure = copy_fd(in, 1, copied);
  const int error = errno;
  ::close(in);
  if (failure == CopyFailure::read)
    throw Error(ErrorKind::Io, path_ + ": read failed: " + std::strerror(error));
  if (failure == CopyFailure::write)
    throw Error(ErrorKind::Io,
                std::string("standard output: write failed: ") + std::strerror(error));
}

}  // namespace halo
