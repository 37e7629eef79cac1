// Separable filtering in two passes: rows (horizontal), then columns (vertical), with weights
// computed on the host (gaussian, box, sep, rank-1 conv). Kernel names come from FILTER, so
// gaussian runs gaussian_rows / gaussian_cols. CPU reference: lib/filters/convolve/separable.cpp.
//
// rows: a ROWS_W x ROWS_H work-group loads ROWS_STEPS output spans of ROWS_W pixels plus
//   ROWS_HALO spans each side (ROWS_HALO * ROWS_W >= RADIUS_X) into local memory with coalesced
//   reads, then each work-item computes ROWS_STEPS outputs.
// cols: a COLS_W x COLS_H work-group does the same down the columns, COLS_STEPS outputs each.
//   With COLS_DIRECT=1 (radius too large for local memory) it reads taps straight from global.
// ROWS_SLIDING / COLS_SLIDING=1: a work-item's outputs are neighbours instead of a group's width
//   apart, so the taps they share are read from local memory once (a sliding window in
//   registers): about (2R + STEPS) / STEPS reads per output instead of 2R + 1.
// Defines: SEP_FORM (which kernels the program holds, contract.h), FILTER, RADIUS_X, RADIUS_Y,
//   ROWS_W, ROWS_H, ROWS_STEPS, ROWS_HALO, ROWS_SLIDING, COLS_W, COLS_H, COLS_STEPS, COLS_HALO,
//   COLS_DIRECT, COLS_SLIDING. Rows: STRIP_ARGS in common.cl; every kernel computes the image rows
//   [first, last), the launch's rows counted from `first`.
#include "common.cl"

// One form's kernels a program: a runtime that hands out a program's binary (for halo's disk
// cache) builds every kernel in it first, and PoCL took 0.45 s a program for the forms unused.
#ifndef SEP_FORM
#define SEP_FORM SEP_FORM_PASSES
#endif
// Every tap is fma(w, v, sum) in tap order, as the reference computes it: exact agreement
// without giving up fused multiply-adds.
#pragma OPENCL FP_CONTRACT OFF

// ROW_WEIGHTS / COL_WEIGHTS (float literals, comma-separated): the weights compiled in, so
// each tap's weight can be an immediate operand instead of a load from constant memory.
#ifdef ROW_WEIGHTS
__constant float kRowWeights[] = {ROW_WEIGHTS};
#define ROW_W(arg) kRowWeights
#else
#define ROW_W(arg) arg
#endif
#ifdef COL_WEIGHTS
__constant float kColWeights[] = {COL_WEIGHTS};
#define COL_W(arg) kColWeights
#else
#define COL_W(arg) arg
#endif

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
#ifndef ROWS_SLIDING
#define ROWS_SLIDING 0
#endif
#ifndef COLS_SLIDING
#define COLS_SLIDING 0
#endif

// The sliding window of ROWS_SLIDING / COLS_SLIDING: `steps` neighbouring outputs from the 2 *
// radius + steps taps starting at `window`, each read once from local memory and added to every
// output it feeds (tap j = t - s of output s, so each output's taps still come in order).
// steps and radius are compile-time constants at both calls, so the loops unroll (compiled
// only where a pass slides: elsewhere the unused function's loops warn that they cannot).
#if (SEP_FORM == SEP_FORM_PASSES && (ROWS_SLIDING || COLS_SLIDING)) || SEP_FORM == SEP_FORM_FUSED
static inline void slide(__local const float* window, __constant const float* weights,
                         const int steps, const int radius, float* acc) {
#pragma unroll
  for (int s = 0; s < steps; ++s) acc[s] = 0.0f;
#pragma unroll
  for (int t = 0; t < 2 * radius + steps; ++t) {
    const float v = window[t];
#pragma unroll
    for (int s = 0; s < steps; ++s)
      if (t - s >= 0 && t - s <= 2 * radius) acc[s] = fma(weights[t - s], v, acc[s]);
  }
}
#endif

#if SEP_FORM == SEP_FORM_PASSES
#define ROWS_SPAN ((ROWS_STEPS + 2 * ROWS_HALO) * ROWS_W)
#define COLS_SPAN ((COLS_STEPS + 2 * COLS_HALO) * COLS_H)

