// A folder of the io tests' own, removed with everything in it when the test ends.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace halo::test {

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("halo-io-" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}  // namespace halo::test
