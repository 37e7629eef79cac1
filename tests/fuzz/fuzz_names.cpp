// Fuzzes what batches parse from the command line: output templates (expanded for a sample
// input), --frames ranges, --shard and FILE[channels] references. The input is split at the
// first three NUL bytes into those four texts.
#include <cstdint>
#include <string>
#include <vector>

#include "batch/inputs.hpp"
#include "batch/output_template.hpp"
#include "core/error.hpp"
#include "io/image_io.hpp"

using namespace halo;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> parts(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0 && parts.size() < 4)
      parts.emplace_back();
    else
      parts.back() += char(data[i]);
  }
  parts.resize(4);
  try {
    const OutputTemplate out(parts[0]);
    (void)out.expand({"renders/a/shot.0042.exr", "", "renders", "0042"});
  } catch (const Error&) {
  }
  try {
    const auto frames = parse_frames(parts[1]);
    (void)frames.size();
  } catch (const Error&) {
  }
  try {
    (void)parse_shard(parts[2]);
  } catch (const Error&) {
  }
  try {
    (void)parse_input_ref(parts[3]);
  } catch (const Error&) {
  }
  return 0;
}
