// Exact histograms. Every pixel maps to one bin (or to one of the apart counters) by integer
// arithmetic for integer data and by correctly rounded float operations for float data, the
// same steps as lib/filters/measure/histogram.cpp, so device and reference agree bin for bin.
//
// Input (INPUT, contract.h's HIST_INPUT_*): 8-bit interleaved, 16-bit interleaved, float planar
// (`plane` floats per channel, rows of `pitch`, `width` wide, the counted rows starting `origin`
// floats into each plane: a strip's rows; kernel arguments, so one program serves every image
// size). CODES = 1 when float data holds integer codes (8/16-bit sources after filters): they are
// quantised as writing would (MAX_CODE).
// Mode (MODE, HIST_MODE_*): one channel CHANNEL, luma (Rec.601), luma709, rgb (3 x BINS
// counters).
// Counters: BINS per histogram (x3 for rgb), then under, over, NaN, Inf (float binning only).
//
// Strategies, one kernel each, all writing 32-bit partial counts that histogram_reduce adds
// into 64-bit totals (launches are split so no 32-bit counter can overflow):
//   histogram_global   atomics straight into one global histogram
//   histogram_local    per-group sub-histograms in local memory; 8/16-bit data is read in
//                      blocks of BLOCK pixels with 16-byte loads and a block of one bin costs
//                      one atomic, other data counts runs of equal bins before each atomic (a
//                      constant image is cheap either way)
//   histogram_private  the seeds' exclusive per-work-item counters (calcstatistic): each
//                      work-item owns a row of local counters, no atomics; per-group partials
//                      go to global memory for the reduce kernel (reducestatistic)
// Defines: INPUT, CHANNELS, MODE, CHANNEL, BINS, CODES, MAX_CODE, HIST_GROUP, HIST_SUBHISTS
//   (histogram_local copies), TOTALS64 (see below), HIST_IN_FLIGHT (blocks histogram_local loads
//   before counting them), WHOLE_BLOCKS (the pixels per work-item are whole blocks of 16), and
//   METHOD (HIST_METHOD_*): only that counting kernel is compiled, since the others' local
//   arrays may not fit the device. The pixels per work-item are an argument, not a define: they
//   follow the image's size, and as a define every size made a program of its own.
#pragma OPENCL FP_CONTRACT OFF

#include "contract.h"

#ifndef BINS
#define BINS 256
#endif
#ifndef INPUT
#define INPUT HIST_INPUT_U8
#endif
#ifndef CHANNELS
#define CHANNELS 1
#endif
#ifndef MODE
#define MODE HIST_MODE_CHANNEL
#endif
#ifndef CHANNEL
#define CHANNEL 0
#endif
#ifndef CODES
#define CODES 1
#endif
#ifndef MAX_CODE
#define MAX_CODE 255
#endif
#ifndef WHOLE_BLOCKS
#define WHOLE_BLOCKS 1
#endif
#ifndef HIST_GROUP
#define HIST_GROUP 256
#endif
#ifndef HIST_SUBHISTS
#define HIST_SUBHISTS 1
#endif
#ifndef METHOD
#define METHOD HIST_METHOD_LOCAL
#endif
#ifndef TOTALS64
#define TOTALS64 0
#endif
#ifndef HIST_IN_FLIGHT
#define HIST_IN_FLIGHT 1
#endif

#define HISTS (MODE == HIST_MODE_RGB ? 3 : 1)
#define COUNTERS (HISTS * BINS + 4)
#define UNDER (HISTS * BINS)
#define OVER (UNDER + 1)
#define NANS (UNDER + 2)
#define INFS (UNDER + 3)

#if INPUT == HIST_INPUT_U8
typedef uchar sample_t;
#elif INPUT == HIST_INPUT_U16
typedef ushort sample_t;
#else
typedef float sample_t;
#endif

// Where the samples of a planar float image lie (unused for interleaved integer data).
typedef struct {
  ulong width, pitch, plane, origin;
} layout_t;

