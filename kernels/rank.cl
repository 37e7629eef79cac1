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

// Odd-even transposition sort: SIDE*SIDE rounds of compare-exchanges at fixed positions, so
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
#pragma unroll
  for (int dy = 0; dy < SIDE; ++dy) {
    const int row = strip_row(y + dy - RADIUS, y0, rows, height, border);
#pragma unroll
    for (int dx = 0; dx < SIDE; ++dx) {
      const int col = border_index(x + dx - RADIUS, width, border);
      w[dy * SIDE + dx] = row < 0 || col < 0 ? 0.0f : in[plane + (size_t)row * pitch + col];
    }
  }
#pragma unroll
  for (int round = 0; round < SIDE * SIDE; ++round)
#pragma unroll
    for (int i = round & 1; i + 1 < SIDE * SIDE; i += 2) {
      const float a = w[i], b = w[i + 1];
      const int swap = b < a;
      w[i] = swap ? b : a;
      w[i + 1] = swap ? a : b;
    }
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
