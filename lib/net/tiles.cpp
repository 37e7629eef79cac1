// Tiles of the network (net/tiles.hpp).
#include "net/tiles.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "net/denoise_net.hpp"

namespace halo {

int round_up(int v, int to) {
  return ceil_div(v, to) * to;
}

int round_down(int v, int to) {
  return v >= 0 ? v / to * to : -round_up(-v, to);
}

std::vector<Box> tile_cores(Span out, int width, int height, int margin, double max_pixels,
                            int side) {
  const auto fits = [&](int w, int h) {
    return double(std::min(width, w + 2 * margin)) * std::min(height, h + 2 * margin) <= max_pixels;
  };
  int cw = side ? std::min(side, width) : width,
      ch = side ? std::min(side, out.count()) : out.count();
  if (!fits(cw, ch)) {
    ch = int(max_pixels / width) - 2 * margin;
    if (ch < 64) {
      const int side = int(std::sqrt(max_pixels)) - 2 * margin;
      if (side < DenoiseNet::kAlignment)
        throw Error(ErrorKind::BadData,
                    fmt::format("denoise: not even a 16x16 tile fits the memory for the "
                                "network ({:.0f} pixels of activations; --max-memory)",
                                max_pixels));
      cw = ch = side / DenoiseNet::kAlignment * DenoiseNet::kAlignment;
    }
  }
  const int nx = ceil_div(width, cw), ny = ceil_div(out.count(), ch);
  cw = ceil_div(width, nx), ch = ceil_div(out.count(), ny);
  std::vector<Box> cores;
  for (int y = out.first; y < out.last; y += ch)
    for (int x = 0; x < width; x += cw)
      cores.push_back({x, y, std::min(width, x + cw), std::min(out.last, y + ch)});
  return cores;
}

}  // namespace halo
