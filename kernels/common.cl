// Helpers shared by halo's kernels. Border addressing must match halo::border_index in
// lib/filters/filter.cpp exactly. The mode is a kernel argument rather than a define: the
// branch is uniform and only taken outside the image, and one program serves all four modes.
#ifndef HALO_COMMON_CL
#define HALO_COMMON_CL

#include "contract.h"

// Index of the pixel that stands in for coordinate i of a line of n pixels; -1 means "zero".
inline int border_index(int i, const int n, const int border) {
  if (i >= 0 && i < n) return i;
  switch (border) {
    case BORDER_ZERO:
      return -1;
    case BORDER_CLAMP:
      return clamp(i, 0, n - 1);
    case BORDER_REFLECT: {
      // Mirror about the edge pixel without repeating it (dcb|abcd|cba), for any distance.
      if (n == 1) return 0;
      const int period = 2 * n - 2;
      i = abs(i) % period;
      return i < n ? i : period - i;
    }
    default:
      return ((i % n) + n) % n;
  }
}

// Strips. A buffer holds rows [y0, y0 + rows) of an image `height` rows tall (a whole image:
// y0 = 0, rows = height); its channel planes are pitch * rows floats apart. A kernel computes
// the image rows [first, last) and reads rows through strip_row, which applies the border rule
// at the image's edges only. The rows that computed rows need are always in the buffer (the
// host sizes strips by each stage's reach, lib/pipeline/strips.hpp); rows that only padding
// work-items touch are clamped into it, so no read leaves the buffer.
#define STRIP_ARGS const int rows, const int y0, const int height, const int first, const int last

// The start of a kernel with one work-item per pixel of the image rows [first, last), after
// STRIP_FIELDS: x, y, the plane stride and the pixel's offset in a plane; work-items past the
// rows return.
#define PIXEL_PROLOGUE                       \
  const int x = get_global_id(0);            \
  const int y = first + get_global_id(1);    \
  if (x >= width || y >= last) return;       \
  const size_t plane = (size_t)pitch * rows; \
  const size_t at = (size_t)(y - y0) * pitch + x;
// A kernel's StripArgs as the locals width, pitch, rows, y0, height, first and last, which
// PIXEL_PROLOGUE and the helpers (width, pitch and STRIP_ARGS) read.
#define STRIP_FIELDS(s)                                                                  \
  const int width = (s).width, pitch = (s).pitch, rows = (s).rows, y0 = (s).y0,          \
            height = (s).height, first = (s).first, last = (s).last;                     \
  (void)width, (void)pitch, (void)rows, (void)y0, (void)height, (void)first, (void)last
// The same five handed on to a helper that takes STRIP_ARGS.
#define STRIP_VALUES rows, y0, height, first, last

// Buffer row of image row y (any integer), -1 for "zero".
inline int strip_row(const int y, const int y0, const int rows, const int height,
                     const int border) {
  const int i = border_index(y, height, border);
  return i < 0 ? -1 : clamp(i - y0, 0, rows - 1);
}

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

// The CPU forms of the kernels (VEC from the tuning table): VEC-wide float vectors.
#ifndef VEC
#define VEC 16
#endif
#define FLOATV CAT(float, VEC)
#define VLOAD CAT(vload, VEC)
#define VSTORE CAT(vstore, VEC)

#endif
