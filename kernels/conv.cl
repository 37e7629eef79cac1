// 2D correlation with a kernel as written: out = sum_ij w[i][j] * in(x+j-RX, y+i-RY) + offset,
// weights already divided by the scale (and flipped for true convolution) on the host.
// A CONV_W x CONV_H work-group stages a CONV_W x (CONV_H * CONV_RUN) tile plus a halo of
// RX/RY pixels in local memory, so each input pixel is read from global memory about once.
// Each work-item computes CONV_RUN outputs down one column: it reads every tile row it needs
// once into registers and adds it to each output that row contributes to. Weights sit in
// constant memory.
// conv_vec is the CPU form (lib/cl/tuning.cpp vec > 0): VEC outputs along a row and VEC_CONV
// down a column per work-item as vector fma, taps read straight from memory. With CONV_SLIDE
// (GPUs, where conv_vec is set) it runs conv_slide instead: aligned row loads; small kernels
// load all their rows first, larger ones slide row by row.
// Defines: KW, KH (odd kernel size), CONV_W, CONV_H, CONV_RUN, MAGNITUDE (1: out =
// sqrt(a^2 + b^2) of two kernels, for Sobel), VEC, VEC_CONV, CONV_SLIDE. Rows: see STRIP_ARGS in
// common.cl; the launch covers rows [first, last) in groups of CONV_H * CONV_RUN. CPU reference:
// lib/filters/convolve/conv.cpp.
#include "common.cl"
// Taps are fma(w, v, acc) in the reference's order; the magnitude keeps plain operations.
#pragma OPENCL FP_CONTRACT OFF

#ifndef KW
#define KW 3
#endif
#ifndef KH
#define KH 3
#endif
#ifndef CONV_W
#define CONV_W 32
#endif
#ifndef CONV_H
#define CONV_H 8
#endif
#ifndef CONV_RUN
#define CONV_RUN 8
#endif
#ifndef MAGNITUDE
#define MAGNITUDE 0
#endif
// An output from its accumulators: the kernel's sum, or with MAGNITUDE the length of both
// kernels' sums (b is not evaluated, nor declared, without MAGNITUDE).
#if MAGNITUDE
#define CONV_RESULT(a, b) sqrt((a) * (a) + (b) * (b))
#else
#define CONV_RESULT(a, b) (a)
#endif

#define RX (KW / 2)
#define RY (KH / 2)
#define TILE_H (CONV_H * CONV_RUN)
#define IN_W (CONV_W + 2 * RX)
#define IN_H (TILE_H + 2 * RY)

