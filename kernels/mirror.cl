// Mirrors and turns (lib/filters/geometry/mirror.cpp): flop reverses each row, flip the order of
// the rows (on a whole image), rotate=180 both, rotate=90/270 below. Samples are copied, never
// computed. One work-item per sample of the image rows [first, last) and plane (alpha too).
#include "common.cl"

__kernel void mirror(__global const float* in, __global float* out, const StripArgs strip,
                     const int flop, const int flip) {
  STRIP_FIELDS(strip);
  const int x = get_global_id(0);
  const int y = first + get_global_id(1);
  if (x >= width || y >= last) return;
  const size_t plane = (size_t)pitch * rows * get_global_id(2);
  const int from_x = flop ? width - 1 - x : x;
  const int from_y = flip ? height - 1 - y : y;
  out[plane + (size_t)(y - y0) * pitch + x] = in[plane + (size_t)(from_y - y0) * pitch + from_x];
}

// rotate=90 / 270: the output (in_height wide, in_width tall) from the whole input. Clockwise
// (cw = 1): out(x, y) = in(y, in_height - 1 - x); counter-clockwise: in(in_width - 1 - y, x).
__kernel void quarter_turn(__global const float* in, __global float* out, const MoveArgs m,
                           const int cw) {
  const int x = get_global_id(0);
  const int y = m.first + get_global_id(1);
  if (x >= m.out.width || y >= m.last) return;
  const int c = get_global_id(2);
  const int from_x = cw ? y : m.in.width - 1 - y;
  const int from_y = cw ? m.in.height - 1 - x : x;
  out[((size_t)c * m.out.rows + (y - m.out.y0)) * m.out.pitch + x] =
      in[((size_t)c * m.in.rows + (from_y - m.in.y0)) * m.in.pitch + from_x];
}
