// Sample conversion on the device: file samples (interleaved 8/16-bit or float) to planar
// float32 and back, and luminance. CPU references: lib/core/image.cpp,
// lib/filters/colour/convert.cpp. CPU devices convert with host code instead
// (lib/core/planar_rows.cpp, through lib/pipeline/transfer.cpp), in place in their buffers: faster
// than PoCL runs these kernels, and no copy in or out. Defines: SAMPLE (uchar|ushort|float),
// CHANNELS, QUANTIZE (1 for integer samples) and MAX_CODE (255.0f, 65535.0f). Planar buffers hold
// `rows` rows (a strip's, or the whole image's), their planes pitch * rows floats apart;
// conversions work row for row, so borders never matter.
#pragma OPENCL FP_CONTRACT OFF

#include "common.cl"

#ifndef SAMPLE
#define SAMPLE float
#endif
#ifndef CHANNELS
#define CHANNELS 1
#endif
#ifndef QUANTIZE
#define QUANTIZE 0
#endif
#ifndef MAX_CODE
#define MAX_CODE 1.0f
#endif

// 8-bit data is uploaded as 8-bit (a quarter of the bytes) and widened here.
__kernel void convert_to_planar(__global const SAMPLE* src, __global float* dst, const int width,
                                const int rows, const int pitch, const float scale) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= width || y >= rows) return;
  const size_t in = ((size_t)y * width + x) * CHANNELS;
  for (int c = 0; c < CHANNELS; ++c)
#if QUANTIZE
    dst[((size_t)c * rows + y) * pitch + x] = (float)src[in + c] * scale;
#else
    // Float samples copied, not multiplied by 1: NVIDIA's multiply returns its own NaN
    // (0x7fffffff) for any NaN, where a copy keeps the file's.
    dst[((size_t)c * rows + y) * pitch + x] = src[in + c];
#endif
}

// Round to nearest, clamp, NaN to 0: the same steps as halo::quantize. Converts `count` rows
// from buffer row `row0` of a planar buffer of `rows` rows into dst's rows 0..count-1.
__kernel void convert_from_planar(__global const float* src, __global SAMPLE* dst,
                                  const int width, const int pitch, const int rows,
                                  const int row0, const int count) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= width || y >= count) return;
  const size_t out = ((size_t)y * width + x) * CHANNELS;
  for (int c = 0; c < CHANNELS; ++c) {
    float v = src[((size_t)c * rows + row0 + y) * pitch + x];
#if QUANTIZE
    v = isnan(v) ? 0.0f : fmin(fmax(floor(v * MAX_CODE + 0.5f), 0.0f), MAX_CODE);
#endif
    dst[out + c] = (SAMPLE)v;
  }
}

// Luminance of planes 0..2 into plane 0 of dst, summed in the order of the CPU reference.
__kernel void to_gray(__global const float* src, __global float* dst, const int width,
                      const int rows, const int pitch, const float wr, const float wg,
                      const float wb) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= width || y >= rows) return;
  const size_t plane = (size_t)pitch * rows;
  const size_t i = (size_t)y * pitch + x;
  float v = wr * src[i];
  v = v + wg * src[plane + i];
  v = v + wb * src[2 * plane + i];
  dst[i] = v;
}