__kernel __attribute__((reqd_work_group_size(ROWS_W, ROWS_H, 1))) void CAT(FILTER, _rows)(
    __global const float* src, __global float* dst, const StripArgs strip,
    const int border, __constant const float* weights) {
  STRIP_FIELDS(strip);
  __local float tile[ROWS_H][ROWS_SPAN];
  const size_t plane = (size_t)get_global_id(2) * pitch * rows;
  src += plane;
  dst += plane;
  const int lx = get_local_id(0);
  const int ly = get_local_id(1);
  const int x0 = ((int)get_group_id(0) * ROWS_STEPS - ROWS_HALO) * ROWS_W + lx;
  const int y = first + (int)get_group_id(1) * ROWS_H + ly;
  // Rows past `last` still load (a valid row) so every work-item reaches the barrier.
  __global const float* row = src + (size_t)(min(y, last - 1) - y0) * pitch;
  // Most work-groups lie wholly inside the image: they load without border arithmetic.
  const int left = ((int)get_group_id(0) * ROWS_STEPS - ROWS_HALO) * ROWS_W;
  if (left >= 0 && left + ROWS_SPAN <= width) {
#pragma unroll
    for (int s = 0; s < ROWS_STEPS + 2 * ROWS_HALO; ++s)
      tile[ly][lx + s * ROWS_W] = row[x0 + s * ROWS_W];
  } else {
#pragma unroll
    for (int s = 0; s < ROWS_STEPS + 2 * ROWS_HALO; ++s) {
      const int x = border_index(x0 + s * ROWS_W, width, border);
      tile[ly][lx + s * ROWS_W] = x < 0 ? 0.0f : row[x];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (y >= last) return;
#if ROWS_SLIDING
  // ROWS_STEPS neighbouring outputs per work-item (see slide). An odd ROWS_STEPS keeps a warp's
  // reads on distinct banks.
  const int c = ROWS_HALO * ROWS_W + lx * ROWS_STEPS;  // this work-item's first output in the tile
  const int x = ((int)get_group_id(0) * ROWS_STEPS) * ROWS_W + lx * ROWS_STEPS;
  float acc[ROWS_STEPS];
  slide(&tile[ly][c - RADIUS_X], ROW_W(weights), ROWS_STEPS, RADIUS_X, acc);
  __global float* out = dst + (size_t)(y - y0) * pitch;
#pragma unroll
  for (int s = 0; s < ROWS_STEPS; ++s)
    if (x + s < width) out[x + s] = acc[s];
#else
#pragma unroll
  for (int s = ROWS_HALO; s < ROWS_HALO + ROWS_STEPS; ++s) {
    const int x = x0 + s * ROWS_W;
    if (x >= width) break;
    __local const float* taps = &tile[ly][lx + s * ROWS_W - RADIUS_X];
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j <= 2 * RADIUS_X; ++j) sum = fma(ROW_W(weights)[j], taps[j], sum);
    dst[(size_t)(y - y0) * pitch + x] = sum;
  }
#endif
}

#if !COLS_DIRECT
__kernel __attribute__((reqd_work_group_size(COLS_W, COLS_H, 1))) void CAT(FILTER, _cols)(
    __global const float* src, __global float* dst, const StripArgs strip,
    const int border, __constant const float* weights, const float offset) {
  STRIP_FIELDS(strip);
  // One spare column per row of the tile keeps column reads free of bank conflicts.
  __local float tile[COLS_W][COLS_SPAN + 1];
  const size_t plane = (size_t)get_global_id(2) * pitch * rows;
  src += plane;
  dst += plane;
  const int lx = get_local_id(0);
  const int ly = get_local_id(1);
  const int x = (int)get_group_id(0) * COLS_W + lx;
  // The tile's first image row, and this work-item's first row in it.
  const int top = first + ((int)get_group_id(1) * COLS_STEPS - COLS_HALO) * COLS_H;
  const int ty = top + ly;
  __global const float* column = src + min(x, width - 1);
  if (top >= y0 && top + COLS_SPAN <= y0 + rows) {
#pragma unroll
    for (int s = 0; s < COLS_STEPS + 2 * COLS_HALO; ++s)
      tile[lx][ly + s * COLS_H] = column[(size_t)(ty + s * COLS_H - y0) * pitch];
  } else {
#pragma unroll
    for (int s = 0; s < COLS_STEPS + 2 * COLS_HALO; ++s) {
      const int y = strip_row(ty + s * COLS_H, y0, rows, height, border);
      tile[lx][ly + s * COLS_H] = y < 0 ? 0.0f : column[(size_t)y * pitch];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (x >= width) return;
#if COLS_SLIDING
  // COLS_STEPS neighbouring rows per work-item (see slide).
  const int c = COLS_HALO * COLS_H + ly * COLS_STEPS;  // this work-item's first output in the tile
  const int y = top + c;
  float acc[COLS_STEPS];
  slide(&tile[lx][c - RADIUS_Y], COL_W(weights), COLS_STEPS, RADIUS_Y, acc);
#pragma unroll
  for (int s = 0; s < COLS_STEPS; ++s)
    if (y + s < last) dst[(size_t)(y + s - y0) * pitch + x] = acc[s] + offset;
#else
#pragma unroll
  for (int s = COLS_HALO; s < COLS_HALO + COLS_STEPS; ++s) {
    const int y = ty + s * COLS_H;
    if (y >= last) break;
    __local const float* taps = &tile[lx][ly + s * COLS_H - RADIUS_Y];
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i <= 2 * RADIUS_Y; ++i) sum = fma(COL_W(weights)[i], taps[i], sum);
    dst[(size_t)(y - y0) * pitch + x] = sum + offset;
  }
#endif
}
#else
// Radius too large for a local tile: each work-item reads its taps from global memory; adjacent
// work-items read adjacent columns, so every tap is one coalesced row read.
__kernel __attribute__((reqd_work_group_size(COLS_W, COLS_H, 1))) void CAT(FILTER, _cols)(
    __global const float* src, __global float* dst, const StripArgs strip,
    const int border, __constant const float* weights, const float offset) {
  STRIP_FIELDS(strip);
  const size_t plane = (size_t)get_global_id(2) * pitch * rows;
  src += plane;
  dst += plane;
  const int x = get_global_id(0);
  const int y = first + (int)get_global_id(1);
  if (x >= width || y >= last) return;
  float sum = 0.0f;
  for (int i = 0; i <= 2 * RADIUS_Y; ++i) {
    const int yy = strip_row(y + i - RADIUS_Y, y0, rows, height, border);
    sum = fma(COL_W(weights)[i], yy < 0 ? 0.0f : src[(size_t)yy * pitch + x], sum);
  }
  dst[(size_t)(y - y0) * pitch + x] = sum + offset;
}
#endif
#endif  // SEP_FORM_PASSES

// Fused (SEP_FORM_FUSED, radii up to a tuning limit): both passes in one kernel, so the image
// is read once and written once; the two-pass path also writes and reads the rows pass's
// result, twice the floor's bytes. A 32 x FUSED_STEPS work-group owns FUSED_W = 32 * FUSED_STEPS
// columns and walks down `band` output rows FUSED_STEPS rows at a time (a chunk):
//   1. the chunk's input rows (plus RADIUS_X columns each side), loaded into registers while
//      the chunk before was computed, go into a local tile;
//   2. rows pass: work-item (lx, ly) filters row ly at its FUSED_STEPS neighbouring columns (a
//      sliding window, as ROWS_SLIDING) into `mid`, FUSED_STEPS rows of FUSED_W;
//   3. columns pass: work-item t owns column t: it keeps the last 2 * RADIUS_Y + FUSED_STEPS
//      rows-pass values of its column in registers, shifts the chunk's FUSED_STEPS in from `mid`
//      and computes FUSED_STEPS outputs from them.
// The first WARMUP chunks only fill the windows (the 2 * RADIUS_Y rows above the band). Two
// barriers a chunk: after the tile store (every work-item has read `mid` for the previous
// chunk, so the rows pass may overwrite it) and after the rows pass.
// Each tap is still fma in tap order: results equal the reference bit for bit. The weights
// are always compiled in (ROW_WEIGHTS, COL_WEIGHTS): 0.210 -> 0.170 ms at r=8 on an H100.
#if SEP_FORM == SEP_FORM_FUSED
#define FUSED_W (GROUP_FUSED_W * FUSED_STEPS)
#define FUSED_SPAN (FUSED_W + 2 * RADIUS_X)
#define WINDOW (2 * RADIUS_Y + FUSED_STEPS)
#define WARMUP ((2 * RADIUS_Y + FUSED_STEPS - 1) / FUSED_STEPS)
#define FUSED_LOADS ((FUSED_SPAN + FUSED_W - 1) / FUSED_W)  // tile values per work-item and row

// Image rows v .. v + FUSED_STEPS - 1 (through the border rule), this work-item's share of a tile.
static inline void load_chunk(__global const float* src, float next[FUSED_STEPS][FUSED_LOADS],
                              const int v, const int t, const int left, const bool interior,
                              const int width, const int pitch, STRIP_ARGS, const int border) {
#pragma unroll
  for (int i = 0; i < FUSED_STEPS; ++i) {
    const int y = strip_row(v + i, y0, rows, height, border);
    __global const float* row = src + (size_t)max(y, 0) * pitch;
#pragma unroll
    for (int l = 0; l < FUSED_LOADS; ++l) {
      const int c = t + l * FUSED_W;
      const int x = interior ? left + c : border_index(left + c, width, border);
      next[i][l] = (c >= FUSED_SPAN || x < 0 || y < 0) ? 0.0f : row[x];
    }
  }
}

__kernel __attribute__((reqd_work_group_size(GROUP_FUSED_W, FUSED_STEPS, 1))) void CAT(FILTER, _fused)(
    __global const float* src, __global float* dst, const StripArgs strip,
    const int border, const float offset, const int band) {
  STRIP_FIELDS(strip);
  __local float tile[FUSED_STEPS][FUSED_SPAN];
  __local float mid[FUSED_STEPS][FUSED_W];
  const size_t plane = (size_t)get_global_id(2) * pitch * rows;
  src += plane;
  dst += plane;
  const int lx = get_local_id(0);
  const int ly = get_local_id(1);
  const int t = ly * GROUP_FUSED_W + lx;  // the column this work-item owns in the columns pass
  const int left = (int)get_group_id(0) * FUSED_W - RADIUS_X;  // image column of tile[.][0]
  const int band_first = first + (int)get_group_id(1) * band;
  const int band_last = min(band_first + band, last);
  // Chunk k loads image rows v0 + k * FUSED_STEPS + [0, FUSED_STEPS); chunk WARMUP + j writes the
  // output rows band_first + j * FUSED_STEPS + [0, FUSED_STEPS).
  const int v0 = band_first + RADIUS_Y - WARMUP * FUSED_STEPS;
  const int chunks = WARMUP + (band_last - band_first + FUSED_STEPS - 1) / FUSED_STEPS;
  const bool interior = left >= 0 && left + FUSED_SPAN <= width;
  float next[FUSED_STEPS][FUSED_LOADS];
  load_chunk(src, next, v0, t, left, interior, width, pitch, STRIP_VALUES, border);
  float window[WINDOW];  // rows-pass values of column t, oldest first
#pragma unroll
  for (int i = 0; i < WINDOW; ++i) window[i] = 0.0f;
  for (int k = 0; k < chunks; ++k) {
#pragma unroll
    for (int i = 0; i < FUSED_STEPS; ++i)
#pragma unroll
      for (int l = 0; l < FUSED_LOADS; ++l)
        if (t + l * FUSED_W < FUSED_SPAN) tile[i][t + l * FUSED_W] = next[i][l];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (k + 1 < chunks)
      load_chunk(src, next, v0 + (k + 1) * FUSED_STEPS, t, left, interior, width, pitch,
                 STRIP_VALUES, border);
    {
      float acc[FUSED_STEPS];
      slide(&tile[ly][lx * FUSED_STEPS], kRowWeights, FUSED_STEPS, RADIUS_X, acc);
#pragma unroll
      for (int s = 0; s < FUSED_STEPS; ++s) mid[ly][lx * FUSED_STEPS + s] = acc[s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int i = 0; i < 2 * RADIUS_Y; ++i) window[i] = window[i + FUSED_STEPS];
#pragma unroll
    for (int s = 0; s < FUSED_STEPS; ++s) window[2 * RADIUS_Y + s] = mid[s][t];
    if (k >= WARMUP) {
      const int x = left + RADIUS_X + t;
      const int y = band_first + (k - WARMUP) * FUSED_STEPS;
#pragma unroll
      for (int s = 0; s < FUSED_STEPS; ++s) {
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i <= 2 * RADIUS_Y; ++i) sum = fma(kColWeights[i], window[s + i], sum);
        if (x < width && y + s < band_last) dst[(size_t)(y + s - y0) * pitch + x] = sum + offset;
      }
    }
  }
}
#endif

// Direct (SEP_FORM_DIRECT, small radii on GPUs: direct_radius): no local memory, no
// barriers. A work-item computes 4 neighbouring outputs in each of DIRECT_ROWS rows: it loads
// the DIRECT_ROWS + 2 * RADIUS_Y input rows they need (an aligned float4 and RADIUS_X scalars
// each side, through L1 where neighbours share them), runs the rows pass on each in registers,
// then the columns pass, and stores aligned float4s. Rows-pass values of the 2 * RADIUS_Y halo
// rows are computed again by the work-items above and below: worth it only while the radius is
// small against DIRECT_ROWS. No store comes before the last load, so the loads can all be in
// flight together. Taps are fma in tap order from 0, the columns pass adds the offset last:
// the reference's arithmetic. The weights are compiled in (ROW_WEIGHTS, COL_WEIGHTS).
#if SEP_FORM == SEP_FORM_DIRECT
#define DIRECT_SPAN (4 + 2 * RADIUS_X)
#define DIRECT_IN (DIRECT_ROWS + 2 * RADIUS_Y)

// Row yy's values for the 4 outputs at x0 and their RADIUS_X neighbours each side (zeros for
// yy < 0); `inside`: the span lies in the row, so no border arithmetic.
static inline void direct_span(__global const float* src, const int yy, const int pitch,
                               const int x0, const int width, const int border, const bool inside,
                               float* span) {
  if (yy < 0) {
#pragma unroll
    for (int k = 0; k < DIRECT_SPAN; ++k) span[k] = 0.0f;
    return;
  }
  __global const float* row = src + (size_t)yy * pitch;
  if (inside) {
    vstore4(*(__global const float4*)(row + x0), 0, span + RADIUS_X);  // x0, pitch: multiples of 4
#pragma unroll
    for (int k = 0; k < RADIUS_X; ++k) {
      span[k] = row[x0 - RADIUS_X + k];
      span[RADIUS_X + 4 + k] = row[x0 + 4 + k];
    }
  } else {
#pragma unroll
    for (int k = 0; k < DIRECT_SPAN; ++k) {
      const int x = border_index(x0 - RADIUS_X + k, width, border);
      span[k] = x < 0 ? 0.0f : row[x];
    }
  }
}

__kernel void CAT(FILTER, _direct)(__global const float* src, __global float* dst,
                                   const StripArgs strip,
                                   const int border, const float offset) {
  STRIP_FIELDS(strip);
  const size_t plane = (size_t)get_global_id(2) * pitch * rows;
  src += plane;
  dst += plane;
  const int x0 = (int)get_global_id(0) * 4, y = first + (int)get_global_id(1) * DIRECT_ROWS;
  if (x0 >= width || y >= last) return;
  const bool inside = x0 - RADIUS_X >= 0 && x0 + 4 + RADIUS_X <= width;
  const bool interior = y - RADIUS_Y >= y0 && y + DIRECT_ROWS + RADIUS_Y <= y0 + rows;
  const int n = min(DIRECT_ROWS, last - y);
  float mid[DIRECT_IN][4];  // rows-pass values of the input rows y - RADIUS_Y + t
#pragma unroll
  for (int t = 0; t < DIRECT_IN; ++t) {
    // Rows past the strip's last output are never used: read the last needed row again.
    const int row = y - RADIUS_Y + min(t, n + 2 * RADIUS_Y - 1);
    float span[DIRECT_SPAN];
    direct_span(src, interior ? row - y0 : strip_row(row, y0, rows, height, border), pitch, x0,
                width, border, inside, span);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j <= 2 * RADIUS_X; ++j) sum = fma(kRowWeights[j], span[k + j], sum);
      mid[t][k] = sum;
    }
  }
#pragma unroll
  for (int o = 0; o < DIRECT_ROWS; ++o) {
    if (o >= n) break;
    float out[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      float sum = 0.0f;
#pragma unroll
      for (int i = 0; i <= 2 * RADIUS_Y; ++i) sum = fma(kColWeights[i], mid[o + i][k], sum);
      out[k] = sum + offset;
    }
    __global float* at = dst + (size_t)(y + o - y0) * pitch + x0;
    if (x0 + 4 <= width) {
      *(__global float4*)at = vload4(0, out);
    } else {
      for (int k = 0; x0 + k < width; ++k) at[k] = out[k];
    }
  }
}
#endif

