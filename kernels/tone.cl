// Tone and value stages (lib/filters/colour/tone.cpp): the same formulas in the same order, so each
// result equals the reference's bit for bit. One work-item per pixel of the image rows
// [first, last): the colour planes are 0 .. colours-1; alpha, if any, is copied by the host.
#pragma OPENCL FP_CONTRACT OFF

#include "common.cl"

// v * k[c] (exposure, mul) or v + k[c] (add); k holds one value per colour plane.
__kernel void tone_mul(__global const float* in, __global float* out, const StripArgs strip,
                       const int colours, __constant const float* k) {
  STRIP_FIELDS(strip);
  PIXEL_PROLOGUE
  for (int c = 0; c < colours; ++c) out[c * plane + at] = in[c * plane + at] * k[c];
}

__kernel void tone_add(__global const float* in, __global float* out, const StripArgs strip,
                       const int colours, __constant const float* k) {
  STRIP_FIELDS(strip);
  PIXEL_PROLOGUE
  for (int c = 0; c < colours; ++c) out[c * plane + at] = in[c * plane + at] + k[c];
}

// NaN passes (the comparisons are false); fixnan replaces it.
__kernel void tone_clamp(__global const float* in, __global float* out, const StripArgs strip,
                         const int colours, const float lo, const float hi) {
  STRIP_FIELDS(strip);
  PIXEL_PROLOGUE
  for (int c = 0; c < colours; ++c) {
    const float v = in[c * plane + at];
    out[c * plane + at] = v < lo ? lo : (v > hi ? hi : v);
  }
}

// Narkowicz's fit of the ACES filmic curve, on 0.6 x the value (his exposure).
inline float aces(const float v) {
  const float x = (v > 0.0f ? v : 0.0f) * 0.6f;
  const float r = (x * (2.51f * x + 0.03f)) / (x * (2.43f * x + 0.59f) + 0.14f);
  return r < 1.0f ? r : 1.0f;
}

__kernel void tonemap_aces(__global const float* in, __global float* out, const StripArgs strip,
                           const int colours) {
  STRIP_FIELDS(strip);
  PIXEL_PROLOGUE
  for (int c = 0; c < colours; ++c) out[c * plane + at] = aces(in[c * plane + at]);
}

// Reinhard's global operator with a white point (1/white^2; 0: none): on Rec.709 luminance for
// three colour planes, scaling the colour by Ld / L; on each plane otherwise. Infinities are
// taken as the largest floats (+Inf then maps as the operator's limit: 1 / 0.2126 for pure red
// without a white point), NaN stays NaN.
inline float reinhard(const float l, const float inv_white2) {
  return l / (1.0f + l) * (1.0f + l * inv_white2);
}
inline float finite_or_nan(const float v) {
  return v > FLT_MAX ? FLT_MAX : (v < -FLT_MAX ? -FLT_MAX : v);
}

__kernel void tonemap_reinhard(__global const float* in, __global float* out, const StripArgs strip,
                               const int colours, const float inv_white2) {
  STRIP_FIELDS(strip);
  PIXEL_PROLOGUE
  if (colours == 3) {
    const float r = finite_or_nan(in[at]), g = finite_or_nan(in[plane + at]),
                b = finite_or_nan(in[2 * plane + at]);
    const float l = finite_or_nan(0.2126f * r + 0.7152f * g + 0.0722f * b);
    const float s = l > 0.0f ? reinhard(l, inv_white2) / l : (isnan(l) ? l : 0.0f);
    out[at] = r * s;
    out[plane + at] = g * s;
    out[2 * plane + at] = b * s;
    return;
  }
  for (int c = 0; c < colours; ++c) {
    const float v = finite_or_nan(in[c * plane + at]);
    out[c * plane + at] = v > 0.0f ? reinhard(v, inv_white2) : 0.0f;
  }
}

// NaN and infinities: the mean of the finite samples among the 8 neighbours inside the image
// (neighbours != 0), else `value`; finite samples pass.
__kernel void fixnan(__global const float* in, __global float* out, const StripArgs strip,
                     const int colours, const float value, const int neighbours) {
  STRIP_FIELDS(strip);
  PIXEL_PROLOGUE
  for (int c = 0; c < colours; ++c) {
    const float v = in[c * plane + at];
    if (isfinite(v)) {
      out[c * plane + at] = v;
      continue;
    }
    float sum = 0.0f;
    int count = 0;
    if (neighbours)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int yy = y + dy, xx = x + dx;
          if ((dx == 0 && dy == 0) || yy < 0 || yy >= height || xx < 0 || xx >= width) continue;
          const float n = in[c * plane + (size_t)(yy - y0) * pitch + xx];
          if (isfinite(n)) sum += n, ++count;
        }
    out[c * plane + at] = count > 0 ? sum / (float)count : value;
  }
}
