// pad (lib/filters/pad.cpp): output pixel (x, y) is the input's (x - left, y - top), or, past
// the input's edges, what the border rule reads there (border_index, as the filters read past
// their edges); zero where the rule gives none. Samples are copied. One work-item per sample
// and plane; the output strip's rows come from STRIP_ARGS.
#include "common.cl"

__kernel void pad(__global const float* in, const int in_width, const int in_pitch,
                  const int in_rows, const int in_y0, const int in_height, __global float* out,
                  const int width, const int pitch, STRIP_ARGS, const int left, const int top,
                  const int border) {
  PIXEL_PROLOGUE
  const int c = get_global_id(2);
  const int row = border_index(y - top, in_height, border);
  const int col = border_index(x - left, in_width, border);
  out[c * plane + at] = row < 0 || col < 0
                            ? 0.0f
                            : in[((size_t)c * in_rows + (row - in_y0)) * in_pitch + col];
}
