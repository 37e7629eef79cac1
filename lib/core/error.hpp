// Errors that reach the user: a kind that fixes the process exit code, and a one-line message.
#pragma once

#include <stdexcept>
#include <string>

namespace halo {

// Exit codes follow sysexits.h where one fits, so batch scripts and CI can tell failures apart.
// They are part of the interface: README.md and `halo --help` list them and tests pin them.
enum class ErrorKind {
  Mismatch = 1,       // --verify or compare found a difference above the tolerance
  BatchFailed = 2,    // some files of a batch failed
  NotComparable = 3,  // images differ in size or channels
  Usage = 64,         // bad command line, spec or preset
  BadData = 65,       // input file is corrupt, truncated or unsupported
  NoInput = 66,       // input file missing or unreadable
  Internal = 70,      // a bug in halo
  NoDevice = 69,      // no usable OpenCL device, or an OpenCL call failed
  CantCreate = 73,    // output cannot be created
  Io = 74,            // read or write failed midway
  Interrupted = 130,  // a batch stopped by SIGINT/SIGTERM (128 + SIGINT, as shells report it)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }
  int exit_code() const { return static_cast<int>(kind_); }

 private:
  ErrorKind kind_;
};

// An output that came to exist while halo made it, so a publish that never replaces
// (--no-clobber, --skip-existing) left it alone: another run wrote it first.
class OutputExists : public Error {
 public:
  explicit OutputExists(const std::string& path)
      : Error(ErrorKind::CantCreate, path + ": exists; not overwritten") {}
};

}  // namespace halo
