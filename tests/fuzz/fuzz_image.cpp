// Fuzzes halo's own decoders (PFM, PNG through libpng, JPEG through libjpeg-turbo) and the
// header checks of the resource policy: any bytes, read as a file the way halo run reads one,
// must end in pixels or an Error, never a crash, a hang or memory past the limits.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "io/codec.hpp"

using namespace halo;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // OpenEXR and TIFF content goes to the OpenImageIO module, which this build does not have.
  if (size >= 4 && ((data[0] == 0x76 && data[1] == 0x2f) || (data[0] == 'I' && data[1] == 'I') ||
                    (data[0] == 'M' && data[1] == 'M')))
    return 0;
  // Small limits: the fuzzer's files declare huge images; the checks must refuse them early.
  set_resource_limits({.max_pixels = 4000000, .max_memory = std::size_t(64) << 20});
  static const std::string path = "/tmp/halo-fuzz-" + std::to_string(::getpid()) + ".pfm";
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    auto reader = open_reader(path);
    const ImageHeader& h = reader->header();
    const int channels = int(h.channels.size());
    std::vector<std::byte> rows(std::size_t(h.width) * channels * sizeof(float) * 16);
    for (int y = 0; y < h.height; y += 16)
      reader->read_rows(std::min(16, h.height - y), 0, channels, PixelType::f32, rows.data());
  } catch (const Error&) {
  }
  return 0;
}
