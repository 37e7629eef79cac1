// box:r=R as running sums: each output costs an add and a subtract whatever the radius. Sums
// are kept in double so the sliding window never drifts; each pass rounds to float once, as
// the reference (lib/filters/convolve/box.cpp) does.
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

// A program holds the two passes or box_walk (BOX_WALK defined), not both: a runtime that hands
// out a program's binary (halo's disk cache) builds every kernel in it.
#ifndef BOX_WALK
__kernel __attribute__((reqd_work_group_size(1, BOX_ROWS, 1))) void box_rows(
    __global const float* src, __global float* dst, const StripArgs strip,
    const int border) {
  STRIP_FIELDS(strip);
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
    if (!isfinite(sum)) {  // a NaN or infinity entered or left: sum the window afresh
      sum = 0.0;
      for (int j = 0; j < TAPS; ++j) sum += line[k + j];
    }
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

// The column's window around image row y summed afresh, in order (after a NaN or infinity
// made the running sum non-finite: lib/filters/convolve/box.cpp running_mean).
inline double box_window(__global const float* column, const int y, const int pitch,
                         const int y0, const int rows, const int height, const int border,
                         const bool interior) {
  double sum = 0.0;
  for (int k = -RADIUS; k <= RADIUS; ++k)
    sum += box_tap(column, y + k, pitch, y0, rows, height, border, interior);
  return sum;
}

__kernel void box_cols(__global const float* src, __global float* dst, const StripArgs strip,
                       const int border) {
  STRIP_FIELDS(strip);
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
      if (!isfinite(sum)) sum = box_window(column, ys + k, pitch, y0, rows, height, border, true);
      out[(size_t)k * pitch] = MEAN(sum);
    }
    return;
  }
  for (int y = ys + 1; y < ye; ++y) {
    sum += box_tap(column, y + RADIUS, pitch, y0, rows, height, border, interior) -
           box_tap(column, y - RADIUS - 1, pitch, y0, rows, height, border, interior);
    if (!isfinite(sum)) sum = box_window(column, y, pitch, y0, rows, height, border, interior);
    dst[(size_t)(y - y0) * pitch + x] = MEAN(sum);
  }
}
#endif  // !BOX_WALK

// box_walk (BOX_WALK defined; GPUs): both passes in one kernel, so the image is read once and
// written once where box_rows + box_cols also write and read the rows pass's result. A
// work-group of BOX_WALK work-items owns BOX_WALK columns and walks down a band of `band` output
// rows, BOX_WALK_STEPS image rows a step:
//   1. the step's rows (WALK_SPAN = BOX_WALK + 2 RADIUS columns each), loaded into registers
//      while the step before was computed, go into a local tile;
//   2. rows pass as prefix sums: WALK_G work-items per row each sum a chunk of the row in
//      double, then add the totals of the chunks before theirs: pre[i][j] = the sum of the
//      row's first j values. The sum of any window is then pre[j + TAPS] - pre[j];
//   3. columns pass as running sums: work-item t owns column t; it rounds its window sum to
//      float (the reference's rows-pass value), keeps the last TAPS of them in a local ring of
//      its own and slides its column's double sum by the new value minus the oldest.
// Sums of floats in double are exact wherever the running sums of box_rows/box_cols are (a
// prefix adds BOX_WALK + 2 RADIUS values at most), so any order gives the reference's values.
// Four barriers a step: before the tile (it shares memory with the prefix sums), after it,
// after the chunk totals, after the prefix sums.
// Defines: RADIUS, BOX_WALK, BOX_WALK_STEPS (BOX_WALK a multiple of BOX_WALK_STEPS), BOX_INV.
#ifdef BOX_WALK
#define WALK_SPAN (BOX_WALK + 2 * RADIUS)
#define WALK_G (BOX_WALK / BOX_WALK_STEPS)
#define WALK_CHUNK ((WALK_SPAN + WALK_G - 1) / WALK_G)
// A tile row pads each chunk by one float: the WALK_G work-items of a row read its chunks in
// step, and an odd chunk stride puts them in different banks.
#define WALK_STRIDE (WALK_G * (WALK_CHUNK + 1))
#define WALK_LOADS ((WALK_SPAN + BOX_WALK - 1) / BOX_WALK)  // tile values per work-item and row

