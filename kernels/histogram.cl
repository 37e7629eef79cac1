// Exact histograms. Every pixel maps to one bin (or to one of the apart counters) by integer
// arithmetic for integer data and by correctly rounded float operations for float data, the
// same steps as lib/filters/histogram.cpp, so device and reference agree bin for bin.
//
// Input (INPUT): 1 = 8-bit interleaved, 2 = 16-bit interleaved, 3 = float planar (PLANE_SIZE
// floats per channel, rows of PITCH, WIDTH wide). CODES = 1 when float data holds integer
// codes (8/16-bit sources after filters): they are quantised as writing would (MAX_CODE).
// Mode (MODE): 0 one channel CHANNEL, 1 luma (Rec.601), 2 luma709, 3 rgb (3 x BINS counters).
// Counters: BINS per histogram (x3 for rgb), then under, over, NaN, Inf (float binning only).
//
// Strategies, one kernel each, all writing 32-bit partial counts that histogram_reduce adds
// into 64-bit totals (launches are split so no 32-bit counter can overflow):
//   histogram_global   atomics straight into one global histogram
//   histogram_local    per-group sub-histograms in local memory, runs of equal bins counted
//                      before each atomic (a constant image costs one atomic per run)
//   histogram_private  the seeds' exclusive per-work-item counters (calcstatistic): each
//                      work-item owns a row of local counters, no atomics; per-group partials
//                      go to global memory for the reduce kernel (reducestatistic)
// Defines: INPUT, CHANNELS, MODE, CHANNEL, BINS, CODES, MAX_CODE, PIXELS_PER_ITEM, GROUP,
//   SUBHISTS (histogram_local copies), WIDTH, PITCH, PLANE_SIZE, and METHOD (0 global,
//   1 local, 2 private): only that counting kernel is compiled, since the others' local
//   arrays may not fit the device.
#pragma OPENCL FP_CONTRACT OFF

#ifndef BINS
#define BINS 256
#endif
#ifndef INPUT
#define INPUT 1
#endif
#ifndef CHANNELS
#define CHANNELS 1
#endif
#ifndef MODE
#define MODE 0
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
#ifndef PIXELS_PER_ITEM
#define PIXELS_PER_ITEM 16
#endif
#ifndef GROUP
#define GROUP 256
#endif
#ifndef SUBHISTS
#define SUBHISTS 1
#endif
#ifndef WIDTH
#define WIDTH 1
#endif
#ifndef PITCH
#define PITCH 32
#endif
#ifndef PLANE_SIZE
#define PLANE_SIZE 32
#endif
#ifndef METHOD
#define METHOD 1
#endif

#define HISTS (MODE == 3 ? 3 : 1)
#define COUNTERS (HISTS * BINS + 4)
#define UNDER (HISTS * BINS)
#define OVER (UNDER + 1)
#define NANS (UNDER + 2)
#define INFS (UNDER + 3)

#if INPUT == 1
typedef uchar sample_t;
#elif INPUT == 2
typedef ushort sample_t;
#else
typedef float sample_t;
#endif

// Sample c of pixel p as an integer code (integer data) or a float (float data).
#if INPUT == 3
inline float raw(__global const sample_t* src, const ulong p, const int c) {
  const ulong y = p / WIDTH, x = p % WIDTH;
  return src[c * (ulong)PLANE_SIZE + y * PITCH + x];
}
#else
inline float raw(__global const sample_t* src, const ulong p, const int c) {
  return (float)src[p * CHANNELS + c];
}
#endif

// The float histogrammed for pixel p, sub-histogram h (luma sums left to right, unfused).
inline float value_of(__global const sample_t* src, const ulong p, const int h) {
#if MODE == 1
  return 0.299f * raw(src, p, 0) + 0.587f * raw(src, p, 1) + 0.114f * raw(src, p, 2);
#elif MODE == 2
  return 0.2126f * raw(src, p, 0) + 0.7152f * raw(src, p, 1) + 0.0722f * raw(src, p, 2);
#elif MODE == 3
  return raw(src, p, h);
#else
  return raw(src, p, CHANNEL);
#endif
}

#if CODES
inline uint code(__global const sample_t* src, const ulong p, const int c) {
#if INPUT == 3
  const float v = raw(src, p, c);
  return isnan(v) ? 0u : (uint)fmin(fmax(floor(v * (float)MAX_CODE + 0.5f), 0.0f), (float)MAX_CODE);
#else
  return (uint)src[p * CHANNELS + c];
#endif
}

// Integer codes 0..MAX_CODE fall into BINS equal bins.
inline uint bin_of_code(const uint v) { return (uint)(((ulong)v * BINS) / (MAX_CODE + 1)); }

