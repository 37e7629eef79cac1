// Temporal denoising's blend (lib/filters/denoise/temporal.cpp has the reference, operation for
// operation, and says why). Every frame of the window is one buffer of planes with the image's
// pitch: its denoised colour and alpha (P planes), then normal (3), depth (1), albedo (3) and
// motion (4):
// TEMPORAL_* in kernels/contract.h give the offsets.
#pragma OPENCL FP_CONTRACT OFF

#include "common.cl"

float temporal_bilinear(__global const float* p, int pitch, int width, int height, float x,
                        float y) {
  // A position followed through a NaN vector reads nothing (and is never seen); infinite
  // ones are clamped like any other.
  if (isnan(x) || isnan(y)) return 0.0f;
  x = clamp(x, 0.0f, (float)(width - 1));
  y = clamp(y, 0.0f, (float)(height - 1));
  const int x0 = (int)floor(x), y0 = (int)floor(y);
  const int x1 = min(x0 + 1, width - 1), y1 = min(y0 + 1, height - 1);
  const float fx = x - (float)x0, fy = y - (float)y0;
  const float top = (1.0f - fx) * p[y0 * pitch + x0] + fx * p[y0 * pitch + x1];
  const float bottom = (1.0f - fx) * p[y1 * pitch + x0] + fx * p[y1 * pitch + x1];
  return (1.0f - fy) * top + fy * bottom;
}

float temporal_tone(float v) {
  v = fmax(v, 0.0f);
  return pow(v / (1.0f + v), 1.0f / 2.2f);
}

// Where each pixel of the centre frame lies one frame further on: its position so far (the
// pixel itself when first) moved by `frame`'s motion there, read from plane `motion` with signs
// (sx, sy) (Blender's vectors: towards the previous frame (+X, -Y), the next (-Z, +W)).
__kernel void temporal_step(__global float* pos, __global const float* frame, const int motion,
                            const float sx, const float sy, const int first, const int width,
                            const int height, const int pitch, const ulong plane) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  const int i = y * pitch + x;
  const float px = first ? (float)x : pos[i];
  const float py = first ? (float)y : pos[plane + i];
  const float mx = temporal_bilinear(frame + (ulong)motion * plane, pitch, width, height, px, py);
  const float my =
      temporal_bilinear(frame + (ulong)(motion + 1) * plane, pitch, width, height, px, py);
  pos[i] = px + sx * mx;
  pos[plane + i] = py + sy * my;
}

// The still camera (motion=zero): every pixel stays where it is.
__kernel void temporal_still(__global float* pos, const int width, const int height,
                             const int pitch, const ulong plane) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  pos[y * pitch + x] = (float)x;
  pos[plane + y * pitch + x] = (float)y;
}