#if SEP_FORM == SEP_FORM_VECTOR
// CPUs (VEC > 0, from the tuning table): each work-item computes VEC neighbouring outputs of a
// row with VEC-wide vector fma, taps read straight from memory (caches do what the local tile
// does on a GPU). PoCL does not vectorise the tiled kernels across work-items; explicit vectors
// become AVX code. Each lane still adds its taps in order, so results equal the reference.

// The lanes of `sum` that fall inside the row.
inline void store_lanes(__global float* out, const int x0, const int width, const FLOATV sum) {
  if (x0 + VEC <= width) {
    VSTORE(sum, 0, out + x0);
  } else {
    float lanes[VEC];
    VSTORE(sum, 0, lanes);
    for (int k = 0; x0 + k < width; ++k) out[x0 + k] = lanes[k];
  }
}

// The rows pass's taps from aligned loads: lanes [k, k + 16) of the 32 lanes lo:hi, as one
// permute (clang's builtin; PoCL's shuffle2 became lane-by-lane code, twice as slow as the
// unaligned loads). A 16-float load at an unaligned tap splits two cache lines; three aligned
// loads and a permute per tap took the 2-core EPYC's rows pass (4096x1024 RGB float) from 7.7
// to 5.8 ms at r=8 and from 14.0 to 10.3 at r=16 (docs/performance.md).
#if VEC == 16 && defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define ROWS_PERMUTE 1
#define LANES16(lo, hi, k)                                                                     \
  case k:                                                                                      \
    return __builtin_shufflevector(lo, hi, k, k + 1, k + 2, k + 3, k + 4, k + 5, k + 6, k + 7, \
                                   k + 8, k + 9, k + 10, k + 11, k + 12, k + 13, k + 14, k + 15)
