// Fuzzes the filter spec parser and every filter's parameter checks: any text given to -f
// must become a stage or an Error(Usage), never a crash or an absurd allocation.
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "filters/registry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto stage = halo::make_stage(text);
    (void)stage->reach();
  } catch (const halo::Error&) {
  }
  return 0;
}
