// Outputs are written under a temporary name in the target folder and renamed over the target
// only when complete, so a failed or killed run never leaves a half-written file under the
// final name. Special files (character devices, FIFOs, sockets, anything under /dev or /proc,
// such as /dev/stdout) are written in place: renaming over them would replace the device node
// or the symlink with a regular file.
#pragma once

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/temporaries.hpp"

namespace halo {

// "-" and the names of this process's standard output (/dev/stdout, /dev/fd/1,
// /proc/self/fd/1): a report there goes through std::cout, after what the process printed.
bool is_standard_output(const std::string& path);

// True when `target` is written in place rather than through a temporary file.
bool writes_in_place(const std::filesystem::path& target);

// The TAG of this host and PID namespace in temporaries' names (.halo-TAG-PID-RANDOM.EXT): a
// sweep judges by PID only the temporaries of its own TAG.
const std::string& temporary_tag();

class AtomicOutput {
 public:
  // CantCreate error when the folder does not exist or is not writable.
  explicit AtomicOutput(const std::filesystem::path& target);
  ~AtomicOutput();  // removes the temporary file unless committed
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  // dir/.halo-TAG-PID-RANDOM.EXT, created empty and exclusively: the same folder (the rename
  // stays in one file system) and extension (writers choose the format by name) as the target.
  const std::filesystem::path& temp_path() const { return temp_; }
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  bool committed_ = false;
  bool in_place_ = false;
  std::optional<TemporaryPath> registration_;  // removed on a fatal signal
};

// A text file (JSON, CSV reports) written by write(std::ostream&) under a temporary name and
// renamed into place; "-" is standard output. CantCreate or Io errors name the file.
template <typename Write>
void write_atomically(const std::string& path, Write write) {
  if (is_standard_output(path)) {
    write(std::cout);
    if (!std::cout.flush()) throw Error(ErrorKind::Io, "standard output: write failed");
    return;
  }
  AtomicOutput output(path);
  {
    std::ofstream out(output.temp_path());
    if (!out) throw Error(ErrorKind::CantCreate, path + ": cannot create");
    write(out);
    if (!out.flush()) throw Error(ErrorKind::Io, path + ": write failed");
  }
  output.commit();
}

}  // namespace halo
