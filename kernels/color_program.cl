// A colour transform as its library computes it on GPUs: OpenColorIO's shader for the
// processor (HLSL, made OpenCL C by lib/filters/ocio.cpp) defines
// `float4 ocio_transform(float4)`, put in place of the marker below; this file gives it what
// HLSL has and OpenCL C lacks, and runs it on every pixel (color_pixel.cl). Alpha, if any, is
// copied by the host.
#include "color_pixel.cl"

// HLSL's matrices as OpenColorIO writes them: float4x4 with 16 values, row by row, and
// mul(row vector, matrix).
typedef struct {
  float4 r0, r1, r2, r3;
} halo_float4x4;

inline halo_float4x4 halo_make_float4x4(float a0, float a1, float a2, float a3, float a4,
                                        float a5, float a6, float a7, float a8, float a9,
                                        float a10, float a11, float a12, float a13, float a14,
                                        float a15) {
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

#define float4x4(...) halo_make_float4x4(__VA_ARGS__)
#define mul(v, m) halo_mul(v, m)
// lerp with t exactly 0 or 1 is a choice, which OpenColorIO's CPU code makes as one: a + t (b -
// a) would make NaN of an infinite b it does not choose (ACES's glow on black: GlowMid / 0).
#define lerp(a, b, t) ((t) == 0.0f ? (a) : (t) == 1.0f ? (b) : mix(a, b, t))
#define saturate(x) clamp(x, 0.0f, 1.0f)
#define frac(x) ((x) - floor(x))

/* generated code */
#ifndef HALO_GENERATED
// The file by itself (no code put in): the identity, so that it compiles standalone.
inline float4 ocio_transform(const float4 v) {
  return v;
}
#endif

__kernel void color_program(__global const float* in, __global float* out, const int width,
                            const int pitch, STRIP_ARGS, const int colours,
                            const float2 bounds) {
  COLOUR_PROLOGUE
  const float4 o = ocio_transform((float4)(v[0], v[1], v[2], 1.0f));
  STORE(0, o.x);
  STORE(1, o.y);
  STORE(2, o.z);
}
