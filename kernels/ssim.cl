// SSIM on the device (lib/verify/ssim.cpp holds the reference and its settings). A strip holds
// image rows [row0, row0 + rows) of one channel of both images, `pitch` floats a row; the
// window's five moments are filtered across each row, then down the columns into SSIM at the
// centres of the strip's output rows, which the host adds up in double.
#pragma OPENCL FP_CONTRACT OFF

// Pass 1: a, b, a^2, b^2 and ab filtered across (columns [radius, width - radius) only: the
// centres SSIM averages). moments: [5][rows][width].
__kernel void ssim_across(__global const float* a, __global const float* b, const int width,
                          const int pitch, const int rows, __constant float* taps, const int radius,
                          __global float* moments) {
  const int x = get_global_id(0) + radius, i = get_global_id(1);
  if (x >= width - radius || i >= rows) return;
  float m0 = 0.0f, m1 = 0.0f, m2 = 0.0f, m3 = 0.0f, m4 = 0.0f;
  for (int k = -radius; k <= radius; ++k) {
    const float va = a[i * pitch + x + k], vb = b[i * pitch + x + k], w = taps[k + radius];
    m0 += w * va;
    m1 += w * vb;
    m2 += w * va * va;
    m3 += w * vb * vb;
    m4 += w * va * vb;
  }
  const int n = rows * width, at = i * width + x;
  moments[at] = m0;
  moments[n + at] = m1;
  moments[2 * n + at] = m2;
  moments[3 * n + at] = m3;
  moments[4 * n + at] = m4;
}

// Pass 2: down the columns, SSIM at the centres of strip rows [radius, radius + count).
// out: [count][width - 2 radius].
__kernel void ssim_down(__global const float* moments, const int width, const int rows,
                        const int count, __constant float* taps, const int radius, const float c1,
                        const float c2, __global float* out) {
  const int x = get_global_id(0) + radius, j = get_global_id(1);
  if (x >= width - radius || j >= count) return;
  const int n = rows * width;
  float m[5] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k <= 2 * radius; ++k)
    for (int q = 0; q < 5; ++q) m[q] += taps[k] * moments[q * n + (j + k) * width + x];
  const float ux = m[0], uy = m[1];
  const float vx = m[2] - ux * ux, vy = m[3] - uy * uy, vxy = m[4] - ux * uy;
  out[j * (width - 2 * radius) + x - radius] =
      (2.0f * ux * uy + c1) * (2.0f * vxy + c2) / ((ux * ux + uy * uy + c1) * (vx + vy + c2));
}
