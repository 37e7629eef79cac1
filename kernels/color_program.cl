// A colour transform as its library computes it on GPUs: OpenColorIO's shader for the
// processor (HLSL, made OpenCL C by lib/filters/colour/ocio.cpp) defines
// `float4 ocio_transform(float4, __global const float* textures)`, put in place of the marker
// below, with its LUT textures in one buffer; this file gives it what
// HLSL has and OpenCL C lacks, and runs it on every pixel (color_pixel.cl). Alpha, if any, is
// copied by the host.
#include "color_pixel.cl"

// HLSL's matrices as OpenColorIO writes them: float4x4 with 16 values, row by row, and
// mul(row vector, matrix); lib/filters/colour/ocio.cpp names them halo_make_float4x4 and halo_mul
// (OpenCL C reserves float4x4: NVIDIA's compiler takes no macro of that name).
typedef struct {
  float4 r0, r1, r2, r3;
} halo_float4x4;

inline halo_float4x4 halo_make_float4x4(float a0, float a1, float a2, float a3, float a4, float a5,
                                        float a6, float a7, float a8, float a9, float a10,
                                        float a11, float a12, float a13, float a14, float a15) {
  halo_float4x4 m;
  m.r0 = (float4)(a0, a1, a2, a3);
  m.r1 = (float4)(a4, a5, a6, a7);
  m.r2 = (float4)(a8, a9, a10, a11);
  m.r3 = (float4)(a12, a13, a14, a15);
  return m;
}

inline float4 halo_mul(const float4 v, const halo_float4x4 m) {
  return v.x * m.r0 + v.y * m.r1 + v.z * m.r2 + v.w * m.r3;
}

// HLSL's textures as OpenColorIO uses them for LUTs (Texture.Sample with a linear or nearest
// sampler, clamped at the edges), on the data the host put in one buffer: `t` points at the
// texture's first sample, texels hold `channels` floats (1: red only), x varies fastest.
inline float4 halo_texel(__global const float* t, const int channels, const int at) {
  const int i = at * channels;
  return channels == 1 ? (float4)(t[i], 0.0f, 0.0f, 1.0f)
                       : (float4)(t[i], t[i + 1], t[i + 2], 1.0f);
}

// Texel positions and weights along one axis of n texels for the coordinate u (0..1).
inline void halo_axis(const float u, const int n, const bool linear, int* i0, int* i1, float* f) {
  if (!linear) {
    *i0 = *i1 = clamp((int)floor(u * (float)n), 0, n - 1);
    *f = 0.0f;
    return;
  }
  const float x = u * (float)n - 0.5f;
  const float base = floor(x);
  *f = x - base;
  *i0 = clamp((int)base, 0, n - 1);
  *i1 = clamp((int)base + 1, 0, n - 1);
}

inline float4 halo_sample2d(__global const float* t, const int w, const int h, const int channels,
                            const bool linear, const float2 p) {
  int x0, x1, y0, y1;
  float fx, fy;
  halo_axis(p.x, w, linear, &x0, &x1, &fx);
  halo_axis(p.y, h, linear, &y0, &y1, &fy);
  const float4 top =
      mix(halo_texel(t, channels, y0 * w + x0), halo_texel(t, channels, y0 * w + x1), fx);
  const float4 bottom =
      mix(halo_texel(t, channels, y1 * w + x0), halo_texel(t, channels, y1 * w + x1), fx);
  return mix(top, bottom, fy);
}

inline float4 halo_sample3d(__global const float* t, const int n, const bool linear,
                            const float3 p) {
  int x0, x1, y0, y1, z0, z1;
  float fx, fy, fz;
  halo_axis(p.x, n, linear, &x0, &x1, &fx);
  halo_axis(p.y, n, linear, &y0, &y1, &fy);
  halo_axis(p.z, n, linear, &z0, &z1, &fz);
  float4 plane[2];
  for (int k = 0; k < 2; ++k) {
    const int z = k ? z1 : z0;
    const float4 a =
        mix(halo_texel(t, 3, (z * n + y0) * n + x0), halo_texel(t, 3, (z * n + y0) * n + x1), fx);
    const float4 b =
        mix(halo_texel(t, 3, (z * n + y1) * n + x0), halo_texel(t, 3, (z * n + y1) * n + x1), fx);
    plane[k] = mix(a, b, fy);
  }
  return mix(plane[0], plane[1], fz);
}

// lerp with t exactly 0 or 1 is a choice, which OpenColorIO's CPU code makes as one: a + t (b -
// a) would make NaN of an infinite b it does not choose (ACES's glow on black: GlowMid / 0).
#define lerp(a, b, t) ((t) == 0.0f ? (a) : (t) == 1.0f ? (b) : mix(a, b, t))
#define saturate(x) clamp(x, 0.0f, 1.0f)
#define frac(x) ((x)-floor(x))

/* generated code */
#ifndef HALO_GENERATED
// The file by itself (no code put in): the identity, so that it compiles standalone.
inline float4 ocio_transform(const float4 v, __global const float* halo_textures) {
  return v;
}
#endif

__kernel void color_program(__global const float* in, __global float* out, const StripArgs strip,
                            const int colours, const float2 bounds,
                            __global const float* textures) {
  STRIP_FIELDS(strip);
  COLOUR_PROLOGUE
  const float4 o = ocio_transform((float4)(v[0], v[1], v[2], 1.0f), textures);
  STORE(0, o.x);
  STORE(1, o.y);
  STORE(2, o.z);
}
