// box:r=R as running sums: each output costs an add and a subtract whatever the radius. Sums
// are kept in double so the sliding window never drifts; each pass rounds to float once, as
// the reference (lib/filters/box.cpp) does.
// box_rows: a BOX_ROWS x 1 group stages BOX_ROWS image rows of BOX_SEG outputs plus the halo
//   in local memory, each work-item slides along one row, and the results leave coalesced.
// box_cols: each work-item slides down one column for BOX_SEG outputs; neighbours read
//   neighbouring columns, so every load is one coalesced row access.
// Defines: RADIUS, BOX_SEG, BOX_ROWS. Rows: STRIP_ARGS in common.cl; both kernels compute the
// image rows [first, last).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#include "common.cl"

#ifndef RADIUS
#define RADIUS 1
#endif
#ifndef BOX_SEG
#define BOX_SEG 64
#endif
#ifndef BOX_ROWS
#define BOX_ROWS 32
#endif

#define TAPS (2 * RADIUS + 1)
// The mean is the sum times 1 / TAPS, a double the host writes exactly (hex) as BOX_INV: a
// multiplication where a correctly rounded double division is a long instruction sequence on
// GPUs. The reference multiplies by the same double.
#ifndef BOX_INV
#define BOX_INV (1.0 / TAPS)
#endif
#define MEAN(sum) ((float)((sum) * BOX_INV))
#define SPAN (BOX_SEG + 2 * RADIUS)
// Odd stride: the work-items of a group read different rows of the tile in different banks.
#define STRIDE (SPAN | 1)

__kernel __attribute__((reqd_work_group_size(1, BOX_ROWS, 1))) void box_rows(
    __global const float* src, __global float* dst, const int width, const int pitch, STRIP_ARGS,
    const int border) {
  __local float tile[BOX_ROWS * STRIDE];
  const size_t plane = (size_t)get_global_id(2) * pitch * rows;
  src += plane;
  dst += plane;
  const int ly = get_local_id(1);
  const int x0 = (int)get_group_id(0) * BOX_SEG;
  const int top = first + (int)get_group_id(1) * BOX_ROWS;
  const bool interior = x0 - RADIUS >= 0 && x0 - RADIUS + SPAN <= width;
  // Row by row, the whole group loads one image row segment: coalesced.
  for (int r = 0; r < BOX_ROWS; ++r) {
    __global const float* row = src + (size_t)(min(top + r, last - 1) - y0) * pitch;
    for (int k = ly; k < SPAN; k += BOX_ROWS) {
      const int x = interior ? x0 - RADIUS + k : border_index(x0 - RADIUS + k, width, border);
      tile[r * STRIDE + k] = x < 0 ? 0.0f : row[x];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  // Slide along row ly; output k replaces tile entry k once entry k is no longer needed.
  __local float* line = tile + ly * STRIDE;
  double sum = 0.0;
  for (int k = 0; k < TAPS; ++k) sum += line[k];
  float previous = MEAN(sum);
  for (int k = 1; k < BOX_SEG; ++k) {
    sum += (double)line[k + 2 * RADIUS] - (double)line[k - 1];
    line[k - 1] = previous;
    previous = MEAN(sum);
  }
  line[BOX_SEG - 1] = previous;
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int r = 0; r < BOX_ROWS; ++r) {
    const int y = top + r;
    if (y >= last) break;
    for (int k = ly; k < BOX_SEG && x0 + k < width; k += BOX_ROWS)
      dst[(size_t)(y - y0) * pitch + x0 + k] = tile[r * STRIDE + k];
  }
}

// One tap of the column at image row y, as double; 0 outside the image with border=zero.
inline double box_tap(__global const float* column, const int y, const int pitch, const int y0,
                      const int rows, const int height, const int border, const bool interior) {
  const int i = interior ? y - y0 : strip_row(y, y0, rows, height, border);
  return i < 0 ? 0.0 : (double)column[(size_t)i * pitch];
}

__kernel void box_cols(__global const float* src, __global float* dst, const int width,
                       const int pitch, STRIP_ARGS, const int border) {
  const size_t plane = (size_t)get_global_id(2) * pitch * rows;
  src += plane;
  dst += plane;
  const int x = get_global_id(0);
  const int ys = first + (int)get_global_id(1) * BOX_SEG;
  if (x >= width || ys >= last) return;
  const int ye = min(ys + BOX_SEG, last);
  const bool interior = ys - RADIUS >= y0 && ye + RADIUS <= y0 + rows;
  __global const float* column = src + x;
  double sum = 0.0;
  for (int k = -RADIUS; k <= RADIUS; ++k)
    sum += box_tap(column, ys + k, pitch, y0, rows, height, border, interior);
  dst[(size_t)(ys - y0) * pitch + x] = MEAN(sum);
  if (interior && ye - ys == BOX_SEG) {
    // A whole segment inside the strip: a fixed trip count the compiler can unroll, so the
    // loads of later rows are issued before the sum needs them (the walk is latency-bound).
    __global const float* ahead = column + (size_t)(ys + RADIUS - y0) * pitch;
    __global const float* behind = column + (size_t)(ys - RADIUS - 1 - y0) * pitch;
    __global float* out = dst + (size_t)(ys - y0) * pitch + x;
#pragma unroll 8
    for (int k = 1; k < BOX_SEG; ++k) {
      sum += (double)ahead[(size_t)k * pitch] - (double)behind[(size_t)k * pitch];
      out[(size_t)k * pitch] = MEAN(sum);
    }
    return;
  }
  for (int y = ys + 1; y < ye; ++y) {
    sum += box_tap(column, y + RADIUS, pitch, y0, rows, height, border, interior) -
           box_tap(column, y - RADIUS - 1, pitch, y0, rows, height, border, interior);
    dst[(size_t)(y - y0) * pitch + x] = MEAN(sum);
  }
}
