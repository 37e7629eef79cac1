// What the edge-aware filters (bilateral.cl, atrous.cl) share: the geometry guides and the
// discontinuity test. Must match lib/filters/guided/guides.hpp operation for operation (the
// flags are compared bit for bit).
//
// Geometry buffer: 4 floats a pixel (unit normal x, y, z, then depth), interleaved so a tap
// is one 16-byte load (the guided filters read the geometry of every tap; as 4 planes it took
// 4 loads). A pixel is geometry unless its normal is (0,0,0) or its depth is NaN; a buffer
// that was not given reads as 0 and its test is skipped (has_normal, has_depth).
#ifndef HALO_GUIDES_CL
#define HALO_GUIDES_CL
#pragma OPENCL FP_CONTRACT OFF

#include "common.cl"

typedef struct {
  float nx, ny, nz, z;
} surface_t;

inline surface_t surface_at(__global const float* geometry, const ulong at) {
  // A float4 is 16-byte aligned, so this is one 128-bit load (vload4 promises only 4 bytes).
  const float4 g = ((__global const float4*)geometry)[at];
  surface_t s = {g.x, g.y, g.z, g.w};
  return s;
}

inline bool is_geometry(const surface_t s, const int has_normal, const int has_depth) {
  if (has_normal && s.nx == 0.0f && s.ny == 0.0f && s.nz == 0.0f) return false;
  return !(has_depth && isnan(s.z));
}

// A discontinuity between neighbours a and b: geometry against no geometry, normals more
// than the threshold angle apart (dot < cos_angle), or depths differing by more than dz
// times the nearer one (equal depths, infinite ones included, never differ).
inline bool is_edge(const surface_t a, const surface_t b, const float cos_angle, const float dz,
                    const int has_normal, const int has_depth) {
  const bool ga = is_geometry(a, has_normal, has_depth), gb = is_geometry(b, has_normal, has_depth);
  if (ga != gb) return true;
  if (!ga) return false;
  if (has_normal && a.nx * b.nx + a.ny * b.ny + a.nz * b.nz < cos_angle) return true;
  if (has_depth && a.z != b.z && fabs(a.z - b.z) > dz * fmin(fabs(a.z), fabs(b.z))) return true;
  return false;
}

// Albedo demodulation (lib/filters/guided/guides.hpp demodulating_albedo).
inline float demodulating_albedo(const float albedo, const float albedo_min) {
  return albedo >= albedo_min ? albedo : 1.0f;
}

// Taps of the guided filters: up to MAX_CHANNELS colour planes of `plane` floats, divided by
// the albedo (same layout) when demodulating. The host defines CHANNELS (1..4), so the loops
// over channels unroll and the per-pixel arrays stay in registers; with a count only known at
// run time they would live in (slow, off-chip) private memory.
// Without CHANNELS (the flags-only build) there is nothing to unroll, and asking would make
// the compiler warn on every build.
#define MAX_CHANNELS 4
#ifdef CHANNELS
#define CHANNEL_COUNT(runtime) CHANNELS
#define UNROLL_CHANNELS _Pragma("unroll")
#else
#define CHANNEL_COUNT(runtime) (runtime)
#define UNROLL_CHANNELS
#endif

inline float colour_at(__global const float* src, __global const float* albedo, const ulong plane,
                       const ulong at, const int c, const int demod, const float albedo_min) {
  const float v = src[c * plane + at];
  // A fourth plane is alpha filtered with the colour (associated alpha): never demodulated.
  return demod && c < 3 ? v / demodulating_albedo(albedo[c * plane + at], albedo_min) : v;
}

// Reads the tap at `at` into v; returns its squared colour distance from `centre`.
inline float read_tap(__global const float* src, __global const float* albedo, const ulong plane,
                      const ulong at, const int channels, const int demod, const float albedo_min,
                      const float* centre, float* v) {
  float d2 = 0.0f;
  UNROLL_CHANNELS
  for (int c = 0; c < CHANNEL_COUNT(channels); ++c) {
    v[c] = colour_at(src, albedo, plane, at, c, demod, albedo_min);
    const float d = v[c] - centre[c];
    d2 = fma(d, d, d2);
  }
  return d2;
}

inline void accumulate(const float w, const float* v, const int channels, float* sum, float* wsum) {
  *wsum += w;
  UNROLL_CHANNELS
  for (int c = 0; c < CHANNEL_COUNT(channels); ++c) sum[c] = fma(w, v[c], sum[c]);
}

// sum / wsum, multiplied back by `albedo` (the guide, or its smoothed copy) at `at` when
// remodulating (lib/filters/guided/guides.hpp store_normalised).
inline void store_normalised(__global float* dst, __global const float* albedo, const ulong plane,
                             const ulong at, const int channels, const float* sum, const float wsum,
                             const int remod, const float albedo_min) {
  UNROLL_CHANNELS
  for (int c = 0; c < CHANNEL_COUNT(channels); ++c) {
    const float v = sum[c] / wsum;
    dst[c * plane + at] =
        remod && c < 3 ? v * demodulating_albedo(albedo[c * plane + at], albedo_min) : v;
  }
}

#endif