// Image rows v .. v + BOX_WALK_STEPS - 1 (through the border rule), this work-item's share of a
// tile.
static inline void walk_load(__global const float* src, float next[BOX_WALK_STEPS][WALK_LOADS],
                             const int v, const int t, const int left, const bool interior,
                             const int width, const int pitch, STRIP_ARGS, const int border) {
#pragma unroll
  for (int i = 0; i < BOX_WALK_STEPS; ++i) {
    const int y = strip_row(v + i, y0, rows, height, border);
    __global const float* row = src + (size_t)max(y, 0) * pitch;
#pragma unroll
    for (int l = 0; l < WALK_LOADS; ++l) {
      const int c = t + l * BOX_WALK;
      const int x = interior ? left + c : border_index(left + c, width, border);
      next[i][l] = (c >= WALK_SPAN || x < 0 || y < 0) ? 0.0f : row[x];
    }
  }
}

// The column's window afresh, oldest first (its running sum became non-finite).
static inline double walk_ring_sum(__local float (*ring)[BOX_WALK], const int slot,
                                                      const int t) {
  double sum = 0.0;
  for (int k = 0; k < TAPS; ++k) sum += (double)ring[(slot + k) % TAPS][t];
  return sum;
}

// The rows-pass window of image row v starting at image column x, summed in order from the
// image through the border rules.
static inline double walk_row_window(__global const float* src, const int v, const int x,
                                     const bool interior, const int width, const int pitch,
                                     STRIP_ARGS, const int border) {
  const int y = strip_row(v, y0, rows, height, border);
  if (y < 0) return 0.0;
  __global const float* row = src + (size_t)y * pitch;
  double sum = 0.0;
  for (int k = 0; k < TAPS; ++k) {
    const int c = interior ? x + k : border_index(x + k, width, border);
    sum += c < 0 ? 0.0 : (double)row[c];
  }
  return sum;
}

// The step's BOX_WALK_STEPS rows: the rows pass from the prefix sums, the columns pass by the ring,
// the outputs completed. CHECKED (0 or 1; box_walk expands both): windows and column sums that
// are not finite are summed afresh. A macro, not a function: PoCL computed wrong outputs with
// the running sum and ring slot passed to a function by pointer.
#define WALK_OUTPUTS(CHECKED)                                                                   \
  _Pragma("unroll") for (int i = 0; i < BOX_WALK_STEPS; ++i) {                                  \
    /* Rows past the walk (its last step's padding) come after every output: no test. */        \
    const int n = n0 + i;                                                                       \
    double window = pre[i][t + TAPS] - pre[i][t];                                               \
    if (CHECKED && !isfinite(window))                                                           \
      window = walk_row_window(src, v0 + n, left + t, interior, width, pitch, STRIP_VALUES,     \
                               border);                                                         \
    const float value = MEAN(window); /* rows pass, rounded as tmp is */                        \
    sum += (double)value - (double)ring[slot][t];                                               \
    ring[slot][t] = value;                                                                      \
    slot = slot + 1 == TAPS ? 0 : slot + 1;                                                     \
    if (CHECKED && !isfinite(sum)) sum = walk_ring_sum(ring, slot, t);                          \
    const int y = v0 + n - RADIUS;                                                              \
    if (n >= 2 * RADIUS && n < walk && x0 + t < width)                                          \
      dst[(size_t)(y - y0) * pitch + x0 + t] = MEAN(sum);                                       \
  }

