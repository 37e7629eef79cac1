// Mirrors (lib/filters/mirror.cpp): flop reverses each row, flip the order of the rows (on a
// whole image), rotate=180 both. Samples are copied, never computed. One work-item per sample
// of the image rows [first, last) and plane (alpha included).
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
