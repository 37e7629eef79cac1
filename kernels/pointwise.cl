// Sample-by-sample stages (lib/filters/colour/pointwise.cpp): the sRGB transfer curve both ways,
// and alpha premultiplication both ways. One work-item per pixel of the image rows [first, last)
// and colour plane; `alpha_plane` is the alpha channel's plane, or -1.
#pragma OPENCL FP_CONTRACT OFF

#include "common.cl"

// sRGB's transfer curve (IEC 61966-2-1), as lib/filters/colour/pointwise.cpp computes it.
inline float to_linear(const float v, const float a) {
  return v <= 0.04045f ? v / 12.92f : pow((v + 0.055f) / 1.055f, 2.4f);
}
inline float to_srgb(const float v, const float a) {
  return v <= 0.0031308f ? v * 12.92f : 1.055f * pow(v, 1.0f / 2.4f) - 0.055f;
}
inline float premultiplied(const float v, const float a) {
  return v * a;
}
inline float unpremultiplied(const float v, const float a) {
  return a > 0.0f ? v / a : 0.0f;
}

#define POINTWISE(name, fn)                                                                \
  __kernel void name(__global const float* in, __global float* out, const StripArgs strip, \
                     const int alpha_plane) {                                              \
    STRIP_FIELDS(strip);                                                                   \
    const int x = get_global_id(0);                                                        \
    const int y = first + get_global_id(1);                                                \
    if (x >= width || y >= last) return;                                                   \
    const size_t plane = (size_t)pitch * rows;                                             \
    const size_t at = (size_t)(y - y0) * pitch + x;                                        \
    const float a = alpha_plane < 0 ? 1.0f : in[alpha_plane * plane + at];                 \
    const size_t c = get_global_id(2) * plane + at;                                        \
    out[c] = fn(in[c], a);                                                                 \
  }

// A pure power curve both ways (a PNG's gAMA under --linear): |v|^exponent, sign kept.
__kernel void power(__global const float* in, __global float* out, const StripArgs strip,
                    const int alpha_plane, const float exponent) {
  STRIP_FIELDS(strip);
  const int x = get_global_id(0);
  const int y = first + get_global_id(1);
  if (x >= width || y >= last) return;
  const size_t c = get_global_id(2) * (size_t)pitch * rows + (size_t)(y - y0) * pitch + x;
  const float v = in[c];
  out[c] = v < 0.0f ? -pow(-v, exponent) : pow(v, exponent);
}

POINTWISE(linear, to_linear)
POINTWISE(srgb, to_srgb)
POINTWISE(premultiply, premultiplied)
POINTWISE(unpremultiply, unpremultiplied)
