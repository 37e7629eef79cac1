// atrous: the edge-avoiding à-trous wavelet filter (Dammertz et al. 2010, with SVGF's normal
// weight), one pass per launch (lib/filters/guided/atrous.cpp). Pass i reads a 5x5 B3-spline kernel
// (1/16, 1/4, 3/8, 1/4, 1/16) with holes of step = 2^i pixels and weighs each tap by
//   colour  exp2(-|c_q - c_p|^2 * colour_inv) (colour_inv = log2(e) / sigma^2: exp2 is the
//           cheaper call), radiance_inv instead with `split` where the
//           pixel has no albedo to divide by (lib/filters/guided/atrous.cpp PassSetup)
//   normal  max(0, n_p . n_q)^sigma_n
//   depth   exp2(-|z_p - z_q| / (sigma_z * min(|z_p|, |z_q|))) (sigma_z given times ln 2)
// Geometry against no geometry weighs 0; two pixels without geometry weigh 1. Outline pixels
// (finish_outline) also take taps under the normal weight max(0, n_p . n_q). The first pass
// divides colour by albedo (demod), the last multiplies back (remod). Colour channels <= 4.
#pragma OPENCL FP_CONTRACT OFF

#include "guides.cl"

__constant float kSpline[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};

// SIGMA_N_WHOLE >= 0: sigma_n is that whole number and the normal weight is a power by
// squaring (lib/filters/guided/atrous.cpp whole_power, the same multiplications); else pow.
#ifndef SIGMA_N_WHOLE
#define SIGMA_N_WHOLE -1
#endif

inline float normal_weight(const float dot, const float sigma_n) {
  float x = fmax(0.0f, dot);
#if SIGMA_N_WHOLE >= 0
  float result = 1.0f;
  for (int n = SIGMA_N_WHOLE; n > 0; n >>= 1) {
    if (n & 1) result *= x;
    x *= x;
  }
  return result;
#else
  return pow(x, sigma_n);
#endif
}

// The geometry weight of tap q for centre p (1 without normal and depth guides), and in
// *relaxed the same with the normal weight's power 1 (outline pixels).
inline float geometry_weight(const surface_t p, const surface_t q, const int has_normal,
                             const int has_depth, const float sigma_n, const float sigma_z,
                             float* relaxed) {
  *relaxed = 1.0f;
  if (!has_normal && !has_depth) return 1.0f;
  const bool gp = is_geometry(p, has_normal, has_depth), gq = is_geometry(q, has_normal, has_depth);
  if (gp != gq) {
    *relaxed = 0.0f;
    return 0.0f;
  }
  if (!gp) return 1.0f;
  float w = 1.0f;
  if (has_normal) {
    const float dot = p.nx * q.nx + p.ny * q.ny + p.nz * q.nz;
    w = normal_weight(dot, sigma_n);
    *relaxed = fmax(0.0f, dot);
  }
  if (has_depth && p.z != q.z) {
    const float e = exp2(-fabs(p.z - q.z) / (sigma_z * fmin(fabs(p.z), fabs(q.z))));
    w *= e;
    *relaxed *= e;
  }
  return w;
}

// Whether the pixel has no albedo to divide by in any channel (atrous.cpp no_albedo).
inline bool no_albedo(__global const float* albedo, const ulong plane, const ulong at,
                      const float albedo_min) {
  for (int c = 0; c < 3; ++c)
    if (albedo[c * plane + at] >= albedo_min) return false;
  return true;
}

// Outline pixels (lib/filters/guided/atrous.cpp TapSums::finish_outline, the same operations): when
// the own-surface share cover / spread of the spatial weight is under `outline`, the sums
// under the relaxed normal weight are blended in by 1 - share / outline.
inline void finish_outline(const float cover, const float spread, const float outline,
                           const int channels, const float* relaxed, const float relaxed_wsum,
                           float* sum, float* wsum) {
  if (spread <= 0.0f) return;
  const float share = cover / spread;
  if (share >= outline) return;
  const float blend = 1.0f - share / outline;
  for (int c = 0; c < CHANNEL_COUNT(channels); ++c) sum[c] = fma(blend, relaxed[c], sum[c]);
  *wsum = fma(blend, relaxed_wsum, *wsum);
}

// The scalars in `a` (AtrousPassArgs, contract.h); a pass computes the image rows [first,
// last) of the strip. outline > 0: the outline rule above (passes with normals).
__kernel void atrous_pass(__global const float* src, __global float* dst,
                          __global const float* geometry, __global const float* albedo,
                          __global const float* remod_albedo, const AtrousPassArgs a) {
  STRIP_FIELDS(a.strip);
  const int channels = a.channels, step = a.step, border = a.border, has_normal = a.has_normal,
            has_depth = a.has_depth, split = a.split, demod = a.demod, remod = a.remod;
  const float colour_inv = a.colour_inv, radiance_inv = a.radiance_inv, sigma_n = a.sigma_n,
              sigma_z = a.sigma_z, albedo_min = a.albedo_min, outline = a.outline;
  const int x = get_global_id(0), y = first + (int)get_global_id(1);
  if (x >= width || y >= last) return;
  const ulong plane = (ulong)pitch * rows, at = (ulong)(y - y0) * pitch + x;
  const bool guided = has_normal || has_depth;
  surface_t p = {0.0f, 0.0f, 0.0f, 0.0f};
  if (guided) p = surface_at(geometry, at);
  float centre[MAX_CHANNELS], sum[MAX_CHANNELS], relaxed[MAX_CHANNELS];
  for (int c = 0; c < CHANNEL_COUNT(channels); ++c) {
    centre[c] = colour_at(src, albedo, plane, at, c, demod, albedo_min);
    sum[c] = relaxed[c] = 0.0f;
  }
  float wsum = 0.0f, relaxed_wsum = 0.0f, cover = 0.0f, spread = 0.0f;
  const float colour_weight =
      split && no_albedo(albedo, plane, at, albedo_min) ? radiance_inv : colour_inv;
  for (int j = 0; j < 5; ++j) {
    const int qy = strip_row(y + (j - 2) * step, y0, rows, height, border);
    if (qy < 0) continue;
    for (int i = 0; i < 5; ++i) {
      const int qx = border_index(x + (i - 2) * step, width, border);
      if (qx < 0) continue;
      const ulong q_at = (ulong)qy * pitch + qx;
      float v[MAX_CHANNELS];
      const float d2 = read_tap(src, albedo, plane, q_at, channels, demod, albedo_min, centre, v);
      const float spatial = kSpline[i] * kSpline[j];
      float w = spatial * exp2(-d2 * colour_weight);
      if (guided) {
        float relaxed_geometry;
        const float g = geometry_weight(p, surface_at(geometry, q_at), has_normal,
                                        has_depth, sigma_n, sigma_z, &relaxed_geometry);
        if (outline > 0.0f) {
          if (i != 2 || j != 2) {
            cover = fma(spatial, g, cover);
            spread += spatial;
          }
          accumulate(w * relaxed_geometry, v, channels, relaxed, &relaxed_wsum);
        }
        w *= g;
      }
      accumulate(w, v, channels, sum, &wsum);
    }
  }
  if (outline > 0.0f)
    finish_outline(cover, spread, outline, channels, relaxed, relaxed_wsum, sum, &wsum);
  store_normalised(dst, remod_albedo, plane, at, channels, sum, wsum, remod, albedo_min);
}
