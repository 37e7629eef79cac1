// resize (lib/filters/resize.cpp): a horizontal pass into the rows the vertical pass reads,
// then the vertical pass. Each output sample is the sum of `taps` input samples from `start`,
// weighted by the host's table for its column (or row), in ascending order: the reference sums
// the same floats in the same order, so the results are equal bit for bit.
#pragma OPENCL FP_CONTRACT OFF

// Rows pass: input rows [first, last) of `in` (in_width wide, holding rows from in_y0) into the
// same rows of `tmp` (out_width wide, its own pitch).
__kernel void resize_rows(__global const float* in, __global float* tmp, const int in_pitch,
                          const int in_rows, const int in_y0, const int out_width,
                          const int tmp_pitch, const int tmp_rows, const int tmp_y0,
                          const int first, const int last, __global const float* spans,
                          __global const float* weights, const int taps) {
  const int x = get_global_id(0);
  const int y = first + get_global_id(1);
  if (x >= out_width || y >= last) return;
  const int c = get_global_id(2);
  const int count = (int)spans[2 * x + 1];
  __global const float* src =
      in + ((size_t)c * in_rows + (y - in_y0)) * in_pitch + (int)spans[2 * x];
  __global const float* w = weights + (size_t)x * taps;
  float sum = 0.0f;
  for (int k = 0; k < count; ++k) sum += w[k] * src[k];
  tmp[((size_t)c * tmp_rows + (y - tmp_y0)) * tmp_pitch + x] = sum;
}

// Columns pass: output rows [first, last) from the rows of `tmp`.
__kernel void resize_cols(__global const float* tmp, __global float* out, const int width,
                          const int tmp_pitch, const int tmp_rows, const int tmp_y0,
                          const int out_pitch, const int out_rows, const int out_y0,
                          const int first, const int last, __global const float* spans,
                          __global const float* weights, const int taps) {
  const int x = get_global_id(0);
  const int y = first + get_global_id(1);
  if (x >= width || y >= last) return;
  const int c = get_global_id(2);
  const int from = (int)spans[2 * y], count = (int)spans[2 * y + 1];
  __global const float* w = weights + (size_t)y * taps;
  __global const float* src = tmp + ((size_t)c * tmp_rows + (from - tmp_y0)) * tmp_pitch + x;
  float sum = 0.0f;
  for (int k = 0; k < count; ++k) sum += w[k] * src[(size_t)k * tmp_pitch];
  out[((size_t)c * out_rows + (y - out_y0)) * out_pitch + x] = sum;
}
