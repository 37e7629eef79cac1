// Outputs are written under a temporary name in the target folder and renamed over the target
// only when complete, so a failed or killed run never leaves a half-written file under the
// final name. The temporary is created exclusively and kept open: writers open it again through
// /proc/self/fd/N, the file halo created whatever happens to its name in a folder others can
// write (a name swapped for a link between creation and writing redirected the output into
// another user's file). A link at the target's name is replaced, never followed. Special files
// (character devices, FIFOs, sockets, anything under /dev or /proc, such as /dev/stdout) are
// written in place: renaming over them would replace the device node with a regular file.
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

// How commit() treats an existing file at the target's name.
enum class Replace { existing, never };

class AtomicOutput {
 public:
  // CantCreate error when the folder does not exist or is not writable. Replace::never
  // (--no-clobber): commit() fails with CantCreate when the target exists by then, so that of
  // several runs writing one absent output exactly one wins.
  explicit AtomicOutput(const std::filesystem::path& target, Replace replace = Replace::existing);
  ~AtomicOutput();  // removes the temporary file unless committed
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  // The path writers open: /proc/self/fd/N of the temporary halo created (dir/.halo-TAG-PID-
  // RANDOM.EXT, exclusively, in the target's folder so the rename stays in one file system),
  // or its name where /proc is not mounted. Writers choose the format by the target's name.
  const std::filesystem::path& temp_path() const { return write_path_; }
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;        // the temporary's name in the folder
  std::filesystem::path write_path_;  // what writers open
  int fd_ = -1;                       // the temporary, open since its creation
  Replace replace_ = Replace::existing;
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
