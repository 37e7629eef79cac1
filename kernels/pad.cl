// pad (lib/filters/geometry/pad.cpp): output pixel (x, y) is the input's (x - left, y - top), or,
// past the input's edges, what the border rule reads there (border_index, as the filters read past
// their edges); zero where the rule gives none. Samples are copied. One work-item per sample
// and plane.
#include "common.cl"

__kernel void pad(__global const float* in, __global float* out, const MoveArgs m,
                  const int left, const int top, const int border) {
  const int x = get_global_id(0);
  const int y = m.first + get_global_id(1);
  if (x >= m.out.width || y >= m.last) return;
  const int c = get_global_id(2);
  const int row = border_index(y - top, m.in.height, border);
  const int col = border_index(x - left, m.in.width, border);
  out[((size_t)c * m.out.rows + (y - m.out.y0)) * m.out.pitch + x] =
      row < 0 || col < 0 ? 0.0f
                         : in[((size_t)c * m.in.rows + (row - m.in.y0)) * m.in.pitch + col];
}