__kernel __attribute__((reqd_work_group_size(CONV_W, CONV_H, 1))) void conv_tile(
    __global const float* src, __global float* dst, const StripArgs strip,
    const int border, __constant const float* weights, __constant const float* weights2,
    const float offset) {
  STRIP_FIELDS(strip);
  __local float tile[IN_H][IN_W];
  const size_t plane = (size_t)get_global_id(2) * pitch * rows;
  src += plane;
  dst += plane;
  const int gx0 = (int)get_group_id(0) * CONV_W;
  const int gy0 = first + (int)get_group_id(1) * TILE_H;
  // Most work-groups lie wholly inside the buffer: they load without border arithmetic.
  const bool interior = gx0 - RX >= 0 && gx0 - RX + IN_W <= width && gy0 - RY >= y0 &&
                        gy0 - RY + IN_H <= y0 + rows;
  for (int ly = get_local_id(1); ly < IN_H; ly += CONV_H) {
    const int y =
        interior ? gy0 - RY + ly - y0 : strip_row(gy0 - RY + ly, y0, rows, height, border);
    __global const float* row = src + (size_t)max(y, 0) * pitch;
    for (int lx = get_local_id(0); lx < IN_W; lx += CONV_W) {
      if (interior) {
        tile[ly][lx] = row[gx0 - RX + lx];
      } else {
        const int x = border_index(gx0 - RX + lx, width, border);
        tile[ly][lx] = (x < 0 || y < 0) ? 0.0f : row[x];
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  const int lx = get_local_id(0);
  const int cy = get_local_id(1) * CONV_RUN;
  float acc[CONV_RUN];
#if MAGNITUDE
  float acc2[CONV_RUN];
#endif
#pragma unroll
  for (int o = 0; o < CONV_RUN; ++o) {
    acc[o] = 0.0f;
#if MAGNITUDE
    acc2[o] = 0.0f;
#endif
  }
  // Tile row cy + t feeds output o through kernel row i = t - o. For a given output, rows
  // arrive in increasing i and each row's taps left to right: the reference's order.
#if KH <= 7
#pragma unroll
#endif
  for (int t = 0; t < CONV_RUN + KH - 1; ++t) {
    float v[KW];
#pragma unroll
    for (int j = 0; j < KW; ++j) v[j] = tile[cy + t][lx + j];
#pragma unroll
    for (int o = 0; o < CONV_RUN; ++o) {
      const int i = t - o;
      if (i >= 0 && i < KH) {
#pragma unroll
        for (int j = 0; j < KW; ++j) {
          acc[o] = fma(weights[i * KW + j], v[j], acc[o]);
#if MAGNITUDE
          acc2[o] = fma(weights2[i * KW + j], v[j], acc2[o]);
#endif
        }
      }
    }
  }

  const int x = gx0 + lx;
  if (x >= width) return;
#pragma unroll
  for (int o = 0; o < CONV_RUN; ++o) {
    const int y = gy0 + cy + o;
    const float v = CONV_RESULT(acc[o], acc2[o]);
    if (y < last) dst[(size_t)(y - y0) * pitch + x] = v + offset;
  }
}

#ifdef VEC
#ifndef VEC_CONV
#define VEC_CONV 1
#endif
#ifndef CONV_SLIDE
#define CONV_SLIDE 0
#endif

// The output at (x, y) one tap at a time, for lanes near the left and right edges.
inline float conv_at(__global const float* src, const int x, const int y, const int width,
                     const int pitch, STRIP_ARGS, const int border, __constant const float* w) {
  float sum = 0.0f;
  for (int i = 0; i < KH; ++i) {
    const int yy = strip_row(y + i - RY, y0, rows, height, border);
    for (int j = 0; j < KW; ++j) {
      const int xx = border_index(x + j - RX, width, border);
      sum = fma(w[i * KW + j], (yy < 0 || xx < 0) ? 0.0f : src[(size_t)yy * pitch + xx], sum);
    }
  }
  return sum;
}

inline void conv_edge(__global const float* src, __global float* dst, const int x0, const int y,
                      const int width, const int pitch, STRIP_ARGS, const int border,
                      __constant const float* weights, __constant const float* weights2,
                      const float offset) {
  for (int o = 0; o < VEC_CONV && y + o < last; ++o)
    for (int k = 0; k < VEC && x0 + k < width; ++k) {
      float v = conv_at(src, x0 + k, y + o, width, pitch, STRIP_VALUES, border, weights);
#if MAGNITUDE
      const float v2 = conv_at(src, x0 + k, y + o, width, pitch, STRIP_VALUES, border, weights2);
      v = sqrt(v * v + v2 * v2);
#endif
      dst[(size_t)(y + o - y0) * pitch + x0 + k] = v + offset;
    }
}

#if CONV_SLIDE
// Row yy's VEC + 2 RX values around x0 (zeros for yy < 0): one aligned vector load (x0 and
// the pitch are multiples of VEC) and RX scalars on each side. KW shifted vloads would each
// split into VEC scalar loads on a GPU (vload only promises a float's alignment).
inline void conv_window(__global const float* src, const int yy, const int pitch, const int x0,
                        float* win) {
  if (yy < 0) {
#pragma unroll
    for (int k = 0; k < VEC + 2 * RX; ++k) win[k] = 0.0f;
    return;
  }
  __global const float* p = src + (size_t)yy * pitch + x0;
  VSTORE(*(__global const FLOATV*)p, 0, win + RX);
#pragma unroll
  for (int k = 0; k < RX; ++k) {
    win[k] = p[k - RX];
    win[RX + VEC + k] = p[VEC + k];
  }
}

// The GPU forms. Outputs are stored as aligned vectors (a vstore would split as a vload does);
// every output takes its kernel rows in order, each left to right (the reference's order).
#define CONV_WINDOW (VEC + 2 * RX)
#if (VEC_CONV + KH - 1) * CONV_WINDOW <= 64
// Small kernels: the work-item loads all VEC_CONV + KH - 1 input rows its VEC_CONV x VEC
// outputs need before computing or storing any, so the loads are in flight together. (A store
// to dst may alias src as far as the compiler knows, so a load issued after a store waits for
// it. Sliding row by row kept about one row in flight: sharpen on 8K float ran 0.105 ms for 1
// channel and 0.270 for 3 on an H200, 0.086 and 0.217 this way.)
inline void conv_slide(__global const float* src, __global float* dst, const int x0, const int y,
                       const int pitch, STRIP_ARGS, const int border,
                       __constant const float* weights, __constant const float* weights2,
                       const float offset) {
  const bool interior = y - RY >= y0 && y + VEC_CONV + RY <= y0 + rows;
  const int n = min(VEC_CONV, last - y);
  float win[VEC_CONV + KH - 1][CONV_WINDOW];
#pragma unroll
  for (int t = 0; t < VEC_CONV + KH - 1; ++t) {
    // Rows past the strip's last output are never used: read the last needed row again.
    const int row = y - RY + min(t, n + KH - 2);
    conv_window(src, interior ? row - y0 : strip_row(row, y0, rows, height, border), pitch, x0,
                win[t]);
  }
#pragma unroll
  for (int o = 0; o < VEC_CONV; ++o) {
    if (o >= n) break;
    FLOATV acc = 0.0f;
#if MAGNITUDE
    FLOATV acc2 = 0.0f;
#endif
#pragma unroll
    for (int k = 0; k < KH; ++k)
#pragma unroll
      for (int j = 0; j < KW; ++j) {
        const FLOATV v = VLOAD(0, win[o + k] + j);
        acc = fma((FLOATV)(weights[k * KW + j]), v, acc);
#if MAGNITUDE
        acc2 = fma((FLOATV)(weights2[k * KW + j]), v, acc2);
#endif
      }
    *(__global FLOATV*)(dst + (size_t)(y + o - y0) * pitch + x0) = CONV_RESULT(acc, acc2) + offset;
  }
}
#else
// Larger kernels: the work-item slides down its VEC_CONV rows, each input row read once into
// registers and added to the KH outputs it feeds; acc[k] is the output k rows above the newest
// row, which gets kernel row k from it.
inline void conv_slide(__global const float* src, __global float* dst, const int x0, const int y,
                       const int pitch, STRIP_ARGS, const int border,
                       __constant const float* weights, __constant const float* weights2,
                       const float offset) {
  const bool interior = y - RY >= y0 && y + VEC_CONV + RY <= y0 + rows;
  FLOATV acc[KH];
#if MAGNITUDE
  FLOATV acc2[KH];
#endif
#pragma unroll
  for (int k = 0; k < KH; ++k) {
    acc[k] = 0.0f;
#if MAGNITUDE
    acc2[k] = 0.0f;
#endif
  }
  const int n = min(VEC_CONV, last - y);
#pragma unroll
  for (int t = 0; t < VEC_CONV + KH - 1; ++t) {
    if (t == n + KH - 1) break;  // the strip's last rows
    const int yy = interior ? y - RY + t - y0 : strip_row(y - RY + t, y0, rows, height, border);
    float win[CONV_WINDOW];
    conv_window(src, yy, pitch, x0, win);
#pragma unroll
    for (int k = 0; k < KH; ++k)
#pragma unroll
      for (int j = 0; j < KW; ++j) {
        const FLOATV v = VLOAD(0, win + j);
        acc[k] = fma((FLOATV)(weights[k * KW + j]), v, acc[k]);
#if MAGNITUDE
        acc2[k] = fma((FLOATV)(weights2[k * KW + j]), v, acc2[k]);
#endif
      }
    if (t >= KH - 1) {
      const FLOATV r = CONV_RESULT(acc[KH - 1], acc2[KH - 1]);
      *(__global FLOATV*)(dst + (size_t)(y + t - (KH - 1) - y0) * pitch + x0) = r + offset;
    }
#pragma unroll
    for (int k = KH - 1; k > 0; --k) {
      acc[k] = acc[k - 1];
#if MAGNITUDE
      acc2[k] = acc2[k - 1];
#endif
    }
    acc[0] = 0.0f;
#if MAGNITUDE
    acc2[0] = 0.0f;
#endif
  }
}
#endif
#endif

// Each input row is loaded once (KW shifted vectors) and added to every output it feeds:
// output o gets kernel row i = t - o from loaded row t, rows in order, each left to right.
__kernel void conv_vec(__global const float* src, __global float* dst, const StripArgs strip,
                       const int border, __constant const float* weights,
                       __constant const float* weights2, const float offset) {
  STRIP_FIELDS(strip);
  const size_t plane = (size_t)get_global_id(2) * pitch * rows;
  const int x0 = (int)get_global_id(0) * VEC, y = first + (int)get_global_id(1) * VEC_CONV;
  if (x0 >= width || y >= last) return;
  src += plane;
  dst += plane;
  if (x0 - RX < 0 || x0 + VEC + RX > width) {
    conv_edge(src, dst, x0, y, width, pitch, STRIP_VALUES, border, weights, weights2, offset);
    return;
  }
#if CONV_SLIDE
  conv_slide(src, dst, x0, y, pitch, STRIP_VALUES, border, weights, weights2, offset);
#else
  const bool interior = y - RY >= y0 && y + VEC_CONV + RY <= y0 + rows;
  FLOATV acc[VEC_CONV];
#if MAGNITUDE
  FLOATV acc2[VEC_CONV];
#endif
#pragma unroll
  for (int o = 0; o < VEC_CONV; ++o) {
    acc[o] = 0.0f;
#if MAGNITUDE
    acc2[o] = 0.0f;
#endif
  }
  for (int t = 0; t < VEC_CONV + KH - 1; ++t) {
    const int yy = interior ? y - RY + t - y0 : strip_row(y - RY + t, y0, rows, height, border);
    FLOATV v[KW];
#pragma unroll
    for (int j = 0; j < KW; ++j)
      v[j] = yy < 0 ? (FLOATV)(0.0f) : VLOAD(0, src + (size_t)yy * pitch + x0 - RX + j);
#pragma unroll
    for (int o = 0; o < VEC_CONV; ++o) {
      const int i = t - o;
      if (i >= 0 && i < KH) {
#pragma unroll
        for (int j = 0; j < KW; ++j) {
          acc[o] = fma((FLOATV)(weights[i * KW + j]), v[j], acc[o]);
#if MAGNITUDE
          acc2[o] = fma((FLOATV)(weights2[i * KW + j]), v[j], acc2[o]);
#endif
        }
      }
    }
  }
  for (int o = 0; o < VEC_CONV && y + o < last; ++o) {
    const FLOATV r = CONV_RESULT(acc[o], acc2[o]);
    VSTORE(r + offset, 0, dst + (size_t)(y + o - y0) * pitch + x0);
  }
#endif
}
#endif
