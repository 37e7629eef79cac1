// crop (lib/filters/geometry/crop.cpp): the output's rows [first, last) are the input's rows moved
// by the window's top, each from column `left` on. Samples are copied. One work-item per sample and
// plane.
#include "common.cl"

__kernel void crop(__global const float* in, __global float* out, const CropArgs a) {
  const MoveArgs m = a.move;
  const int x = get_global_id(0);
  const int y = m.first + get_global_id(1);
  if (x >= m.out.width || y >= m.last) return;
  const int c = get_global_id(2);
  out[((size_t)c * m.out.rows + (y - m.out.y0)) * m.out.pitch + x] =
      in[((size_t)c * m.in.rows + (y + a.top - m.in.y0)) * m.in.pitch + x + a.left];
}
