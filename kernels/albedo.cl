// albedo_over_alpha: the guided filters' albedo for colour with alpha, divided by the colour's
// alpha (its fourth plane), 0 where alpha is 0 (lib/filters/guided/guides.cpp, the same operation;
// why there). The guide and the colour share their planes' layout.
#pragma OPENCL FP_CONTRACT OFF

__kernel void albedo_over_alpha(__global const float* albedo, __global const float* colour,
                                __global float* dst, const ulong plane) {
  const ulong at = get_global_id(0);
  if (at >= plane) return;
  const float alpha = colour[3 * plane + at];
  for (int c = 0; c < 3; ++c)
    dst[c * plane + at] = alpha > 0.0f ? albedo[c * plane + at] / alpha : 0.0f;
}