// The neighbour's colour (and alpha: `planes` in all, `colours` of colour) at each followed
// position (bilinear), its squared tone-mapped colour difference from the centre's, and whether the
// neighbour sees the same surface there: inside the image, and at the nearest pixel a depth, normal
// and albedo that the centre's 3x3 neighbourhood has (guides `has`, TEMPORAL_HAS_*, that both
// frames hold).
__kernel void temporal_distance(__global const float* pos, __global const float* centre,
                                __global const float* other, const int planes, const int colours,
                                const int has, const int width, const int height, const int pitch,
                                const ulong plane, __global float* warped, __global float* distance,
                                __global float* seen) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  const int i = y * pitch + x;
  const float px = pos[i], py = pos[plane + i];
  float d = 0.0f;
  for (int c = 0; c < planes; ++c) {
    const float v = temporal_bilinear(other + (ulong)c * plane, pitch, width, height, px, py);
    warped[(ulong)c * plane + i] = v;
    if (c >= colours) continue;  // alpha: averaged, not compared
    const float e = temporal_tone(v) - temporal_tone(centre[(ulong)c * plane + i]);
    d += e * e;
  }
  distance[i] = d / (float)colours;
  int ok = px >= 0.0f && px <= (float)(width - 1) && py >= 0.0f && py <= (float)(height - 1);
  if (ok) {
    const int q = clamp((int)floor(py + 0.5f), 0, height - 1) * pitch +
                  clamp((int)floor(px + 0.5f), 0, width - 1);
    const ulong normal = (ulong)(planes + TEMPORAL_NORMAL) * plane;
    const ulong depth = (ulong)(planes + TEMPORAL_DEPTH) * plane;
    const ulong albedo = (ulong)(planes + TEMPORAL_ALBEDO) * plane;
    const float zs = other[depth + q];
    const float nsx = other[normal + q], nsy = other[normal + plane + q],
                nsz = other[normal + 2 * plane + q];
    const float ls = sqrt(nsx * nsx + nsy * nsy + nsz * nsz);
    float zmin = INFINITY, zmax = -INFINITY, best = -2.0f;
    float amin[3] = {INFINITY, INFINITY, INFINITY}, amax[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int j = clamp(y + dy, 0, height - 1) * pitch + clamp(x + dx, 0, width - 1);
        const float z = centre[depth + j];
        zmin = fmin(zmin, z);
        zmax = fmax(zmax, z);
        const float ntx = centre[normal + j], nty = centre[normal + plane + j],
                    ntz = centre[normal + 2 * plane + j];
        const float lt = sqrt(ntx * ntx + nty * nty + ntz * ntz);
        const float cosine = ls == 0.0f && lt == 0.0f ? 1.0f
                             : ls == 0.0f || lt == 0.0f
                                 ? -1.0f
                                 : (nsx * ntx + nsy * nty + nsz * ntz) / (ls * lt);
        best = fmax(best, cosine);
        for (int c = 0; c < 3; ++c) {
          const float a = centre[albedo + (ulong)c * plane + j];
          amin[c] = fmin(amin[c], a);
          amax[c] = fmax(amax[c], a);
        }
      }
    if (has & TEMPORAL_HAS_DEPTH) ok = zs >= 0.95f * zmin && zs <= 1.05f * zmax;
    if (has & TEMPORAL_HAS_NORMAL) ok = ok && best >= 0.9f;
    if (has & TEMPORAL_HAS_ALBEDO)
      for (int c = 0; c < 3; ++c) {
        const float a = other[albedo + (ulong)c * plane + q];
        ok = ok && a >= amin[c] - 0.1f && a <= amax[c] + 0.1f;
      }
  }
  seen[i] = ok ? 1.0f : 0.0f;
}

// Adds the neighbour where seen, weighted by exp(-patch mean distance / sigma^2) (the patch's
// pixels inside the image).
__kernel void temporal_accumulate(__global const float* distance, __global const float* seen,
                                  __global const float* warped, const int planes, const int patch,
                                  const float inv_sigma2, const int width, const int height,
                                  const int pitch, const ulong plane, __global float* sum,
                                  __global float* weight) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  const int i = y * pitch + x;
  if (seen[i] == 0.0f) return;
  float total = 0.0f;
  int n = 0;
  for (int yy = max(y - patch, 0); yy <= min(y + patch, height - 1); ++yy)
    for (int xx = max(x - patch, 0); xx <= min(x + patch, width - 1); ++xx)
      total += distance[yy * pitch + xx], ++n;
  const float w = exp(-(total / (float)n) * inv_sigma2);
  for (int c = 0; c < planes; ++c) sum[(ulong)c * plane + i] += w * warped[(ulong)c * plane + i];
  weight[i] += w;
}

// The centre's colour (1 each) and the neighbours' (their weights) averaged, in place.
__kernel void temporal_finish(__global float* image, __global const float* sum,
                              __global const float* weight, const int planes, const int width,
                              const int height, const int pitch, const ulong plane) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  const int i = y * pitch + x;
  for (int c = 0; c < planes; ++c)
    image[(ulong)c * plane + i] =
        (image[(ulong)c * plane + i] + sum[(ulong)c * plane + i]) / (1.0f + weight[i]);
}