// Sample c of pixel p as an integer code (integer data) or a float (float data).
#if INPUT == HIST_INPUT_FLOAT
inline float raw(__global const sample_t* src, const layout_t L, const ulong p, const int c) {
  // 32-bit division where it suffices: a 64-bit one costs several times more on GPUs.
  const ulong y = p <= UINT_MAX ? (uint)p / (uint)L.width : p / L.width;
  const ulong x = p - y * L.width;
  return src[c * L.plane + L.origin + y * L.pitch + x];
}
#else
inline float raw(__global const sample_t* src, const layout_t L, const ulong p, const int c) {
  return (float)src[p * CHANNELS + c];
}
#endif

// The float histogrammed for pixel p, sub-histogram h (luma sums left to right, unfused).
inline float value_of(__global const sample_t* src, const layout_t L, const ulong p, const int h) {
#if MODE == HIST_MODE_LUMA
  return 0.299f * raw(src, L, p, 0) + 0.587f * raw(src, L, p, 1) + 0.114f * raw(src, L, p, 2);
#elif MODE == HIST_MODE_LUMA709
  return 0.2126f * raw(src, L, p, 0) + 0.7152f * raw(src, L, p, 1) + 0.0722f * raw(src, L, p, 2);
#elif MODE == HIST_MODE_RGB
  return raw(src, L, p, h);
#else
  return raw(src, L, p, CHANNEL);
#endif
}

#if CODES
inline uint code(__global const sample_t* src, const layout_t L, const ulong p, const int c) {
#if INPUT == HIST_INPUT_FLOAT
  const float v = raw(src, L, p, c);
  return isnan(v) ? 0u : (uint)fmin(fmax(floor(v * (float)MAX_CODE + 0.5f), 0.0f), (float)MAX_CODE);
#else
  return (uint)src[p * CHANNELS + c];
#endif
}

// Integer codes 0..MAX_CODE fall into BINS equal bins. v * BINS < 65536 * 65536 fits in 32
// bits, and MAX_CODE + 1 is a power of two, so this is a multiply and a shift.
inline uint bin_of_code(const uint v) {
  return v * BINS / (MAX_CODE + 1);
}

// The bin of histogram h for one pixel's codes: r alone for one channel, r, g, b otherwise.
inline uint bin_of_codes(const uint r, const uint g, const uint b, const int h) {
#if MODE == HIST_MODE_LUMA
  const uint v = (299u * r + 587u * g + 114u * b) / 1000u;
#elif MODE == HIST_MODE_LUMA709
  const uint v = (2126u * r + 7152u * g + 722u * b) / 10000u;
#elif MODE == HIST_MODE_RGB
  const uint v = h == 0 ? r : h == 1 ? g : b;
#else
  const uint v = r;
#endif
  return h * BINS + bin_of_code(v);
}

inline uint bin_of(__global const sample_t* src, const layout_t L, const ulong p, const int h,
                   const float lo, const float hi, const float scale) {
#if MODE == HIST_MODE_CHANNEL
  return bin_of_codes(code(src, L, p, CHANNEL), 0, 0, h);
#elif MODE == HIST_MODE_RGB
  return h * BINS + bin_of_code(code(src, L, p, h));
#else
  return bin_of_codes(code(src, L, p, 0), code(src, L, p, 1), code(src, L, p, 2), h);
#endif
}
#else
// Float data: floor((x - lo) * scale) with scale = BINS / (hi - lo) rounded to float on the
// host; x == hi lands in the last bin; outside [lo, hi], NaN and Inf go to their counters.
inline uint bin_of(__global const sample_t* src, const layout_t L, const ulong p, const int h,
                   const float lo, const float hi, const float scale) {
  const float x = value_of(src, L, p, h);
  if (isnan(x)) return NANS;
  if (isinf(x)) return INFS;
  if (x < lo) return UNDER;
  if (x > hi) return OVER;
  return h * BINS + min((uint)floor((x - lo) * scale), (uint)(BINS - 1));
}
#endif

