// flatten (lib/filters/colour/flatten.cpp): the colour over a background, alpha gone. One work-item
// per pixel of the image rows [first, last); `premultiplied` says how the colour holds alpha.
#pragma OPENCL FP_CONTRACT OFF

#include "common.cl"

__kernel void flatten(__global const float* in, __global float* out, const StripArgs strip,
                      const int colours, const int premultiplied, __constant float* background) {
  STRIP_FIELDS(strip);
  PIXEL_PROLOGUE
  const float a = in[colours * plane + at];
  for (int c = 0; c < colours; ++c) {
    const float v = in[c * plane + at];
    out[c * plane + at] = (premultiplied ? v : v * a) + background[c] * (1.0f - a);
  }
}