inline uint bin_of(__global const sample_t* src, const ulong p, const int h, const float lo,
                   const float hi, const float scale) {
#if MODE == 1
  const uint v = (299u * code(src, p, 0) + 587u * code(src, p, 1) + 114u * code(src, p, 2)) / 1000u;
#elif MODE == 2
  const uint v = (2126u * code(src, p, 0) + 7152u * code(src, p, 1) + 722u * code(src, p, 2)) / 10000u;
#elif MODE == 3
  const uint v = code(src, p, h);
#else
  const uint v = code(src, p, CHANNEL);
#endif
  return h * BINS + bin_of_code(v);
}
#else
// Float data: floor((x - lo) * scale) with scale = BINS / (hi - lo) rounded to float on the
// host; x == hi lands in the last bin; outside [lo, hi], NaN and Inf go to their counters.
inline uint bin_of(__global const sample_t* src, const ulong p, const int h, const float lo,
                   const float hi, const float scale) {
  const float x = value_of(src, p, h);
  if (isnan(x)) return NANS;
  if (isinf(x)) return INFS;
  if (x < lo) return UNDER;
  if (x > hi) return OVER;
  return h * BINS + min((uint)floor((x - lo) * scale), (uint)(BINS - 1));
}
#endif

#if METHOD == 0
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void histogram_global(
    __global const sample_t* src, __global uint* counts, const ulong first, const ulong pixels,
    const float lo, const float hi, const float scale) {
  const ulong base = first + (ulong)get_group_id(0) * GROUP * PIXELS_PER_ITEM + get_local_id(0);
  for (int k = 0; k < PIXELS_PER_ITEM; ++k) {
    const ulong p = base + (ulong)k * GROUP;
    if (p >= first + pixels) break;
    for (int h = 0; h < HISTS; ++h) atomic_inc(&counts[bin_of(src, p, h, lo, hi, scale)]);
  }
}

#endif

#if METHOD == 1
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void histogram_local(
    __global const sample_t* src, __global uint* counts, const ulong first, const ulong pixels,
    const float lo, const float hi, const float scale) {
  __local uint sub[SUBHISTS][COUNTERS];
  const int lid = get_local_id(0);
  for (int i = lid; i < SUBHISTS * COUNTERS; i += GROUP) (&sub[0][0])[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  __local uint* mine = sub[lid % SUBHISTS];
  const ulong base = first + (ulong)get_group_id(0) * GROUP * PIXELS_PER_ITEM + lid;
  for (int h = 0; h < HISTS; ++h) {
    uint run_bin = 0, run = 0;
    for (int k = 0; k < PIXELS_PER_ITEM; ++k) {
      const ulong p = base + (ulong)k * GROUP;
      if (p >= first + pixels) break;
      const uint b = bin_of(src, p, h, lo, hi, scale);
      if (b != run_bin && run > 0) {
        atomic_add(&mine[run_bin], run);
        run = 0;
      }
      run_bin = b;
      ++run;
    }
    if (run > 0) atomic_add(&mine[run_bin], run);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = lid; i < COUNTERS; i += GROUP) {
    uint total = 0;
    for (int s = 0; s < SUBHISTS; ++s) total += sub[s][i];
    if (total) atomic_add(&counts[i], total);
  }
}

#endif

#if METHOD == 2
// The seeds' calcstatistic: GROUP work-items, each with an exclusive row of counters.
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void histogram_private(
    __global const sample_t* src, __global uint* partials, const ulong first, const ulong pixels,
    const float lo, const float hi, const float scale) {
  __local uint rows[GROUP][COUNTERS];
  const int lid = get_local_id(0);
  for (int i = 0; i < COUNTERS; ++i) rows[lid][i] = 0;
  const ulong base = first + (ulong)get_group_id(0) * GROUP * PIXELS_PER_ITEM + lid;
  for (int k = 0; k < PIXELS_PER_ITEM; ++k) {
    const ulong p = base + (ulong)k * GROUP;
    if (p >= first + pixels) break;
    for (int h = 0; h < HISTS; ++h) ++rows[lid][bin_of(src, p, h, lo, hi, scale)];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  __global uint* out = partials + (ulong)get_group_id(0) * COUNTERS;
  for (int i = lid; i < COUNTERS; i += GROUP) {
    uint total = 0;
    for (int r = 0; r < GROUP; ++r) total += rows[r][i];
    out[i] = total;
  }
}

#endif

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

// Min and max of the finite values of one float channel (or luma), for range=auto: one pair
// per work-group; the host folds the pairs.
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void histogram_minmax(
    __global const sample_t* src, __global float* pairs, const ulong pixels, const int h) {
  __local float lmin[GROUP], lmax[GROUP];
  const int lid = get_local_id(0);
  float mn = INFINITY, mx = -INFINITY;
  for (ulong p = get_global_id(0); p < pixels; p += get_global_size(0)) {
    const float x = value_of(src, p, h);
    if (isfinite(x)) {
      mn = fmin(mn, x);
      mx = fmax(mx, x);
    }
  }
  lmin[lid] = mn;
  lmax[lid] = mx;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = GROUP / 2; s > 0; s /= 2) {
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