// k is a constant wherever this is called (unrolled taps), so the switch folds away.
inline float16 lanes_from(const float16 lo, const float16 hi, const int k) {
  if (k == 0) return lo;
  switch (k) {
    LANES16(lo, hi, 1);
    LANES16(lo, hi, 2);
    LANES16(lo, hi, 3);
    LANES16(lo, hi, 4);
    LANES16(lo, hi, 5);
    LANES16(lo, hi, 6);
    LANES16(lo, hi, 7);
    LANES16(lo, hi, 8);
    LANES16(lo, hi, 9);
    LANES16(lo, hi, 10);
    LANES16(lo, hi, 11);
    LANES16(lo, hi, 12);
    LANES16(lo, hi, 13);
    LANES16(lo, hi, 14);
    LANES16(lo, hi, 15);
  }
  return hi;
}
#endif
#endif

// The rows pass writes into a ring of `ring` rows a plane (image row y at row y % ring), so the
// rows that consecutive strips share stay where they are for the next strip's columns pass.
__kernel void CAT(FILTER, _rows_vec)(__global const float* src, __global float* dst,
                                     const StripArgs strip, const int border,
                                     __constant const float* weights, const int ring) {
  STRIP_FIELDS(strip);
  const size_t plane = (size_t)get_global_id(2) * pitch * rows;
  const int x0 = (int)get_global_id(0) * VEC, y = first + (int)get_global_id(1);
  if (x0 >= width || y >= last) return;
  __global const float* row = src + plane + (size_t)(y - y0) * pitch;
  __global float* out = dst + ((size_t)get_global_id(2) * ring + y % ring) * pitch;
  if (x0 >= RADIUS_X && x0 + VEC + RADIUS_X <= width) {
    FLOATV sum = 0.0f;
#if defined(ROWS_PERMUTE) && RADIUS_X >= 1 && RADIUS_X <= VEC
    // x0 >= VEC here, and x0 + 2 VEC stays inside the row's padding (pitch: 32 floats).
    const FLOATV a = VLOAD(0, row + x0 - VEC), b = VLOAD(0, row + x0), c = VLOAD(0, row + x0 + VEC);
#pragma unroll
    for (int j = 0; j <= 2 * RADIUS_X; ++j) {
      const int k = j - RADIUS_X;
      const FLOATV v = k < 0 ? lanes_from(a, b, VEC + k) : lanes_from(b, c, k);
      sum = fma((FLOATV)(weights[j]), v, sum);
    }
#else
    for (int j = 0; j <= 2 * RADIUS_X; ++j)
      sum = fma((FLOATV)(weights[j]), VLOAD(0, row + x0 - RADIUS_X + j), sum);
#endif
    VSTORE(sum, 0, out + x0);
    return;
  }
  for (int k = 0; k < VEC && x0 + k < width; ++k) {  // near the left or right edge
    float sum = 0.0f;
    for (int j = 0; j <= 2 * RADIUS_X; ++j) {
      const int x = border_index(x0 + k - RADIUS_X + j, width, border);
      sum = fma(weights[j], x < 0 ? 0.0f : row[x], sum);
    }
    out[x0 + k] = sum;
  }
}

