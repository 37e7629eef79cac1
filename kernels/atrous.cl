// atrous: the edge-avoiding à-trous wavelet filter (Dammertz et al. 2010, with SVGF's normal
// weight), one pass per launch (lib/filters/atrous.cpp). Pass i reads a 5x5 B3-spline kernel
// (1/16, 1/4, 3/8, 1/4, 1/16) with holes of step = 2^i pixels and weighs each tap by
//   colour  exp(-|c_q - c_p|^2 * colour_inv)
//   normal  max(0, n_p . n_q)^sigma_n
//   depth   exp(-|z_p - z_q| / (sigma_z * min(|z_p|, |z_q|)))
// Geometry against no geometry weighs 0; two pixels without geometry weigh 1. The first pass
// divides colour by albedo (demod), the last multiplies back (remod). Colour channels <= 4.
#pragma OPENCL FP_CONTRACT OFF

#include "guides.cl"

__constant float kSpline[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};

// SIGMA_N_WHOLE >= 0: sigma_n is that whole number and the normal weight is a power by
// squaring (lib/filters/atrous.cpp whole_power, the same multiplications); else pow.
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

// The geometry weight of tap q for centre p (1 without normal and depth guides).
inline float geometry_weight(const surface_t p, const surface_t q, const int has_normal,
                             const int has_depth, const float sigma_n, const float sigma_z) {
  if (!has_normal && !has_depth) return 1.0f;
  const bool gp = is_geometry(p, has_normal, has_depth), gq = is_geometry(q, has_normal, has_depth);
  if (gp != gq) return 0.0f;
  if (!gp) return 1.0f;
  float w = 1.0f;
  if (has_normal) w = normal_weight(p.nx * q.nx + p.ny * q.ny + p.nz * q.nz, sigma_n);
  if (has_depth && p.z != q.z) w *= exp(-fabs(p.z - q.z) / (sigma_z * fmin(fabs(p.z), fabs(q.z))));
  return w;
}

// Rows: STRIP_ARGS in common.cl; a pass computes the image rows [first, last).
__kernel void atrous_pass(__global const float* src, __global float* dst,
                          __global const float* geometry, __global const float* albedo,
                          __global const float* remod_albedo, const int width, const int pitch,
                          STRIP_ARGS, const int channels,
                          const int step, const int border, const int has_normal,
                          const int has_depth, const float colour_inv, const float sigma_n,
                          const float sigma_z, const int demod, const int remod,
                          const float albedo_min) {
  const int x = get_global_id(0), y = first + (int)get_global_id(1);
  if (x >= width || y >= last) return;
  const ulong plane = (ulong)pitch * rows, at = (ulong)(y - y0) * pitch + x;
  const bool guided = has_normal || has_depth;
  surface_t p = {0.0f, 0.0f, 0.0f, 0.0f};
  if (guided) p = surface_at(geometry, plane, at);
  float centre[MAX_CHANNELS], sum[MAX_CHANNELS];
  for (int c = 0; c < CHANNEL_COUNT(channels); ++c) {
    centre[c] = colour_at(src, albedo, plane, at, c, demod, albedo_min);
    sum[c] = 0.0f;
  }
  float wsum = 0.0f;
  for (int j = 0; j < 5; ++j) {
    const int qy = strip_row(y + (j - 2) * step, y0, rows, height, border);
    if (qy < 0) continue;
    for (int i = 0; i < 5; ++i) {
      const int qx = border_index(x + (i - 2) * step, width, border);
      if (qx < 0) continue;
      const ulong q_at = (ulong)qy * pitch + qx;
      float v[MAX_CHANNELS];
      const float d2 = read_tap(src, albedo, plane, q_at, channels, demod, albedo_min, centre, v);
      float w = kSpline[i] * kSpline[j] * exp(-d2 * colour_inv);
      if (guided)
        w *= geometry_weight(p, surface_at(geometry, plane, q_at), has_normal, has_depth, sigma_n,
                             sigma_z);
      accumulate(w, v, channels, sum, &wsum);
    }
  }
  store_normalised(dst, remod_albedo, plane, at, channels, sum, wsum, remod, albedo_min);
}
