// Images through standard input and output, so that halo sits in shell pipelines:
//   cat a.jpg | halo run - -f sharpen -o png:- | ...
// halo's readers open their file more than once (the content is recognised first) and the
// OpenEXR and TIFF writers seek back to fill in offset tables, so a pipe goes through a
// private temporary folder ($TMPDIR, else /tmp) that is removed when the run ends. The output
// reaches standard output only once it is complete: a failed run writes nothing there, as a
// failed run leaves no file behind.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/temporaries.hpp"

namespace halo {

// $TMPDIR/halo-PID-XXXXXX, readable by this user only, removed with everything in it, also
// on a fatal signal (core/temporaries.hpp).
class PrivateFolder {
 public:
  PrivateFolder();  // CantCreate error when it cannot be made
  ~PrivateFolder();
  PrivateFolder(const PrivateFolder&) = delete;
  PrivateFolder& operator=(const PrivateFolder&) = delete;
  const std::string& path() const { return path_; }
  // The path of a file `name` in the folder, registered for removal on a fatal signal.
  std::string file(const std::string& name);

 private:
  std::string path_;
  std::vector<std::unique_ptr<TemporaryPath>> registered_;
};

// Standard input as a file. A redirected regular file (`< a.png`) is read in place as
// /dev/stdin; a pipe is copied to a temporary file first. Usage error when standard input is a
// terminal, BadData when it is empty or longer than --max-memory, Io when reading or spooling
// fails.
class StandardInput {
 public:
  StandardInput();
  ~StandardInput();
  StandardInput(const StandardInput&) = delete;
  StandardInput& operator=(const StandardInput&) = delete;
  const std::string& path() const { return path_; }
  // `message` with the spooled file's name replaced by "standard input".
  std::string named(std::string message) const;

 private:
  std::optional<PrivateFolder> folder_;  // none when read in place
  std::string path_;
};

// True for the names that mean standard input: "-" and "/dev/stdin".
bool is_standard_input(const std::string& path);

// The format an output on standard output is written in: "png" for `-o png:-`, or --format's
// for `-o -`; nullopt when the output is a file. Usage error for `-o -` without a format, for
// a format halo cannot name, or for --format with a file output whose extension disagrees.
std::optional<std::string> standard_output_format(const std::string& output,
                                                  const std::string& format);

// An image bound for standard output: written to path() (a temporary file whose extension
// names the format), then copied out by send().
class StandardOutput {
 public:
  explicit StandardOutput(const std::string& format);
  ~StandardOutput();
  StandardOutput(const StandardOutput&) = delete;
  StandardOutput& operator=(const StandardOutput&) = delete;
  const std::string& path() const { return path_; }
  // Copies the finished file to standard output. Io error when the reader went away (EPIPE)
  // or the write fails.
  void send() const;

 private:
  PrivateFolder folder_;
  std::string path_;
};

}  // namespace halo
