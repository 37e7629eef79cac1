// The body of the image fuzz targets: bytes written to a file and read the way halo run reads
// one (open_reader, at full size or shrunk, then rows in strips), under small resource limits so
// that the header checks must refuse the huge images fuzzed files declare. Pixels or an Error,
// never a crash, a hang or memory past the limits.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/settings.hpp"
#include "io/codec.hpp"

namespace halo::fuzz {

inline void read_as_file(const std::uint8_t* data, std::size_t size) {
  static const bool limited = [] {
    Settings small = settings();
    small.limits = {.max_pixels = 4000000, .max_memory = std::size_t(64) << 20};
    install_settings(small);
    return true;
  }();
  (void)limited;
  // No extension: the format comes from the content alone, as it does for every file halo reads.
  static const std::string path = "/tmp/halo-fuzz-" + std::to_string(::getpid());
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    // A third of the inputs read at 1/2 and a third at 1/3, as a thumbnail reads them: through
    // a decoder's own scaling (JPEG, WebP at 1/2) or averaged blocks (io/box_shrink.hpp).
    const int shrink = size ? 1 + data[size - 1] % 3 : 1;
    auto reader = open_reader(path, shrink);
    const ImageHeader& h = reader->header();
    // Strips of up to 16 MiB, as halo run sizes them from its memory limit: a decoder that
    // costs the same for any number of rows asked for (OpenImageIO's 256-row buffer) is not
    // called once per row of a tall, narrow image.
    const int channels = int(h.channels.size());
    const std::size_t row_bytes = std::size_t(h.width) * channels * sizeof(float);
    const int strip = int(std::clamp<std::size_t>((16u << 20) / row_bytes, 1, h.height));
    std::vector<std::byte> rows(row_bytes * strip);
    for (int y = 0; y < h.height; y += strip)
      reader->read_rows(std::min(strip, h.height - y), 0, channels, PixelType::f32, rows.data());
  } catch (const Error&) {
  }
}

}  // namespace halo::fuzz