// histogram_local may merge straight into the 64-bit totals (TOTALS64, on devices with
// cl_khr_int64_base_atomics), which saves clearing the partials and the reduce kernel.
#if TOTALS64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
typedef ulong total_t;
#define ADD_TO_TOTAL(counter, n) atom_add(counter, (ulong)(n))
#else
typedef uint total_t;
#define ADD_TO_TOTAL(counter, n) atomic_add(counter, n)
#endif

// Every counting kernel takes the same arguments: the samples, its counters, the range of
// pixels [first, first + pixels) of this launch, the float range, the planar layout, and the
// pixels each work-item counts.
#define COUNT_ARGS                                                                               \
  __global const sample_t *src, __global total_t *counts, const ulong first, const ulong pixels, \
      const float lo, const float hi, const float scale, const ulong width, const ulong pitch,   \
      const ulong plane, const ulong origin, const int pixels_per_item
#define LAYOUT \
  { width, pitch, plane, origin }

#if METHOD == HIST_METHOD_GLOBAL
__kernel __attribute__((reqd_work_group_size(HIST_GROUP, 1, 1))) void histogram_global(COUNT_ARGS) {
  const layout_t L = LAYOUT;
  const ulong base =
      first + (ulong)get_group_id(0) * HIST_GROUP * pixels_per_item + get_local_id(0);
  for (int k = 0; k < pixels_per_item; ++k) {
    const ulong p = base + (ulong)k * HIST_GROUP;
    if (p >= first + pixels) break;
    for (int h = 0; h < HISTS; ++h) atomic_inc(&counts[bin_of(src, L, p, h, lo, hi, scale)]);
  }
}

#endif

#if METHOD == HIST_METHOD_LOCAL
// The HIST_SUBHISTS copies of a counter are neighbours (counter b of copy s at
// b * HIST_SUBHISTS + s), and work-item l counts into copy l % HIST_SUBHISTS. With as many copies
// as a warp has lanes, a warp's 32 atomics then fall on 32 different banks and never on one address, whatever the
// bins: with the copies one after the other, a counter's bank was its bin's, so random bins
// met in banks and equal ones serialised.
#define AT(b) ((b)*HIST_SUBHISTS)

// A run of equal bins is counted in a register and added with one atomic when it ends.
typedef struct {
  uint bin, length;
} run_t;

inline void extend(__local uint* hist, run_t* run, const uint b) {
  if (b != run->bin) {
    if (run->length) atomic_add(&hist[AT(run->bin)], run->length);
    run->bin = b;
    run->length = 0;
  }
  ++run->length;
}

// 8/16-bit data in blocks of BLOCK pixels: CHANNELS * INPUT loads of 16 bytes each (a block
// starts on a multiple of 16 pixels, so on a 16-byte boundary), unpacked in registers.
#define BLOCK HIST_BLOCK
#define BLOCK_LOADS (CHANNELS * INPUT)
#define BLOCKED (CODES && INPUT != HIST_INPUT_FLOAT && WHOLE_BLOCKS)

#if BLOCKED
typedef union {
  uint4 loads[BLOCK_LOADS];
  sample_t s[BLOCK * CHANNELS];
} block_t;

inline block_t load_block(__global const uint4* src, const ulong block) {
  block_t b;
#pragma unroll
  for (int i = 0; i < BLOCK_LOADS; ++i) b.loads[i] = src[block * BLOCK_LOADS + i];
  return b;
}

