// The halo binary in a private folder, for end-to-end tests.
#pragma once

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/image.hpp"

namespace halo::test {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

struct Sandbox {
  fs::path dir = fs::temp_directory_path() / ("halo-cli-" + std::to_string(::getpid()));
  Sandbox() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Sandbox() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }

  // Runs `env halo args` with stdout and stderr captured separately.
  Result halo(const std::string& args, const std::string& env = "") const {
    const std::string out = (dir / "stdout.txt").string(), err = (dir / "stderr.txt").string();
    const std::string command = env + " " HALO_BINARY " " + args + " >" + out + " 2>" + err;
    const int status = std::system(command.c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read(out);
    r.err = read(err);
    return r;
  }

  // The command line of `halo args`, to feed another run through a pipe.
  static std::string halo_command(const std::string& args) { return HALO_BINARY " " + args; }

  // The standard output of a shell command.
  static std::string read_command(const std::string& command) {
    std::string out;
    if (std::FILE* pipe = ::popen(command.c_str(), "r")) {
      char buffer[4096];
      for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
        out.append(buffer, n);
      ::pclose(pipe);
    }
    return out;
  }

  static std::string read(const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }
};

struct Measured {
  int code = -1;
  long peak_kib = 0;
  std::string err;
};

// Runs the binary under GNU time (no shell in between), for its own peak RSS in KiB. Not
// this process's fork: Linux carries the forked copy's peak (this test process, which grows as
// its cases run) into the exec'd child's ru_maxrss; time forks from a small process.
inline Measured run_measured(const Sandbox& box, const std::vector<std::string>& args,
                             const std::vector<std::string>& env = {}) {
  const std::string err_path = box / "measured-stderr.txt";
  const std::string peak_path = box / "measured-peak.txt";
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<const char*> argv = {"/usr/bin/time",   "-f",       "%M", "-o",
                                     peak_path.c_str(), HALO_BINARY};
    for (const auto& a : args) argv.push_back(a.c_str());
    argv.push_back(nullptr);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::FILE* err = std::freopen(err_path.c_str(), "w", stderr);
    if (!err || !std::freopen("/dev/null", "w", stdout)) ::_exit(127);
    ::execv("/usr/bin/time", const_cast<char* const*>(argv.data()));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  // The last line: before it time says "Command exited with non-zero status N".
  long peak = 0;
  std::ifstream in(peak_path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) peak = std::atol(line.c_str());
  REQUIRE_MESSAGE(peak > 0, "no peak RSS from /usr/bin/time (Debian's package time)");
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, peak, Sandbox::read(err_path)};
}

// A peak-RSS bound for the binary: AddressSanitizer's shadow memory and allocator cost a
// couple of hundred MiB of their own, so under scripts/sanitize the bounds are loosened.
// GCC says ASan with __SANITIZE_ADDRESS__, clang with __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HALO_TESTS_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define HALO_TESTS_UNDER_ASAN 1
#endif

inline long rss_bound_kib(long kib) {
#if defined(HALO_TESTS_UNDER_ASAN)
  return kib * 4;
#else
  return kib;
#endif
}

inline PixelBuffer photo(int width, int height, int channels, PixelType type = PixelType::u8) {
  PixelBuffer pixels(width, height, channels, type, channels == 4);
  std::mt19937 rng(9);
  for (std::size_t i = 0; i < pixels.sample_count(); ++i) {
    if (type == PixelType::u8) pixels.samples<std::uint8_t>()[i] = std::uint8_t(rng());
    if (type == PixelType::u16) pixels.samples<std::uint16_t>()[i] = std::uint16_t(rng());
    if (type == PixelType::f32) pixels.samples<float>()[i] = float(rng() % 1000) / 250.0f;
  }
  return pixels;
}

inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace halo::test
