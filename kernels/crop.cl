// crop (lib/filters/crop.cpp): the output's rows [first, last) are the input's rows shifted by
// y0 + top, each from column left on. Samples are copied. One work-item per sample and plane.
#include "common.cl"

__kernel void crop(__global const float* in, __global float* out, const int in_pitch,
                   const int in_rows, const int in_y0, const int out_width, const int out_pitch,
                   const int out_rows, const int out_y0, const int first, const int last,
                   const int left, const int top) {
  const int x = get_global_id(0);
  const int y = first + get_global_id(1);
  if (x >= out_width || y >= last) return;
  const int c = get_global_id(2);
  out[((size_t)c * out_rows + (y - out_y0)) * out_pitch + x] =
      in[((size_t)c * in_rows + (y + top - in_y0)) * in_pitch + x + left];
}
