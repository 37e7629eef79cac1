// 2D correlation with a kernel as written: out = sum_ij w[i][j] * in(x+j-RX, y+i-RY) + offset,
// weights already divided by the scale (and flipped for true convolution) on the host.
// Each work-group stages its tile plus a halo of RX/RY pixels in local memory, so every input
// pixel is read from global memory about once; weights sit in constant memory.
// Defines: KW, KH (odd kernel size), TILE_W, TILE_H (work-group size), BORDER, MAGNITUDE (1:
// out = sqrt(a^2 + b^2) of two kernels, for Sobel). CPU reference: lib/filters/conv.cpp.
#include "common.cl"
#pragma OPENCL FP_CONTRACT OFF

#ifndef KW
#define KW 3
#endif
#ifndef KH
#define KH 3
#endif
#ifndef TILE_W
#define TILE_W 16
#endif
#ifndef TILE_H
#define TILE_H 16
#endif
#ifndef MAGNITUDE
#define MAGNITUDE 0
#endif

#define RX (KW / 2)
#define RY (KH / 2)
#define HALO_W (TILE_W + 2 * RX)
#define HALO_H (TILE_H + 2 * RY)

// Same summation order as the reference: rows top to bottom, each left to right.
inline float correlate(__local const float (*tile)[HALO_W], __constant const float* w,
                       const int lx, const int ly) {
  float sum = 0.0f;
  for (int i = 0; i < KH; ++i)
    for (int j = 0; j < KW; ++j) sum = sum + w[i * KW + j] * tile[ly + i][lx + j];
  return sum;
}

__kernel __attribute__((reqd_work_group_size(TILE_W, TILE_H, 1))) void conv_tile(
    __global const float* src, __global float* dst, const int width, const int height,
    const int pitch, __constant const float* weights, __constant const float* weights2,
    const float offset) {
  __local float tile[HALO_H][HALO_W];
  const size_t plane = (size_t)get_global_id(2) * pitch * height;
  src += plane;
  dst += plane;

  const int x0 = (int)get_group_id(0) * TILE_W - RX;
  const int y0 = (int)get_group_id(1) * TILE_H - RY;
  for (int ly = get_local_id(1); ly < HALO_H; ly += TILE_H) {
    const int y = border_index(y0 + ly, height);
    for (int lx = get_local_id(0); lx < HALO_W; lx += TILE_W) {
      const int x = border_index(x0 + lx, width);
      tile[ly][lx] = (x < 0 || y < 0) ? 0.0f : src[(size_t)y * pitch + x];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= width || y >= height) return;
  float v = correlate(tile, weights, get_local_id(0), get_local_id(1));
#if MAGNITUDE
  const float v2 = correlate(tile, weights2, get_local_id(0), get_local_id(1));
  v = sqrt(v * v + v2 * v2);
#endif
  dst[(size_t)y * pitch + x] = v + offset;
}
