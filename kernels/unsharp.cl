// Unsharp mask, the step after the Gaussian (kernels/separable.cl blurs): each colour sample
// moves away from its blurred value by `amount` times their difference, where the difference
// exceeds `threshold` (so flat noise is left alone). The same operations in the same order as
// the reference in lib/filters/convolve/unsharp.cpp, without contraction, so both agree bit for
// bit.
#pragma OPENCL FP_CONTRACT OFF

#include "common.cl"

// One work-item per sample of the image rows [first, last): x, row, colour plane.
__kernel void unsharp(__global const float* in, __global const float* blurred,
                      __global float* out, const StripArgs strip,
                      const float amount, const float threshold) {
  STRIP_FIELDS(strip);
  const int x = get_global_id(0);
  const int y = first + get_global_id(1);
  if (x >= width || y >= last) return;
  const size_t at = (size_t)get_global_id(2) * pitch * rows + (size_t)(y - y0) * pitch + x;
  const float v = in[at];
  const float d = v - blurred[at];
  out[at] = fabs(d) > threshold ? v + amount * d : v;
}
