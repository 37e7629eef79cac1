// What every colour kernel (color_lut.cl, color_program.cl) does with a pixel: one work-item
// per pixel of the image rows [first, last) of the three colour planes, the colour given to
// the transform within `bounds` (contract.h's COLOUR_BOUND), a grey image (colours 1) as
// R = G = B keeping the result's green.
#include "common.cl"

// The pixel's colour as the transform is given it: false when a sample is NaN, which makes the
// pixel NaN (COLOUR_PROLOGUE stores that and returns).
inline bool colour_in(__global const float* in, const size_t plane, const size_t at,
                      const int colours, const float2 bounds, float* v) {
  bool nan = false;
  for (int c = 0; c < 3; ++c) {
    const float x = in[(colours == 1 ? 0 : c) * plane + at];
    nan = nan || isnan(x);
    v[c] = clamp(x, bounds.x, bounds.y);
  }
  return !nan;
}

// A grey image keeps the result's green.
#define STORE(c, value) \
  if (colours == 3 || (c) == 1) out[(colours == 1 ? 0 : (c)) * plane + at] = (value)

#define COLOUR_PROLOGUE                                \
  PIXEL_PROLOGUE                                       \
  float v[3];                                          \
  if (!colour_in(in, plane, at, colours, bounds, v)) { \
    for (int c = 0; c < 3; ++c) STORE(c, (float)NAN);  \
    return;                                            \
  }
