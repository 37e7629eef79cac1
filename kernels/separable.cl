// Separable filtering in two passes: rows (horizontal), then columns (vertical), with weights
// computed on the host (gaussian, box, sep, rank-1 conv). Kernel names come from FILTER, so
// gaussian runs gaussian_rows / gaussian_cols. CPU reference: lib/filters/separable.cpp.
//
// rows: a ROWS_W x ROWS_H work-group loads ROWS_STEPS output spans of ROWS_W pixels plus
//   ROWS_HALO spans each side (ROWS_HALO * ROWS_W >= RADIUS_X) into local memory with coalesced
//   reads, then each work-item computes ROWS_STEPS outputs.
// cols: a COLS_W x COLS_H work-group does the same down the columns, COLS_STEPS outputs each.
//   With COLS_DIRECT=1 (radius too large for local memory) it reads taps straight from global.
// Defines: FILTER, RADIUS_X, RADIUS_Y, BORDER, ROWS_W, ROWS_H, ROWS_STEPS, ROWS_HALO, COLS_W,
//   COLS_H, COLS_STEPS, COLS_HALO, COLS_DIRECT.
#include "common.cl"
#pragma OPENCL FP_CONTRACT OFF

#ifndef FILTER
#define FILTER sep
#endif
#ifndef RADIUS_X
#define RADIUS_X 1
#endif
#ifndef RADIUS_Y
#define RADIUS_Y 1
#endif
#ifndef ROWS_W
#define ROWS_W 32
#endif
#ifndef ROWS_H
#define ROWS_H 4
#endif
#ifndef ROWS_STEPS
#define ROWS_STEPS 4
#endif
#ifndef ROWS_HALO
#define ROWS_HALO 1
#endif
#ifndef COLS_W
#define COLS_W 32
#endif
#ifndef COLS_H
#define COLS_H 8
#endif
#ifndef COLS_STEPS
#define COLS_STEPS 4
#endif
#ifndef COLS_HALO
#define COLS_HALO 1
#endif
#ifndef COLS_DIRECT
#define COLS_DIRECT 0
#endif

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define ROWS_SPAN ((ROWS_STEPS + 2 * ROWS_HALO) * ROWS_W)
#define COLS_SPAN ((COLS_STEPS + 2 * COLS_HALO) * COLS_H)

__kernel __attribute__((reqd_work_group_size(ROWS_W, ROWS_H, 1))) void CAT(FILTER, _rows)(
    __global const float* src, __global float* dst, const int width, const int height,
    const int pitch, __constant const float* weights) {
  __local float tile[ROWS_H][ROWS_SPAN];
  const size_t plane = (size_t)get_global_id(2) * pitch * height;
  src += plane;
  dst += plane;
  const int lx = get_local_id(0);
  const int ly = get_local_id(1);
  const int x0 = ((int)get_group_id(0) * ROWS_STEPS - ROWS_HALO) * ROWS_W + lx;
  const int y = (int)get_group_id(1) * ROWS_H + ly;
  // Rows past the image still load (a valid row) so every work-item reaches the barrier.
  __global const float* row = src + (size_t)min(y, height - 1) * pitch;
#pragma unroll
  for (int s = 0; s < ROWS_STEPS + 2 * ROWS_HALO; ++s) {
    const int x = border_index(x0 + s * ROWS_W, width);
    tile[ly][lx + s * ROWS_W] = x < 0 ? 0.0f : row[x];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (y >= height) return;
#pragma unroll
  for (int s = ROWS_HALO; s < ROWS_HALO + ROWS_STEPS; ++s) {
    const int x = x0 + s * ROWS_W;
    if (x >= width) break;
    __local const float* taps = &tile[ly][lx + s * ROWS_W - RADIUS_X];
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j <= 2 * RADIUS_X; ++j) sum = sum + weights[j] * taps[j];
    dst[(size_t)y * pitch + x] = sum;
  }
}

#if !COLS_DIRECT
__kernel __attribute__((reqd_work_group_size(COLS_W, COLS_H, 1))) void CAT(FILTER, _cols)(
    __global const float* src, __global float* dst, const int width, const int height,
    const int pitch, __constant const float* weights, const float offset) {
  // One spare column per row of the tile keeps column reads free of bank conflicts.
  __local float tile[COLS_W][COLS_SPAN + 1];
  const size_t plane = (size_t)get_global_id(2) * pitch * height;
  src += plane;
  dst += plane;
  const int lx = get_local_id(0);
  const int ly = get_local_id(1);
  const int x = (int)get_group_id(0) * COLS_W + lx;
  const int y0 = ((int)get_group_id(1) * COLS_STEPS - COLS_HALO) * COLS_H + ly;
  __global const float* column = src + min(x, width - 1);
#pragma unroll
  for (int s = 0; s < COLS_STEPS + 2 * COLS_HALO; ++s) {
    const int y = border_index(y0 + s * COLS_H, height);
    tile[lx][ly + s * COLS_H] = y < 0 ? 0.0f : column[(size_t)y * pitch];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (x >= width) return;
#pragma unroll
  for (int s = COLS_HALO; s < COLS_HALO + COLS_STEPS; ++s) {
    const int y = y0 + s * COLS_H;
    if (y >= height) break;
    __local const float* taps = &tile[lx][ly + s * COLS_H - RADIUS_Y];
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i <= 2 * RADIUS_Y; ++i) sum = sum + weights[i] * taps[i];
    dst[(size_t)y * pitch + x] = sum + offset;
  }
}
#else
// Radius too large for a local tile: each work-item reads its taps from global memory; adjacent
// work-items read adjacent columns, so every tap is one coalesced row read.
__kernel __attribute__((reqd_work_group_size(COLS_W, COLS_H, 1))) void CAT(FILTER, _cols)(
    __global const float* src, __global float* dst, const int width, const int height,
    const int pitch, __constant const float* weights, const float offset) {
  const size_t plane = (size_t)get_global_id(2) * pitch * height;
  src += plane;
  dst += plane;
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= width || y >= height) return;
  float sum = 0.0f;
  for (int i = 0; i <= 2 * RADIUS_Y; ++i) {
    const int yy = border_index(y + i - RADIUS_Y, height);
    sum = sum + weights[i] * (yy < 0 ? 0.0f : src[(size_t)yy * pitch + x]);
  }
  dst[(size_t)y * pitch + x] = sum + offset;
}
#endif

