// Program builds keyed by (source, defines, device, driver): in memory for the process and as
// binaries on disk, so the second run of a command does not recompile.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cl/cl.hpp"

namespace halo {

// Compile-time constants handed to kernels as -D NAME=VALUE, in a stable order.
using Defines = std::vector<std::pair<std::string, std::string>>;

// HALO_CACHE_DIR, else $XDG_CACHE_HOME/halo, else ~/.cache/halo; nullopt when HALO_NO_CACHE is
// set (to anything but 0) or no home is known.
std::optional<std::filesystem::path> default_cache_dir();

// Shared by the queues of one context (a batch's device slots); get() is thread-safe.
class ProgramCache {
 public:
  // identity: the device and driver part of the key.
  ProgramCache(cl::Context context, cl::Device device, std::string identity,
               std::optional<std::filesystem::path> dir);

  // generated: code a library made at run time (OpenColorIO's shader, translated), put where
  // the file has the line `/* generated code */`; part of the key like the file's own text.
  cl::Program get(const std::string& file, const Defines& defines,
                  const std::string& generated = "");

  // How each program of this process was obtained, for --verbose and the cache tests.
  int compiled() const { return compiled_; }
  int loaded_from_disk() const { return loaded_; }
  // Seconds spent loading programs from disk (part of what starting the device costs a run).
  double load_seconds() const { return load_seconds_; }

 private:
  std::optional<cl::Program> load(const std::filesystem::path& path, const std::string& options);
  void store(const cl::Program& program, const std::filesystem::path& path);

  cl::Context context_;
  cl::Device device_;
  std::string identity_;
  std::string base_options_;  // -cl-std and the rounding every program is built with
  std::optional<std::filesystem::path> dir_;
  // Programs built or loaded by this process, by file and options: every strip asks for its
  // kernels again, and expanding and hashing the whole source (the disk cache's key) each time
  // cost the Altai JPEG's gaussian 20 ms of its 0.17 s on the device thread (PoCL).
  std::map<std::string, cl::Program> memory_;
  std::mutex mutex_;  // one build at a time; the others wait for it and then find it in memory_
  int compiled_ = 0;
  int loaded_ = 0;
  double load_seconds_ = 0;
};

// The source of kernels/FILE with its `#include "x.cl"` lines expanded from the embedded set,
// and `generated` in place of its line `/* generated code */` (Internal error when it has none).
std::string kernel_source(const std::string& file, const std::string& generated = "");

}  // namespace halo