// VEC_COLS outputs down a column per work-item: each input row loaded once serves every output
// it contributes to, taps still in order for each output. Rows are padded to a multiple of 32
// floats, so a VEC-wide load at x0 < width stays inside the row; lanes past the width are
// computed and dropped.
#ifndef VEC_COLS
#define VEC_COLS 1
#endif
// Small windows unroll fully (ADD_ROW's per-output tests then vanish); large ones would bloat.
#if VEC_COLS + 2 * RADIUS_Y <= 64
#define COLS_VEC_UNROLL _Pragma("unroll")
#else
#define COLS_VEC_UNROLL
#endif
// Row t of a work-item's window (image row y - RADIUS_Y + t) into each output it is a tap of.
// A macro: acc[] through a pointer to an inline function stayed in memory on PoCL (r=16
// columns 5.2 -> 7.4 ms).
#define ADD_ROW(acc, v, t)                                                          \
  _Pragma("unroll") for (int o = 0; o < VEC_COLS; ++o) {                            \
    const int i = (t)-o; /* the tap this row is for output o */                     \
    if (i >= 0 && i <= 2 * RADIUS_Y) acc[o] = fma((FLOATV)(weights[i]), v, acc[o]); \
  }
// src is the rows pass's ring (see _rows_vec), holding the image rows [y0, y0 + rows); dst holds
// the image rows [dst_y0, dst_y0 + dst_rows) (a strip may start below the ring's rows: the rows
// pass carried them).
__kernel void CAT(FILTER, _cols_vec)(__global const float* src, __global float* dst,
                                     const StripArgs strip, const int border,
                                     __constant const float* weights, const float offset,
                                     const int ring, const int dst_y0, const int dst_rows) {
  STRIP_FIELDS(strip);
  const size_t plane = (size_t)get_global_id(2) * pitch * dst_rows;
  const int x0 = (int)get_global_id(0) * VEC, y = first + (int)get_global_id(1) * VEC_COLS;
  if (x0 >= width || y >= last) return;
  src += (size_t)get_global_id(2) * pitch * ring + x0;
  FLOATV acc[VEC_COLS];
#pragma unroll
  for (int o = 0; o < VEC_COLS; ++o) acc[o] = 0.0f;
  // Most work-items read rows inside the buffer only: no border arithmetic per row, the ring's
  // row found by a compare instead of a division per row, and with the taps unrolled only the
  // fma's each output needs (4096x1024 RGB float, r=8: 6.3 -> 4.3 ms on the 2-core EPYC).
  if (y - RADIUS_Y >= y0 && y + VEC_COLS + RADIUS_Y <= y0 + rows) {
    int r = (y - RADIUS_Y) % ring;
    COLS_VEC_UNROLL
    for (int t = 0; t < VEC_COLS + 2 * RADIUS_Y; ++t) {
      const FLOATV v = VLOAD(0, src + (size_t)r * pitch);
      r = r + 1 == ring ? 0 : r + 1;
      ADD_ROW(acc, v, t);
    }
    for (int o = 0; o < VEC_COLS && y + o < last; ++o)
      store_lanes(dst + plane + (size_t)(y + o - dst_y0) * pitch, x0, width, acc[o] + offset);
    return;
  }
  for (int t = 0; t < VEC_COLS + 2 * RADIUS_Y; ++t) {  // near the strip's or image's edge
    const int yy = strip_row(y - RADIUS_Y + t, y0, rows, height, border);
    const FLOATV v = yy < 0 ? (FLOATV)(0.0f) : VLOAD(0, src + (size_t)((yy + y0) % ring) * pitch);
    ADD_ROW(acc, v, t);
  }
  for (int o = 0; o < VEC_COLS && y + o < last; ++o)
    store_lanes(dst + plane + (size_t)(y + o - dst_y0) * pitch, x0, width, acc[o] + offset);
}
#endif  // SEP_FORM_VECTOR
