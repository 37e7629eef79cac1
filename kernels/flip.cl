// FLIP on the device (lib/verify/flip.cpp holds the reference and says where every constant
// comes from). A strip holds image rows [row0, row0 + rows) of both images, planar, `pitch`
// floats a row; three passes: each pixel to YCxCz, the filters across the rows, then down the
// columns into the errors of the strip's output rows.
#pragma OPENCL FP_CONTRACT OFF

#include "contract.h"

// The tone curves of ACES and Hable (FLIP_CURVES); Reinhard works on luminance.
__constant float kCurves[2][6] = FLIP_CURVES;

// NaN goes to 0, as the reference's clamp does.
inline float clamp_unit(float v) {
  v = v > 0.0f ? v : 0.0f;
  return v < 1.0f ? v : 1.0f;
}

inline float3 linear_to_xyz(float3 c) {
  return (float3)((10135552.0f / 24577794.0f) * c.x + (8788810.0f / 24577794.0f) * c.y +
                      (4435075.0f / 24577794.0f) * c.z,
                  (2613072.0f / 12288897.0f) * c.x + (8788810.0f / 12288897.0f) * c.y +
                      (887015.0f / 12288897.0f) * c.z,
                  (1425312.0f / 73733382.0f) * c.x + (8788810.0f / 73733382.0f) * c.y +
                      (70074185.0f / 73733382.0f) * c.z);
}

inline float3 xyz_to_linear(float3 c) {
  return (float3)(3.241003275f * c.x - 1.537398934f * c.y - 0.498615861f * c.z,
                  -0.969224334f * c.x + 1.875930071f * c.y + 0.041554224f * c.z,
                  0.055639423f * c.x - 0.204011202f * c.y + 1.057148933f * c.z);
}

inline float lab_f(float t) {
  const float delta = 6.0f / 29.0f;
  return t > delta * delta * delta ? pow(t, 1.0f / 3.0f)
                                   : t * (1.0f / (3.0f * delta * delta)) + 4.0f / 29.0f;
}

// CIELAB with the Hunt adjustment (chroma scaled by lightness).
inline float3 hunt_lab(float3 linear) {
  const float3 xyz = linear_to_xyz(linear);
  const float fx = lab_f(xyz.x * FLIP_INV_WHITE_X), fy = lab_f(xyz.y),
              fz = lab_f(xyz.z * FLIP_INV_WHITE_Z);
  const float l = 116.0f * fy - 16.0f;
  return (float3)(l, 0.01f * l * (500.0f * (fx - fy)), 0.01f * l * (200.0f * (fy - fz)));
}

inline float srgb_to_linear(float v) {
  return v <= 0.04045f ? v / 12.92f : pow((v + 0.055f) / 1.055f, 2.4f);
}

// The pixel as linear RGB in [0, 1]: sRGB-encoded (LDR), or exposed and tone-mapped (HDR).
inline float3 linear_pixel(float3 c, int hdr, float scale, int tonemapper) {
  if (!hdr)
    return (float3)(srgb_to_linear(clamp_unit(c.x)), srgb_to_linear(clamp_unit(c.y)),
                    srgb_to_linear(clamp_unit(c.z)));
  c *= scale;
  if (tonemapper == FLIP_TONEMAP_REINHARD) {
    const float factor = 1.0f / (1.0f + (0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z));
    c *= factor;
  } else {
    __constant const float* k = kCurves[tonemapper];
    c = (c * c * k[0] + c * k[1] + k[2]) / (c * c * k[3] + c * k[4] + k[5]);
  }
  return (float3)(clamp_unit(c.x), clamp_unit(c.y), clamp_unit(c.z));
}

// Pass 1: YCxCz of both images. opponent: [image][Y, Cx, Cz][rows][width].
__kernel void flip_opponent(__global const float* reference, __global const float* test,
                            const int width, const int pitch, const int rows, const int channels,
                            const int hdr, const float scale, const int tonemapper,
                            __global float* opponent) {
  const int x = get_global_id(0), i = get_global_id(1);
  if (x >= width || i >= rows) return;
  const int plane = rows * pitch, at = i * pitch + x, out = i * width + x, n = rows * width;
  for (int image = 0; image < 2; ++image) {
    __global const float* in = image == 0 ? reference : test;
    const float3 c =
        channels < 3 ? (float3)(in[at]) : (float3)(in[at], in[at + plane], in[at + 2 * plane]);
    float3 xyz = linear_to_xyz(linear_pixel(c, hdr, scale, tonemapper));
    xyz.x *= FLIP_INV_WHITE_X;
    xyz.z *= FLIP_INV_WHITE_Z;
    opponent[(image * 3 + 0) * n + out] = 116.0f * xyz.y - 16.0f;
    opponent[(image * 3 + 1) * n + out] = 500.0f * (xyz.x - xyz.y);
    opponent[(image * 3 + 2) * n + out] = 200.0f * (xyz.y - xyz.z);
  }
}

