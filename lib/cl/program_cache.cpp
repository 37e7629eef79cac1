// Program builds: memory, then disk, then the compiler. Disk entries are device binaries named
// by a hash of everything that affects them, written atomically so concurrent runs never see
// half a file.
#include "cl/program_cache.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "cl/cl_error.hpp"
#include "core/atomic_file.hpp"
#include "core/paths.hpp"
#include "core/settings.hpp"
#include "core/text.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

// OpenCL lets sqrt and division be off by a few ulp unless the program asks for correct
// rounding; NVIDIA's driver takes that freedom (Sobel's magnitude differed from std::sqrt in
// the last bit on an H100), so ask for it wherever the device offers it.
std::string base_options(const cl::Device& device) {
  std::string options = "-cl-std=CL1.2";
  cl_device_fp_config fp = 0;
  if (device.getInfo(CL_DEVICE_SINGLE_FP_CONFIG, &fp) == CL_SUCCESS &&
      (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT))
    options += " -cl-fp32-correctly-rounded-divide-sqrt";
  // PoCL's compiler prints "N warnings generated." to the terminal itself: on CPUs without
  // AVX-512 every float16 (VEC=16, still the fastest there) that crosses a function is an ABI
  // note. Its build log keeps nothing else worth a line.
  cl_device_type type = 0;
  if (device.getInfo(CL_DEVICE_TYPE, &type) == CL_SUCCESS && (type & CL_DEVICE_TYPE_CPU))
    options += " -w";
  return options;
}

std::string build_options(std::string options, const Defines& defines) {
  for (const auto& [name, value] : defines) options += " -D " + name + "=" + value;
  return options;
}

// The cache is best effort: a file that cannot be written is simply compiled again next time.
// An entry that is not a regular file (a FIFO or device planted in the cache) is passed over
// as records are, never written in place: opening a FIFO to write waits for a reader forever.
void write_atomically(const fs::path& path, const std::string& bytes) {
  if (writes_in_place(path)) {
    spdlog::debug("kernel cache: not stored: {} is not a regular file", path.string());
    return;
  }
  try {
    AtomicOutput output(path);
    {
      std::ofstream out(output.temp_path(), std::ios::binary);
      out.write(bytes.data(), std::streamsize(bytes.size()));
      if (!out.flush()) return;
    }
    output.commit();
  } catch (const Error& e) {
    spdlog::debug("kernel cache: not stored: {}", e.what());
  }
}

// A program's binary or key as a side file (core/paths.hpp): a FIFO or folder planted in the
// cache is passed over, not waited on; programs are a few MB at most.
std::optional<std::string> read_file(const fs::path& path) {
  return read_cached_file(path.string(), std::size_t(256) << 20, "kernel cache entry",
                          spdlog::level::debug);
}

}  // namespace

std::optional<fs::path> default_cache_dir() {
  return settings().cache_dir;
}

ProgramCache::ProgramCache(cl::Context context, cl::Device device, std::string identity,
                           std::optional<fs::path> dir)
    : context_(std::move(context)),
      device_(std::move(device)),
      identity_(std::move(identity)),
      base_options_(base_options(device_)),
      dir_(std::move(dir)) {}

cl::Program ProgramCache::get(const std::string& file, const Defines& defines,
                              const std::string& generated) {
  const std::string options = build_options(base_options_, defines);
  const std::string request = file + "\n" + options + "\n" + generated;
  std::lock_guard lock(mutex_);
  if (const auto it = memory_.find(request); it != memory_.end()) return it->second;
  const std::string source = kernel_source(file, generated);
  const std::string key_text = identity_ + "\n" + options + "\n" + source;
  // A collision is harmless: the key text is stored next to the binary and compared on load.
  const std::string key = fnv1a_hex(key_text);

  const std::string label = file + " [" + options + "]";
  if (dir_) {
    const auto loading = std::chrono::steady_clock::now();
    if (auto program = load(*dir_ / (key + ".bin"), options)) {
      const auto stored_key = read_file(*dir_ / (key + ".key"));
      if (stored_key && *stored_key == key_text) {
        spdlog::debug("kernel cache: loaded {} from {}", label, dir_->string());
        ++loaded_;
        load_seconds_ +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - loading).count();
        return memory_[request] = *program;
      }
    }
  }

  const auto start = std::chrono::steady_clock::now();
  cl_int status = CL_SUCCESS;
  cl::Program program(context_, source, false, &status);
  check(status, "clCreateProgramWithSource", file);
  status = program.build(std::vector<cl::Device>{device_}, options.c_str());
  if (status != CL_SUCCESS) {
    std::string log;
    program.getBuildInfo(device_, CL_PROGRAM_BUILD_LOG, &log);
    throw BuildError(status, label, log);
  }
  ++compiled_;
  // Compiler warnings are for halo's developers, not its users: shown under -vv only.
  if (std::string log; program.getBuildInfo(device_, CL_PROGRAM_BUILD_LOG, &log) == CL_SUCCESS &&
                       log.find_first_not_of(" \t\r\n") != std::string::npos)
    spdlog::debug("kernel cache: build log of {}:\n{}", label, log);
  spdlog::debug(
      "kernel cache: compiled {} in {:.0f} ms", label,
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  if (dir_) {
    store(program, *dir_ / (key + ".bin"));
    write_atomically(*dir_ / (key + ".key"), key_text);
  }
  return memory_[request] = program;
}

std::optional<cl::Program> ProgramCache::load(const fs::path& path, const std::string& options) {
  const auto bytes = read_file(path);
  if (!bytes || bytes->empty()) return std::nullopt;
  cl::Program::Binaries binaries{std::vector<unsigned char>(bytes->begin(), bytes->end())};
  cl_int status = CL_SUCCESS;
  std::vector<cl_int> binary_status;
  cl::Program program(context_, std::vector<cl::Device>{device_}, binaries, &binary_status,
                      &status);
  if (status != CL_SUCCESS ||
      program.build(std::vector<cl::Device>{device_}, options.c_str()) != CL_SUCCESS) {
    // A stale or foreign binary is not an error: recompile and overwrite it.
    spdlog::debug("kernel cache: ignoring unusable {}", path.string());
    return std::nullopt;
  }
  return program;
}

void ProgramCache::store(const cl::Program& program, const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    spdlog::debug("kernel cache: cannot create {}: {}", path.parent_path().string(), ec.message());
    return;
  }
  cl::Program::Binaries binaries;
  if (program.getInfo(CL_PROGRAM_BINARIES, &binaries) != CL_SUCCESS || binaries.empty() ||
      binaries.front().empty())
    return;
  write_atomically(path, std::string(binaries.front().begin(), binaries.front().end()));
}

}  // namespace halo
