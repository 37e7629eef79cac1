// Temporary-file-and-rename output.
#include "core/atomic_file.hpp"

#include <unistd.h>

#include "core/error.hpp"

namespace halo {

namespace fs = std::filesystem;

AtomicOutput::AtomicOutput(const fs::path& target) : target_(target) {
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
  if (!committed_) {
    std::error_code ignore;
    fs::remove(temp_, ignore);
  }
}

void AtomicOutput::commit() {
  std::error_code ec;
  fs::rename(temp_, target_, ec);
  if (ec)
    throw Error(ErrorKind::Io, target_.string() + ": cannot rename into place: " + ec.message());
  committed_ = true;
}

}  // namespace halo
