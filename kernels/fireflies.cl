// clamp_fireflies: the guided filters' first step (lib/filters/fireflies.cpp, the same
// operations). A pixel whose luminance is over `ratio` times the brightest of its 8
// neighbours' (the border rule applied; copies of the pixel itself left out) is scaled down
// to that bound; luminance is Rec. 709's on 3 colour channels
// (their mean on other counts), of the colour divided by the albedo when demodulating. The
// scale applies to the colour as given, so demodulation downstream is unchanged.
#pragma OPENCL FP_CONTRACT OFF

#include "guides.cl"

inline float luminance_at(__global const float* src, __global const float* albedo,
                          const ulong plane, const ulong at, const int channels, const int demod,
                          const float albedo_min) {
  if (CHANNEL_COUNT(channels) == 3)
    return 0.2126f * colour_at(src, albedo, plane, at, 0, demod, albedo_min) +
           0.7152f * colour_at(src, albedo, plane, at, 1, demod, albedo_min) +
           0.0722f * colour_at(src, albedo, plane, at, 2, demod, albedo_min);
  float sum = 0.0f;
  UNROLL_CHANNELS
  for (int c = 0; c < CHANNEL_COUNT(channels); ++c)
    sum += colour_at(src, albedo, plane, at, c, demod, albedo_min);
  return sum / (float)CHANNEL_COUNT(channels);
}

// Rows: STRIP_ARGS in common.cl; computes the image rows [first, last) of dst's colour planes.
__kernel void clamp_fireflies(__global const float* src, __global float* dst,
                              __global const float* albedo, const int width, const int pitch,
                              STRIP_ARGS, const int channels, const int border, const int demod,
                              const float albedo_min, const float ratio) {
  const int x = get_global_id(0), y = first + (int)get_global_id(1);
  if (x >= width || y >= last) return;
  const ulong plane = (ulong)pitch * rows, at = (ulong)(y - y0) * pitch + x;
  const float centre = luminance_at(src, albedo, plane, at, channels, demod, albedo_min);
  float brightest = 0.0f;
  bool any = false;
  for (int dy = -1; dy <= 1; ++dy) {
    const int qy = strip_row(y + dy, y0, rows, height, border);
    if (qy < 0) continue;
    for (int dx = -1; dx <= 1; ++dx) {
      const int qx = border_index(x + dx, width, border);
      // Neither the pixel nor a copy of it (clamp at the image's edges).
      if (qx < 0 || (qx == x && qy == y - y0)) continue;
      const float l =
          luminance_at(src, albedo, plane, (ulong)qy * pitch + qx, channels, demod, albedo_min);
      brightest = any ? fmax(brightest, l) : l;
      any = true;
    }
  }
  float scale = 1.0f;
  if (any) {
    const float bound = ratio * brightest;
    if (centre > 0.0f && centre > bound) scale = fmax(bound, 0.0f) / centre;
  }
  UNROLL_CHANNELS
  for (int c = 0; c < CHANNEL_COUNT(channels); ++c) dst[c * plane + at] = src[c * plane + at] * scale;
}
