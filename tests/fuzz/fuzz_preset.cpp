// Fuzzes preset files: any bytes in a .halo file must load as lines of specs that become
// stages, or give an Error naming the file and line.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "filters/registry.hpp"
#include "spec/preset.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/halo-fuzz-" + std::to_string(::getpid()) + ".halo";
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    for (const auto& line : halo::load_preset(path).lines) (void)halo::make_stage(line.spec);
  } catch (const halo::Error&) {
  }
  return 0;
}
