// Where an image's pixels lie in their frame: the windows files store (OpenEXR's data and
// display windows, TIFF's position), which stages move as they move the pixels.
#pragma once

#include <string>

namespace halo {

// Where the pixels lie: OpenEXR's data window (the pixels stored, at x, y) inside its display
// window (the frame, full_*), as renders with overscan or crops write them; TIFF's position.
// Default: the pixels are the frame, at 0, 0.
struct Placement {
  int x = 0, y = 0;
  int full_x = 0, full_y = 0, full_width = 0, full_height = 0;  // 0 x 0: the pixels themselves

  // Whether it says more than "the pixels at 0, 0 are the frame" for a width x height image.
  bool placed(int width, int height) const {
    return x || y || full_x || full_y || (full_width && full_width != width) ||
           (full_height && full_height != height);
  }
  std::string text(int width, int height) const;  // "pixels at (7, 3) of a 40x20 frame"
};

}  // namespace halo
