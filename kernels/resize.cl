// resize (lib/filters/geometry/resize.cpp): a horizontal pass into the rows the vertical pass
// reads, then the vertical pass. Each output sample is the sum of `taps` input samples from
// `start`, weighted by the host's table for its column (or row), in ascending order: the reference
// sums the same floats in the same order, so the results are equal bit for bit.
#pragma OPENCL FP_CONTRACT OFF

#include "contract.h"

// Rows pass: input rows [first, last) of `in` (MoveArgs: m.in) into the same rows of `tmp`
// (m.out: the output's width, its own pitch).
__kernel void resize_rows(__global const float* in, __global float* tmp, const MoveArgs m,
                          __global const float* spans, __global const float* weights,
                          const int taps) {
  const int x = get_global_id(0);
  const int y = m.first + get_global_id(1);
  if (x >= m.out.width || y >= m.last) return;
  const int c = get_global_id(2);
  const int count = (int)spans[2 * x + 1];
  __global const float* src =
      in + ((size_t)c * m.in.rows + (y - m.in.y0)) * m.in.pitch + (int)spans[2 * x];
  __global const float* w = weights + (size_t)x * taps;
  float sum = 0.0f;
  for (int k = 0; k < count; ++k) sum += w[k] * src[k];
  tmp[((size_t)c * m.out.rows + (y - m.out.y0)) * m.out.pitch + x] = sum;
}

// Columns pass: output rows [first, last) from the rows of `tmp`.
__kernel void resize_cols(__global const float* tmp, __global float* out, const MoveArgs m,
                          __global const float* spans, __global const float* weights,
                          const int taps) {
  const int x = get_global_id(0);
  const int y = m.first + get_global_id(1);
  if (x >= m.out.width || y >= m.last) return;
  const int c = get_global_id(2);
  const int from = (int)spans[2 * y], count = (int)spans[2 * y + 1];
  __global const float* w = weights + (size_t)y * taps;
  __global const float* src =
      tmp + ((size_t)c * m.in.rows + (from - m.in.y0)) * m.in.pitch + x;
  float sum = 0.0f;
  for (int k = 0; k < count; ++k) sum += w[k] * src[(size_t)k * m.in.pitch];
  out[((size_t)c * m.out.rows + (y - m.out.y0)) * m.out.pitch + x] = sum;
}