// A block whose pixels share one bin (flat areas, a constant image) costs one atomic; any
// other adds its pixels one by one.
inline void count_loaded(const block_t b, __local uint* hist) {
#pragma unroll
  for (int h = 0; h < HISTS; ++h) {
    uint bins[BLOCK];
#pragma unroll
    for (int i = 0; i < BLOCK; ++i) {
      const int at = i * CHANNELS;
#if MODE == HIST_MODE_CHANNEL
      bins[i] = bin_of_codes(b.s[at + CHANNEL], 0, 0, h);
#else
      bins[i] = bin_of_codes(b.s[at], b.s[at + 1], b.s[at + 2], h);
#endif
    }
    bool uniform = true;
#pragma unroll
    for (int i = 1; i < BLOCK; ++i) uniform &= bins[i] == bins[0];
    if (uniform) {
      atomic_add(&hist[AT(bins[0])], BLOCK);
    } else {
#pragma unroll
      for (int i = 0; i < BLOCK; ++i) atomic_inc(&hist[AT(bins[i])]);
    }
  }
}

inline void count_block(__global const uint4* src, const ulong block, __local uint* hist) {
  count_loaded(load_block(src, block), hist);
}
#endif

__kernel __attribute__((reqd_work_group_size(HIST_GROUP, 1, 1))) void histogram_local(COUNT_ARGS) {
  const layout_t L = LAYOUT;
  __local uint sub[COUNTERS * HIST_SUBHISTS];
  const int lid = get_local_id(0);
  for (int i = lid; i < COUNTERS * HIST_SUBHISTS; i += HIST_GROUP) sub[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  __local uint* mine = sub + lid % HIST_SUBHISTS;  // counter b at mine[AT(b)]
  run_t runs[HISTS];
  for (int h = 0; h < HISTS; ++h) runs[h].bin = runs[h].length = 0;
  const ulong end = first + pixels;
#if BLOCKED
  // Consecutive work-items take consecutive blocks; a partial block at the end goes pixel by
  // pixel. `first` is a multiple of BLOCK (launches are split at multiples of 2^30 pixels).
  const int blocks_per_item = pixels_per_item / BLOCK;
  const ulong base = first / BLOCK + (ulong)get_group_id(0) * HIST_GROUP * blocks_per_item;
#if HIST_IN_FLIGHT > 1
  // HIST_IN_FLIGHT blocks' loads are issued before any is counted: that many times the bytes in
  // flight per work-item, where memory latency rather than bandwidth limits the loop.
  int k = 0;
  for (; k + HIST_IN_FLIGHT <= blocks_per_item; k += HIST_IN_FLIGHT) {
    const ulong b0 = base + (ulong)k * HIST_GROUP + lid;
    // the tail: one by one below
    if ((b0 + (HIST_IN_FLIGHT - 1) * HIST_GROUP + 1) * BLOCK > end) break;
    block_t blocks[HIST_IN_FLIGHT];
#pragma unroll
    for (int i = 0; i < HIST_IN_FLIGHT; ++i)
      blocks[i] = load_block((__global const uint4*)src, b0 + (ulong)i * HIST_GROUP);
#pragma unroll
    for (int i = 0; i < HIST_IN_FLIGHT; ++i) count_loaded(blocks[i], mine);
  }
  for (; k < blocks_per_item; ++k) {
#else
  for (int k = 0; k < blocks_per_item; ++k) {
#endif
    const ulong block = base + (ulong)k * HIST_GROUP + lid;
    const ulong p0 = block * BLOCK;
    if (p0 >= end) break;
    if (p0 + BLOCK <= end) {
      count_block((__global const uint4*)src, block, mine);
    } else {
      for (ulong p = p0; p < end; ++p)
        for (int h = 0; h < HISTS; ++h) extend(mine, &runs[h], bin_of(src, L, p, h, lo, hi, scale));
    }
  }
#else
  const ulong base = first + (ulong)get_group_id(0) * HIST_GROUP * pixels_per_item + lid;
  for (int k = 0; k < pixels_per_item; ++k) {
    const ulong p = base + (ulong)k * HIST_GROUP;
    if (p >= end) break;
    for (int h = 0; h < HISTS; ++h) extend(mine, &runs[h], bin_of(src, L, p, h, lo, hi, scale));
  }
#endif
  for (int h = 0; h < HISTS; ++h)
    if (runs[h].length) atomic_add(&mine[AT(runs[h].bin)], runs[h].length);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = lid; i < COUNTERS; i += HIST_GROUP) {
    uint total = 0;
    // Each work-item starts at another copy, so neighbours read different banks.
    for (int s = 0; s < HIST_SUBHISTS; ++s)
      total += sub[i * HIST_SUBHISTS + (s + lid) % HIST_SUBHISTS];
    if (total) ADD_TO_TOTAL(&counts[i], total);
  }
}

#endif

#if METHOD == HIST_METHOD_PRIVATE
// The seeds' calcstatistic: HIST_GROUP work-items, each with an exclusive row of counters.
__kernel __attribute__((reqd_work_group_size(HIST_GROUP, 1, 1))) void histogram_private(COUNT_ARGS) {
  const layout_t L = LAYOUT;
  __local uint rows[HIST_GROUP][COUNTERS];
  const int lid = get_local_id(0);
  for (int i = 0; i < COUNTERS; ++i) rows[lid][i] = 0;
  const ulong base = first + (ulong)get_group_id(0) * HIST_GROUP * pixels_per_item + lid;
  for (int k = 0; k < pixels_per_item; ++k) {
    const ulong p = base + (ulong)k * HIST_GROUP;
    if (p >= first + pixels) break;
    for (int h = 0; h < HISTS; ++h) ++rows[lid][bin_of(src, L, p, h, lo, hi, scale)];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  __global uint* out = counts + (ulong)get_group_id(0) * COUNTERS;
  for (int i = lid; i < COUNTERS; i += HIST_GROUP) {
    uint total = 0;
    for (int r = 0; r < HIST_GROUP; ++r) total += rows[r][i];
    out[i] = total;
  }
}

#endif

// Only what a program's counting calls is compiled (a runtime that hands out the binary for
// halo's disk cache builds every kernel in it): the reduce where partials are written, the
// range pass where values are not codes.
#if !TOTALS64
// The seeds' reducestatistic: one work-item per counter adds `groups` partial rows into the
// 64-bit totals.
__kernel void histogram_reduce(__global const uint* partials, __global ulong* totals,
                               const uint groups) {
  const uint i = get_global_id(0);
  if (i >= COUNTERS) return;
  ulong sum = totals[i];
  for (uint g = 0; g < groups; ++g) sum += partials[(ulong)g * COUNTERS + i];
  totals[i] = sum;
}
#endif

#if !CODES
// Min and max of the finite values of one float channel (or luma), for range=auto: one pair
// per work-group; the host folds the pairs.
__kernel __attribute__((reqd_work_group_size(HIST_GROUP, 1, 1))) void histogram_minmax(
    __global const sample_t* src, __global float* pairs, const ulong pixels, const int h,
    const ulong width, const ulong pitch, const ulong plane, const ulong origin) {
  const layout_t L = LAYOUT;
  __local float lmin[HIST_GROUP], lmax[HIST_GROUP];
  const int lid = get_local_id(0);
  float mn = INFINITY, mx = -INFINITY;
  for (ulong p = get_global_id(0); p < pixels; p += get_global_size(0)) {
    const float x = value_of(src, L, p, h);
    if (isfinite(x)) {
      mn = fmin(mn, x);
      mx = fmax(mx, x);
    }
  }
  lmin[lid] = mn;
  lmax[lid] = mx;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = HIST_GROUP / 2; s > 0; s /= 2) {
    if (lid < s) {
      lmin[lid] = fmin(lmin[lid], lmin[lid + s]);
      lmax[lid] = fmax(lmax[lid], lmax[lid + s]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    pairs[2 * get_group_id(0)] = lmin[0];
    pairs[2 * get_group_id(0) + 1] = lmax[0];
  }
}
#endif
