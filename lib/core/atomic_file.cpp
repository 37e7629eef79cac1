// Temporary-file-and-rename output.
#include "core/atomic_file.hpp"

#include <unistd.h>

#include "core/error.hpp"

namespace halo {

namespace fs = std::filesystem;

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
