// SSIM on the device (lib/verify/ssim.cpp holds the reference and its settings). A strip holds
// image rows [row0, row0 + rows) of one channel of both images, `pitch` floats a row; the
// window's five moments are filtered across each row, then down the columns into SSIM at the
// centres of the strip's output rows, which the host adds up in double.
#pragma OPENCL FP_CONTRACT OFF

// The moments are taken about each column's sample in the strip's middle row (a shift the
// whole window of every centre in that column shares): variance is E[x^2] - E[x]^2, which in
// float cancels to noise on smooth areas (a sky) when x is far from 0; about a nearby sample
// both terms are small. The means are shifted back before SSIM's luminance term.
inline float shift_of(__global const float* plane, const int pitch, const int rows, const int x) {
  return plane[(rows / 2) * pitch + x];
}

// Pass 1: a, b, a^2, b^2 and ab filtered across (columns [radius, width - radius) only: the
// centres SSIM averages). moments: [5][rows][width].
__kernel void ssim_across(__global const float* a, __global const float* b, const int width,
                          const int pitch, const int rows, __constant float* taps, const int radius,
                          __global float* moments) {
  const int x = get_global_id(0) + radius, i = get_global_id(1);
  if (x >= width - radius || i >= rows) return;
  const float sa = shift_of(a, pitch, rows, x), sb = shift_of(b, pitch, rows, x);
  float m0 = 0.0f, m1 = 0.0f, m2 = 0.0f, m3 = 0.0f, m4 = 0.0f;
  for (int k = -radius; k <= radius; ++k) {
    const float va = a[i * pitch + x + k] - sa, vb = b[i * pitch + x + k] - sb;
    const float w = taps[k + radius];
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
__kernel void ssim_down(__global const float* a, __global const float* b, const int pitch,
                        __global const float* moments, const int width, const int rows,
                        const int count, __constant float* taps, const int radius, const float c1,
                        const float c2, __global float* out) {
  const int x = get_global_id(0) + radius, j = get_global_id(1);
  if (x >= width - radius || j >= count) return;
  const int n = rows * width;
  float m[5] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k <= 2 * radius; ++k)
    for (int q = 0; q < 5; ++q) m[q] += taps[k] * moments[q * n + (j + k) * width + x];
  // Variances and covariance about the shifted means (shift-invariant); the means shifted back.
  const float dx = m[0], dy = m[1];
  const float vx = m[2] - dx * dx, vy = m[3] - dy * dy, vxy = m[4] - dx * dy;
  const float ux = dx + shift_of(a, pitch, rows, x), uy = dy + shift_of(b, pitch, rows, x);
  out[j * (width - 2 * radius) + x - radius] =
      (2.0f * ux * uy + c1) * (2.0f * vxy + c2) / ((ux * ux + uy * uy + c1) * (vx + vy + c2));
}