__kernel __attribute__((reqd_work_group_size(BOX_WALK, 1, 1))) void box_walk(
    __global const float* src, __global float* dst, const StripArgs strip,
    const int border, const int band) {
  STRIP_FIELDS(strip);
  // The tile is dead once its chunks are summed, so the prefix sums take its place: less
  // local memory, more work-groups at once. A fourth barrier a step pays for it.
  __local double pre[BOX_WALK_STEPS][WALK_SPAN + 1];
  __local float(*tile)[WALK_STRIDE] = (__local float(*)[WALK_STRIDE])pre;
  __local double total[BOX_WALK_STEPS][WALK_G];
  __local float ring[TAPS][BOX_WALK];
  const size_t plane = (size_t)get_global_id(2) * pitch * rows;
  src += plane;
  dst += plane;
  const int t = get_local_id(0);
  const int x0 = (int)get_group_id(0) * BOX_WALK;
  const int left = x0 - RADIUS;  // image column of the tile's first value
  const bool interior = left >= 0 && left + WALK_SPAN <= width;
  const int band_first = first + (int)get_group_id(1) * band;
  const int band_last = min(band_first + band, last);
  // Image row v0 + n is the walk's n-th; from n = 2 RADIUS on it completes output row
  // v0 + n - RADIUS.
  const int v0 = band_first - RADIUS;
  const int walk = band_last - band_first + 2 * RADIUS;
  // The prefix phase: row i of a step, chunk g of it.
  const int i_row = t / WALK_G, g = t % WALK_G;
  float next[BOX_WALK_STEPS][WALK_LOADS];
  walk_load(src, next, v0, t, left, interior, width, pitch, STRIP_VALUES, border);
  for (int k = 0; k < TAPS; ++k) ring[k][t] = 0.0f;
  double sum = 0.0;         // the column's last TAPS rows-pass values
  int slot = 0;             // ring entry of the oldest of them
  int since_bad = 1 << 30;  // rows walked since the last that held a NaN or infinity
  for (int n0 = 0; n0 < walk; n0 += BOX_WALK_STEPS) {
    barrier(CLK_LOCAL_MEM_FENCE);  // the step before has read `pre`
#pragma unroll
    for (int i = 0; i < BOX_WALK_STEPS; ++i)
#pragma unroll
      for (int l = 0; l < WALK_LOADS; ++l) {
        const int c = t + l * BOX_WALK;
        if (c < WALK_SPAN) tile[i][c + c / WALK_CHUNK] = next[i][l];
      }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (n0 + BOX_WALK_STEPS < walk)
      walk_load(src, next, v0 + n0 + BOX_WALK_STEPS, t, left, interior, width, pitch, STRIP_VALUES,
                border);

    double partial[WALK_CHUNK];  // this chunk's running sum
    double running = 0.0;
#pragma unroll
    for (int e = 0; e < WALK_CHUNK; ++e) {
      const int c = g * WALK_CHUNK + e;
      running += c < WALK_SPAN ? (double)tile[i_row][g * (WALK_CHUNK + 1) + e] : 0.0;
      partial[e] = running;
    }
    total[i_row][g] = running;
    barrier(CLK_LOCAL_MEM_FENCE);
    double offset = 0.0;  // every total loaded at once: a chain of adds, not of loads
#pragma unroll
    for (int h = 0; h < WALK_G - 1; ++h) offset += h < g ? total[i_row][h] : 0.0;
    if (g == 0) pre[i_row][0] = 0.0;
#pragma unroll
    for (int e = 0; e < WALK_CHUNK; ++e) {
      const int c = g * WALK_CHUNK + e;
      if (c < WALK_SPAN) pre[i_row][c + 1] = offset + partial[e];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // A NaN or infinity in a row makes its prefixes after it non-finite, and in the column
    // sums stays until summed afresh (lib/filters/convolve/box.cpp running_mean). The rows' totals
    // tell the whole group at once whether this step, or one less than TAPS rows back, had one:
    // only then does it take the checked copy of the loop. Measured on an H100 (8K float,
    // 2026-11-26): r = 32 and 64 within 2% of the walk without checks, r = 17 15-17% slower.
    bool bad = false;
#pragma unroll
    for (int i = 0; i < BOX_WALK_STEPS; ++i) bad |= !isfinite(pre[i][WALK_SPAN]);
    since_bad = bad ? 0 : since_bad + BOX_WALK_STEPS;
    if (since_bad < TAPS + BOX_WALK_STEPS) {
      WALK_OUTPUTS(1)
    } else {
      WALK_OUTPUTS(0)
    }
  }
}
#endif
