// Rank filters (lib/filters/rank.cpp): the median of a square window, and its morphology pair
// dilate / erode (the window's maximum / minimum) as a rows pass then a columns pass. No
// arithmetic: the device's result equals the reference's bit for bit, because both gather the
// window in the same order and sort it with the same insertion sort (so even NaN lands alike).
// One work-item per sample of the image rows [first, last) and colour plane.
#pragma OPENCL FP_CONTRACT OFF

#include "common.cl"

// RADIUS (the median's window lives in registers) and DILATE (1: maximum, 0: minimum) are
// defines: one program per radius, one per extreme.
#ifndef RADIUS
#define RADIUS 1
#endif
#ifndef DILATE
#define DILATE 1
#endif
#define SIDE (2 * RADIUS + 1)

// w[i] <= w[j] afterwards; swapped only when w[j] < w[i], so NaN never moves.
#define COMPARE_EXCHANGE(w, i, j)             \
  {                                           \
    const float a_ = w[i], b_ = w[j];         \
    const int swap_ = b_ < a_;                \
    w[i] = swap_ ? b_ : a_;                   \
    w[j] = swap_ ? a_ : b_;                   \
  }

// 3x3: a median network (below); larger: odd-even transposition sort: SIDE*SIDE rounds of compare-exchanges at fixed positions, so
// the compiler keeps the window in registers (an insertion sort's moving index spilled it to
// memory: 5x5 was 26x OpenCV's time). A compare-exchange swaps only when b < a: NaN never
// moves, the same as the reference's.
__kernel void median(__global const float* in, __global float* out, const int width,
                     const int pitch, STRIP_ARGS, const int border) {
  const int x = get_global_id(0);
  const int y = first + get_global_id(1);
  if (x >= width || y >= last) return;
  const size_t plane = (size_t)pitch * rows * get_global_id(2);
  float w[SIDE * SIDE];
  // Inside the image (all but a thin frame) the window needs no border rule: plain loads, which
  // a CPU device vectorises across work-items (the border lookups kept PoCL scalar).
  const bool inside = x >= RADIUS && x + RADIUS < width && y >= RADIUS && y + RADIUS < height;
  if (inside) {
    __global const float* p = in + plane + (size_t)(y - RADIUS - y0) * pitch + (x - RADIUS);
#pragma unroll
    for (int dy = 0; dy < SIDE; ++dy)
#pragma unroll
      for (int dx = 0; dx < SIDE; ++dx) w[dy * SIDE + dx] = p[(size_t)dy * pitch + dx];
  } else {
#pragma unroll
    for (int dy = 0; dy < SIDE; ++dy) {
      const int row = strip_row(y + dy - RADIUS, y0, rows, height, border);
#pragma unroll
      for (int dx = 0; dx < SIDE; ++dx) {
        const int col = border_index(x + dx - RADIUS, width, border);
        w[dy * SIDE + dx] = row < 0 || col < 0 ? 0.0f : in[plane + (size_t)row * pitch + col];
      }
    }
  }
#if RADIUS == 1
  // 3x3: the 19 compare-exchanges that leave the median in the middle (Paeth's network, as
  // in N. Devillard's "Fast median search", 1998), checked on every 0/1 input by the tests.
  const int net[19][2] = {{1, 2}, {4, 5}, {7, 8}, {0, 1}, {3, 4}, {6, 7}, {1, 2},
                          {4, 5}, {7, 8}, {0, 3}, {5, 8}, {4, 7}, {3, 6}, {1, 4},
                          {2, 5}, {4, 7}, {4, 2}, {6, 4}, {4, 2}};
#pragma unroll
  for (int k = 0; k < 19; ++k) COMPARE_EXCHANGE(w, net[k][0], net[k][1]);
#else
#pragma unroll
  for (int round = 0; round < SIDE * SIDE; ++round)
#pragma unroll
    for (int i = round & 1; i + 1 < SIDE * SIDE; i += 2) COMPARE_EXCHANGE(w, i, i + 1);
#endif
  out[plane + (size_t)(y - y0) * pitch + x] = w[SIDE * SIDE / 2];
}

// The extreme so far and a new sample: a NaN is passed over unless all are NaN; between equal
// values (-0 and +0) the first stays. Spelled out, not fmax, so the reference matches exactly.
#define PICK(a, b) (isnan(a) || (DILATE ? (b) > (a) : (b) < (a)) ? (b) : (a))

// Rows pass: each sample of the rows [first, last) becomes its row window's extreme.
__kernel void rank_rows(__global const float* in, __global float* out, const int width,
                        const int pitch, STRIP_ARGS, const int radius, const int border) {
  const int x = get_global_id(0);
  const int y = first + get_global_id(1);
  if (x >= width || y >= last) return;
  const size_t base = (size_t)pitch * rows * get_global_id(2) + (size_t)(y - y0) * pitch;
  float v = NAN;
  for (int dx = -radius; dx <= radius; ++dx) {
    const int col = border_index(x + dx, width, border);
    v = PICK(v, col < 0 ? 0.0f : in[base + col]);
  }
  out[base + x] = v;
}

// Columns pass over the rows pass's result.
__kernel void rank_cols(__global const float* in, __global float* out, const int width,
                        const int pitch, STRIP_ARGS, const int radius, const int border) {
  const int x = get_global_id(0);
  const int y = first + get_global_id(1);
  if (x >= width || y >= last) return;
  const size_t plane = (size_t)pitch * rows * get_global_id(2);
  float v = NAN;
  for (int dy = -radius; dy <= radius; ++dy) {
    const int row = strip_row(y + dy, y0, rows, height, border);
    v = PICK(v, row < 0 ? 0.0f : in[plane + (size_t)row * pitch + x]);
  }
  out[plane + (size_t)(y - y0) * pitch + x] = v;
}