// Fused: both passes in one kernel, so the image is read once and written once (the two-pass
// path moves twice the bytes). A FUSED_W x FUSED_H output tile plus its halo is loaded into
// local memory; the rows pass runs in place over it (halo rows included), then the columns
// pass writes the tile. Each work-item computes runs of FUSED_RUN outputs from a window held
// in registers, so a tap costs a register read, not a local-memory read.
// Defines (besides the above): FUSED_W, FUSED_H, GROUP_W, GROUP_H, FUSED_RUN; FUSED_W and
// FUSED_H are multiples of FUSED_RUN, and GROUP_W * GROUP_H of FUSED_W / FUSED_RUN.
#ifdef FUSED_W
#define GROUP_SIZE (GROUP_W * GROUP_H)
#define IN_W (FUSED_W + 2 * RADIUS_X)
#define IN_H (FUSED_H + 2 * RADIUS_Y)
// Odd row stride: work-items of a warp walk down different rows without bank conflicts.
#define STRIDE (IN_W | 1)
#define ROW_RUNS (IN_H * (FUSED_W / FUSED_RUN))
#define COL_RUNS (FUSED_W * (FUSED_H / FUSED_RUN))

__kernel __attribute__((reqd_work_group_size(GROUP_W, GROUP_H, 1))) void CAT(FILTER, _fused)(
    __global const float* src, __global float* dst, const int width, const int height,
    const int pitch, __constant const float* row_weights, __constant const float* col_weights,
    const float offset) {
  __local float tile[IN_H * STRIDE];
  const size_t plane = (size_t)get_global_id(2) * pitch * height;
  src += plane;
  dst += plane;
  const int lid = get_local_id(1) * GROUP_W + get_local_id(0);
  const int gx0 = (int)get_group_id(0) * FUSED_W;
  const int gy0 = (int)get_group_id(1) * FUSED_H;

  for (int ly = get_local_id(1); ly < IN_H; ly += GROUP_H) {
    const int y = border_index(gy0 - RADIUS_Y + ly, height);
    __global const float* row = src + (size_t)max(y, 0) * pitch;
    for (int lx = get_local_id(0); lx < IN_W; lx += GROUP_W) {
      const int x = border_index(gx0 - RADIUS_X + lx, width);
      tile[ly * STRIDE + lx] = (x < 0 || y < 0) ? 0.0f : row[x];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  // Rows pass, in place: run k covers row k % IN_H, columns (k / IN_H) * FUSED_RUN onwards.
  // A run only overwrites columns left of every column a later run of its row still reads.
  for (int base = 0; base < ROW_RUNS; base += GROUP_SIZE) {
    const int run = base + lid;
    const int ry = run % IN_H;
    const int rx = (run / IN_H) * FUSED_RUN;
    float acc[FUSED_RUN];
    if (run < ROW_RUNS) {
      float win[FUSED_RUN + 2 * RADIUS_X];
#pragma unroll
      for (int k = 0; k < FUSED_RUN + 2 * RADIUS_X; ++k) win[k] = tile[ry * STRIDE + rx + k];
#pragma unroll
      for (int o = 0; o < FUSED_RUN; ++o) {
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j <= 2 * RADIUS_X; ++j) sum = sum + row_weights[j] * win[o + j];
        acc[o] = sum;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (run < ROW_RUNS) {
#pragma unroll
      for (int o = 0; o < FUSED_RUN; ++o) tile[ry * STRIDE + rx + o] = acc[o];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  // Columns pass: run k covers column k % FUSED_W, rows (k / FUSED_W) * FUSED_RUN onwards;
  // neighbouring work-items write neighbouring pixels.
  for (int run = lid; run < COL_RUNS; run += GROUP_SIZE) {
    const int cx = run % FUSED_W;
    const int cy = (run / FUSED_W) * FUSED_RUN;
    const int x = gx0 + cx;
    if (x >= width) continue;
    float win[FUSED_RUN + 2 * RADIUS_Y];
#pragma unroll
    for (int k = 0; k < FUSED_RUN + 2 * RADIUS_Y; ++k) win[k] = tile[(cy + k) * STRIDE + cx];
#pragma unroll
    for (int o = 0; o < FUSED_RUN; ++o) {
      const int y = gy0 + cy + o;
      float sum = 0.0f;
#pragma unroll
      for (int i = 0; i <= 2 * RADIUS_Y; ++i) sum = sum + col_weights[i] * win[o + i];
      if (y < height) dst[(size_t)y * pitch + x] = sum + offset;
    }
  }
}
#endif
