// Mirrors and turns (lib/filters/mirror.cpp): flop reverses each row, flip the order of the
// rows (on a whole image), rotate=180 both, rotate=90/270 below. Samples are copied, never
// computed. One work-item per sample of the image rows [first, last) and plane (alpha too).
#include "common.cl"

__kernel void mirror(__global const float* in, __global float* out, const int width,
                     const int pitch, STRIP_ARGS, const int flop, const int flip) {
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
__kernel void quarter_turn(__global const float* in, __global float* out, const int in_width,
                           const int in_pitch, const int in_height, const int out_pitch,
                           const int out_rows, const int out_y0, const int first,
                           const int last, const int cw) {
  const int x = get_global_id(0);
  const int y = first + get_global_id(1);
  if (x >= in_height || y >= last) return;
  const int c = get_global_id(2);
  const int from_x = cw ? y : in_width - 1 - y;
  const int from_y = cw ? in_height - 1 - x : x;
  out[((size_t)c * out_rows + (y - out_y0)) * out_pitch + x] =
      in[((size_t)c * in_height + from_y) * in_pitch + from_x];
}
