// The tiles OIDN's network runs in: boxes of pixels, aligned to its pooling, each read with
// the network's receptive field around it, so that tiles (and strips) give the whole image's
// result.
#pragma once

#include <vector>

#include "core/image.hpp"

namespace halo {

struct Box {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  int width() const { return x1 - x0; }
  int height() const { return y1 - y0; }
};

// v rounded up, and down (negative values too), to a multiple of `to`.
int round_up(int v, int to);
int round_down(int v, int to);

// Cores that cover the rows `out` of a `width` wide image, each with `margin` pixels around
// it at most `max_pixels` in all: the whole rows when they fit, else bands of full rows, else
// squares; no side longer than `side` when that is given.
std::vector<Box> tile_cores(Span out, int width, int height, int margin, double max_pixels,
                            int side);

}  // namespace halo