// Pass 2, across the rows: Y, Cx, Cz's two terms (the spatial filters, radius rs) and the
// feature filter's Gaussian, first and second derivative of Y / 116 + 16 / 116 (radius rf).
// taps: [y, cx, cz1, cz2] (2 rs + 1 each), then [g, dg, ddg] (2 rf + 1 each).
// across: [image][7 quantities][rows][width].
__kernel void flip_across(__global const float* opponent, const int width, const int rows,
                          __constant float* taps, const int rs, const int rf,
                          __global float* across) {
  const int x = get_global_id(0), i = get_global_id(1);
  if (x >= width || i >= rows) return;
  const int n = rows * width, ns = 2 * rs + 1, nf = 2 * rf + 1;
  __constant float* g = taps + 4 * ns;
  for (int image = 0; image < 2; ++image) {
    __global const float* lum = opponent + (image * 3 + 0) * n + i * width;
    __global const float* cx = opponent + (image * 3 + 1) * n + i * width;
    __global const float* cz = opponent + (image * 3 + 2) * n + i * width;
    float sy = 0.0f, scx = 0.0f, scz1 = 0.0f, scz2 = 0.0f;
    for (int k = -rs; k <= rs; ++k) {
      const int xx = clamp(x + k, 0, width - 1);
      sy += taps[k + rs] * lum[xx];
      scx += taps[ns + k + rs] * cx[xx];
      scz1 += taps[2 * ns + k + rs] * cz[xx];
      scz2 += taps[3 * ns + k + rs] * cz[xx];
    }
    float sg = 0.0f, sdg = 0.0f, sddg = 0.0f;
    for (int k = -rf; k <= rf; ++k) {
      const int xx = clamp(x + k, 0, width - 1);
      const float v = lum[xx] * (1.0f / 116.0f) + 16.0f / 116.0f;
      sg += g[k + rf] * v;
      sdg += g[nf + k + rf] * v;
      sddg += g[2 * nf + k + rf] * v;
    }
    __global float* out = across + image * 7 * n + i * width + x;
    out[0 * n] = sy;
    out[1 * n] = scx;
    out[2 * n] = scz1;
    out[3 * n] = scz2;
    out[4 * n] = sg;
    out[5 * n] = sdg;
    out[6 * n] = sddg;
  }
}

// Pass 3, down the columns, for the image rows [first, first + count): the colour and feature
// differences and FLIP's error, into errors (replaced), or with `keep_max` the larger of the
// two, `exposure` going to exposure_at where this pass's is larger. Rows beyond the image are
// its edge rows (clamped in image rows, then found in the strip).
__kernel void flip_down(__global const float* across, const int width, const int rows,
                        const int row0, const int height, const int first, const int count,
                        __constant float* taps, const int rs, const int rf, const float cmax,
                        const float pccmax, const int keep_max, const float exposure,
                        __global float* errors, __global float* exposure_at) {
  const int x = get_global_id(0), j = get_global_id(1);
  if (x >= width || j >= count) return;
  const int y = first + j, n = rows * width, ns = 2 * rs + 1, nf = 2 * rf + 1;
  __constant float* g = taps + 4 * ns;
  float3 lab[2];
  float edge[2], point[2];
  for (int image = 0; image < 2; ++image) {
    __global const float* a = across + image * 7 * n + x;
    float sy = 0.0f, scx = 0.0f, scz = 0.0f;
    for (int k = -rs; k <= rs; ++k) {
      const int at = (clamp(y + k, 0, height - 1) - row0) * width;
      sy += taps[k + rs] * a[at];
      scx += taps[ns + k + rs] * a[n + at];
      scz += taps[2 * ns + k + rs] * a[2 * n + at] + taps[3 * ns + k + rs] * a[3 * n + at];
    }
    const float fy = (sy + 16.0f) / 116.0f;
    const float3 xyz =
        (float3)((fy + scx / 500.0f) * FLIP_WHITE_X, fy, (fy - scz / 200.0f) * FLIP_WHITE_Z);
    const float3 linear = xyz_to_linear(xyz);
    lab[image] =
        hunt_lab((float3)(clamp_unit(linear.x), clamp_unit(linear.y), clamp_unit(linear.z)));
    float dx = 0.0f, ddx = 0.0f, dy = 0.0f, ddy = 0.0f;
    for (int k = -rf; k <= rf; ++k) {
      const int at = (clamp(y + k, 0, height - 1) - row0) * width;
      const float gv = a[4 * n + at];
      dx += g[k + rf] * a[5 * n + at];
      ddx += g[k + rf] * a[6 * n + at];
      dy += g[nf + k + rf] * gv;
      ddy += g[2 * nf + k + rf] * gv;
    }
    edge[image] = sqrt(dx * dx + dy * dy);
    point[image] = sqrt(ddx * ddx + ddy * ddy);
  }
  const float3 d = lab[0] - lab[1];
  const float hyab = fabs(d.x) + sqrt(d.y * d.y + d.z * d.z);
  const float c = pow(hyab, FLIP_QC);
  const float colour = c < pccmax ? c * FLIP_PT / pccmax
                                  : FLIP_PT + (c - pccmax) / (cmax - pccmax) * (1.0f - FLIP_PT);
  const float most = fmax(fabs(edge[0] - edge[1]), fabs(point[0] - point[1]));
  const float feature = pow(most / sqrt(2.0f), FLIP_QF);
  const float e = pow(colour, 1.0f - feature);
  const int at = j * width + x;
  if (!keep_max) {
    errors[at] = e;
  } else if (e > errors[at]) {
    errors[at] = e;
    exposure_at[at] = exposure;
  }
}
