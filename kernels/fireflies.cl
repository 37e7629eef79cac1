// clamp_fireflies: the guided filters' first step (lib/filters/guided/fireflies.cpp, the same
// operations). A pixel whose luminance is over `ratio` times the brightest of its 8
// neighbours' (the border rule applied; copies of the pixel itself left out) is scaled down
// to that bound; luminance is Rec. 709's on the first 3 of 3 or 4 planes (a fourth is alpha),
// the first plane's otherwise, of the colour divided by the albedo when demodulating. The
// scale applies to those colour planes as given (never alpha), so demodulation downstream is
// unchanged.
#pragma OPENCL FP_CONTRACT OFF

#include "guides.cl"

inline float luminance_at(__global const float* src, __global const float* albedo,
                          const ulong plane, const ulong at, const int channels, const int demod,
                          const float albedo_min) {
  if (GUIDED_COLOURS(CHANNEL_COUNT(channels)) == 3)
    return 0.2126f * colour_at(src, albedo, plane, at, 0, demod, albedo_min) +
           0.7152f * colour_at(src, albedo, plane, at, 1, demod, albedo_min) +
           0.0722f * colour_at(src, albedo, plane, at, 2, demod, albedo_min);
  return colour_at(src, albedo, plane, at, 0, demod, albedo_min);
}

#define FF_W 32  // work-group: FF_W x FF_H pixels, their luminance tile one wider each side
#define FF_H 8

// Rows: STRIP_ARGS in common.cl; computes the image rows [first, last) of dst's colour planes.
// Each work-group computes the luminance of its pixels and their one-pixel ring once, into
// local memory (at the positions the border rule maps to), instead of nine times a pixel.
__kernel __attribute__((reqd_work_group_size(FF_W, FF_H, 1))) void clamp_fireflies(
    __global const float* src, __global float* dst, __global const float* albedo,
    const StripArgs strip, const int channels, const int border,
    const int demod, const float albedo_min, const float ratio) {
  STRIP_FIELDS(strip);
  __local float tile[FF_H + 2][FF_W + 2];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int left = (int)get_group_id(0) * FF_W - 1, top = first + (int)get_group_id(1) * FF_H - 1;
  const ulong plane = (ulong)pitch * rows;
  for (int i = ly * FF_W + lx; i < (FF_W + 2) * (FF_H + 2); i += FF_W * FF_H) {
    const int tx = i % (FF_W + 2), ty = i / (FF_W + 2);
    const int qx = border_index(left + tx, width, border);
    const int qy = strip_row(min(top + ty, last), y0, rows, height, border);
    tile[ty][tx] = qx < 0 || qy < 0 ? 0.0f
                                    : luminance_at(src, albedo, plane, (ulong)qy * pitch + qx,
                                                   channels, demod, albedo_min);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int x = left + 1 + lx, y = top + 1 + ly;
  if (x >= width || y >= last) return;
  const ulong at = (ulong)(y - y0) * pitch + x;
  const float centre = tile[ly + 1][lx + 1];
  float brightest = 0.0f;
  bool any = false;
  for (int dy = -1; dy <= 1; ++dy) {
    const int qy = strip_row(y + dy, y0, rows, height, border);
    if (qy < 0) continue;
    for (int dx = -1; dx <= 1; ++dx) {
      const int qx = border_index(x + dx, width, border);
      // Neither the pixel nor a copy of it (clamp at the image's edges).
      if (qx < 0 || (qx == x && qy == y - y0)) continue;
      const float l = tile[ly + 1 + dy][lx + 1 + dx];
      brightest = any ? fmax(brightest, l) : l;
      any = true;
    }
  }
  float scale = 1.0f;
  if (any) {
    const float bound = ratio * brightest;
    if (centre > 0.0f && centre > bound) scale = fmax(bound, 0.0f) / centre;
  }
  const int colours = GUIDED_COLOURS(CHANNEL_COUNT(channels));  // alpha, if any, is not scaled
  UNROLL_CHANNELS
  for (int c = 0; c < CHANNEL_COUNT(channels); ++c)
    dst[c * plane + at] = c < colours ? src[c * plane + at] * scale : src[c * plane + at];
}
