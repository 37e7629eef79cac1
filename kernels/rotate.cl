// rotate by any angle (lib/filters/geometry/rotate.cpp, the same arithmetic in the same order: bit
// for bit). One work-item per output sample of rows [first, last), channel get_global_id(2); the
// input holds rows [y0, y0 + rows) of an image `height` tall (RotateArgs, contract.h).
#pragma OPENCL FP_CONTRACT OFF

#include "contract.h"

// Input sample (x, y), or `outside` beyond the image.
inline float at(__global const float* in, const int width, const int pitch, const int y0,
                const int height, const int x, const int y, const float outside) {
  if (x < 0 || y < 0 || x >= width || y >= height) return outside;
  return in[(size_t)(y - y0) * pitch + x];
}

// Catmull-Rom weights (Keys, a = -0.5).
inline float cubic(float t) {
  t = t < 0.0f ? -t : t;
  if (t < 1.0f) return (1.5f * t - 2.5f) * t * t + 1.0f;
  if (t < 2.0f) return ((-0.5f * t + 2.5f) * t - 4.0f) * t + 2.0f;
  return 0.0f;
}

// s + e = a + b exactly (Knuth's TwoSum).
inline void two_sum(const float a, const float b, float* s, float* e) {
  *s = a + b;
  const float bb = *s - a;
  *e = (a - (*s - bb)) + (b - bb);
}

// (c + c_lo) d1 + (s + s_lo) d2 + offset as a whole pixel (*index) and the fraction past it,
// kept as float pairs: lib/filters/geometry/rotate.cpp turned(), the same operations in the same
// order.
inline float turned(const float c, const float c_lo, const float s, const float s_lo,
                    const float d1, const float d2, const float offset, int* index) {
  const float p1 = c * d1, e1 = fma(c, d1, -p1);
  const float p2 = s * d2, e2 = fma(s, d2, -p2);
  float t, e3, u, e4;
  two_sum(p1, p2, &t, &e3);
  two_sum(t, offset, &u, &e4);
  const float lo = ((e1 + e2) + (e3 + e4)) + (c_lo * d1 + s_lo * d2);
  float whole = floor(u), frac = (u - whole) + lo;
  if (frac < 0.0f) {
    frac += 1.0f;
    whole -= 1.0f;
  } else if (frac >= 1.0f) {
    frac -= 1.0f;
    whole += 1.0f;
  }
  *index = (int)whole;
  return frac;
}

// RotateArgs (contract.h): the turn, the taps, what lies outside.
__kernel void rotate_any(__global const float* in, __global float* out, const RotateArgs a) {
  const int width = a.move.in.width, pitch = a.move.in.pitch, rows = a.move.in.rows;
  const int y0 = a.move.in.y0, height = a.move.in.height, taps = a.taps;
  const int x = get_global_id(0);
  const int y = a.move.first + get_global_id(1);
  const int c = get_global_id(2);
  if (x >= a.move.out.width || y >= a.move.last) return;
  __global const float* plane = in + (size_t)c * pitch * rows;
  const float outside = c == a.alpha ? 0.0f : a.background;
  const float dx = ((float)x + 0.5f) - a.out_cx, dy = ((float)y + 0.5f) - a.out_cy;
  int ix, iy;
  const float u = turned(a.cos, a.cos_lo, a.sin, a.sin_lo, dx, dy, a.in_cx - 0.5f, &ix);
  const float w = turned(-a.sin, -a.sin_lo, a.cos, a.cos_lo, dx, dy, a.in_cy - 0.5f, &iy);
  float v;
  if (taps == TAPS_NEAREST) {
    v = at(plane, width, pitch, y0, height, ix + (u >= 0.5f), iy + (w >= 0.5f), outside);
  } else {
    if (taps == TAPS_BILINEAR) {
      const float top = at(plane, width, pitch, y0, height, ix, iy, outside) * (1.0f - u) +
                        at(plane, width, pitch, y0, height, ix + 1, iy, outside) * u;
      const float bottom = at(plane, width, pitch, y0, height, ix, iy + 1, outside) * (1.0f - u) +
                           at(plane, width, pitch, y0, height, ix + 1, iy + 1, outside) * u;
      v = top * (1.0f - w) + bottom * w;
    } else {
      // The weights once a pixel, not once a tap; inside the image, loads without bounds tests.
      float wx[4], wy[4];
      for (int i = 0; i < 4; ++i) {
        wx[i] = cubic(u - (float)(i - 1));
        wy[i] = cubic(w - (float)(i - 1));
      }
      float sum = 0.0f;
      if (ix >= 1 && iy >= 1 && ix + 2 < width && iy + 2 < height) {
        __global const float* p = plane + (size_t)(iy - 1 - y0) * pitch + (ix - 1);
        for (int j = 0; j < 4; ++j) {
          float row = 0.0f;
          for (int i = 0; i < 4; ++i) row += p[(size_t)j * pitch + i] * wx[i];
          sum += row * wy[j];
        }
      } else {
        for (int j = -1; j <= 2; ++j) {
          float row = 0.0f;
          for (int i = -1; i <= 2; ++i)
            row += at(plane, width, pitch, y0, height, ix + i, iy + j, outside) * wx[i + 1];
          sum += row * wy[j + 1];
        }
      }
      v = sum;
    }
  }
  const StripLayout o = a.move.out;
  out[(size_t)c * o.pitch * o.rows + (size_t)(y - o.y0) * o.pitch + x] = v;
}
