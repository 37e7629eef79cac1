// bilateral: edge-stopping separable Gaussian for renders (lib/filters/guided/bilateral.cpp).
//
// bilateral_flags marks discontinuities between each pixel and its four neighbours from the
// normal and depth guides (bit 1 left, 2 right, 4 top, 8 bottom), reading a tile of guides
// staged in local memory. bilateral_rows and bilateral_cols then walk from the centre
// outwards in each direction, stop at the first flagged edge (or, with border=zero, at the
// image edge), and divide by the sum of the weights they used.
//
// Optional per tap: a range weight exp(-|v_q - v_p|^2 * range_inv) on the colour (the
// self-guided bilateral for photos; range_inv = 0 turns it off), and albedo demodulation
// (rows divide every tap by its albedo, cols multiply the result by the centre's).
// Defines: TILE (flags work-group side). Colour channels: at most 4. Rows: STRIP_ARGS in
// common.cl; each kernel computes the image rows [first, last). The flags of a row need the
// guides of the rows above and below it, the rows pass the flags of its own row, so the host
// asks for flags and the rows pass over the output rows widened by r (guides by r + 1).
#pragma OPENCL FP_CONTRACT OFF

#include "guides.cl"

#ifndef TILE
#define TILE 16
#endif

__kernel __attribute__((reqd_work_group_size(TILE, TILE,
                       1))) void bilateral_flags( __global const float* geometry,
                       __global uchar* flags, const StripArgs strip, const float cos_angle,
                       const float dz, const int has_normal, const int has_depth) {
  STRIP_FIELDS(strip);
  __local surface_t tile[TILE + 2][TILE + 2];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int left = get_group_id(0) * TILE - 1, top = first + get_group_id(1) * TILE - 1;
  for (int i = ly * TILE + lx; i < (TILE + 2) * (TILE + 2); i += TILE * TILE) {
    const int tx = i % (TILE + 2), ty = i / (TILE + 2);
    const int x = clamp(left + tx, 0, width - 1);
    const int y = clamp(clamp(top + ty, 0, height - 1) - y0, 0, rows - 1);
    tile[ty][tx] = surface_at(geometry, (ulong)y * pitch + x);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int x = left + 1 + lx, y = top + 1 + ly;
  if (x >= width || y >= last) return;
  const surface_t s = tile[ly + 1][lx + 1];
  uchar f = 0;
  if (x > 0 && is_edge(s, tile[ly + 1][lx], cos_angle, dz, has_normal, has_depth)) f |= FLAG_LEFT;
  if (x < width - 1 && is_edge(s, tile[ly + 1][lx + 2], cos_angle, dz, has_normal, has_depth))
    f |= FLAG_RIGHT;
  if (y > 0 && is_edge(s, tile[ly][lx + 1], cos_angle, dz, has_normal, has_depth)) f |= FLAG_TOP;
  if (y < height - 1 && is_edge(s, tile[ly + 2][lx + 1], cos_angle, dz, has_normal, has_depth))
    f |= FLAG_BOTTOM;
  flags[(ulong)(y - y0) * pitch + x] = f;
}

// One direction (dir -1 or 1) of the walk along a line: `stride` steps between pixels in
// memory (image and flags alike), `n` the line length, `i0` the centre's index on the line,
// `origin` the line index of the buffer's first pixel on it (the strip's y0 for columns),
// `stop` the flag that ends the walk in this direction.
inline void walk(__global const float* src, __global const uchar* flags,
                 __global const float* albedo, __constant const float* weights, const ulong plane,
                 const ulong line_start, const int stride, const int n, const int origin,
                 const int i0, const int r, const int border, const int use_flags,
                 const uchar stop, const int dir, const int channels, const int demod,
                 const float albedo_min, const float range_inv, const float* centre, float* sum,
                 float* wsum) {
  for (int i = 1; i <= r; ++i) {
    const int from = i0 + dir * (i - 1);  // the pixel the step leaves
    if (use_flags && from >= 0 && from < n &&
        (flags[line_start + (ulong)(from - origin) * stride] & stop))
      break;
    const int q = border_index(i0 + dir * i, n, border);
    if (q < 0) break;
    float v[MAX_CHANNELS];
    const float d2 = read_tap(src, albedo, plane, line_start + (ulong)(q - origin) * stride,
                              channels, demod, albedo_min, centre, v);
    const float w = range_inv > 0.0f ? weights[i] * exp(-d2 * range_inv) : weights[i];
    accumulate(w, v, channels, sum, wsum);
  }
}

// One pass: horizontal (dx = 1) or vertical; `remod` multiplies the result by the centre's
// remodulating albedo (the guide, or its smoothed copy: lib/filters/guided/guides.hpp).
inline void bilateral_pass(__global const float* src, __global float* dst,
                           __global const uchar* flags, __global const float* albedo,
                           __global const float* remod_albedo, __constant const float* weights,
                           const int width, const int pitch,
                           STRIP_ARGS, const int channels, const int r, const int border,
                           const int use_flags, const int demod, const int remod,
                           const float albedo_min, const float range_inv, const int horizontal) {
  const int x = get_global_id(0), y = first + (int)get_global_id(1);
  if (x >= width || y >= last) return;
  const ulong plane = (ulong)pitch * rows, at = (ulong)(y - y0) * pitch + x;
  float centre[MAX_CHANNELS], sum[MAX_CHANNELS];
  float wsum = weights[0];
  for (int c = 0; c < CHANNEL_COUNT(channels); ++c) {
    centre[c] = colour_at(src, albedo, plane, at, c, demod, albedo_min);
    sum[c] = weights[0] * centre[c];
  }
  const ulong line_start = horizontal ? (ulong)(y - y0) * pitch : (ulong)x;
  const int stride = horizontal ? 1 : pitch, n = horizontal ? width : height;
  const int origin = horizontal ? 0 : y0, i0 = horizontal ? x : y;
  const uchar back = horizontal ? FLAG_LEFT : FLAG_TOP,
              ahead = horizontal ? FLAG_RIGHT : FLAG_BOTTOM;
  walk(src, flags, albedo, weights, plane, line_start, stride, n, origin, i0, r, border,
       use_flags, back, -1, channels, demod, albedo_min, range_inv, centre, sum, &wsum);
  walk(src, flags, albedo, weights, plane, line_start, stride, n, origin, i0, r, border,
       use_flags, ahead, 1, channels, demod, albedo_min, range_inv, centre, sum, &wsum);
  store_normalised(dst, remod_albedo, plane, at, channels, sum, wsum, remod, albedo_min);
}

#define PASS_ARGS                                                                              \
  __global const float *src, __global float *dst, __global const uchar *flags,                 \
      __global const float *albedo, __global const float *remod_albedo,                         \
      __constant const float *weights, const BilateralPassArgs a
#define PASS_VALUES                                                                            \
  src, dst, flags, albedo, remod_albedo, weights, a.strip.width, a.strip.pitch, a.strip.rows,   \
      a.strip.y0, a.strip.height, a.strip.first, a.strip.last, a.channels, a.r, a.border,       \
      a.use_flags, a.demod, a.remod, a.albedo_min, a.range_inv

__kernel void bilateral_rows(PASS_ARGS) {
  bilateral_pass(PASS_VALUES, 1);
}
__kernel void bilateral_cols(PASS_ARGS) {
  bilateral_pass(PASS_VALUES, 0);
}

// walk=2d (lib/filters/guided/bilateral.cpp pass_2d_reference, the same operation order): one pass
// over the (2r+1)^2 square, weights w[|dx|] w[|dy|]; a tap counts when an L-shaped path from
// the centre reaches it without crossing a flag (along the centre's row then the tap's column,
// or the centre's column then the tap's row). A step is blocked by the flag between the two
// pixels it maps to under the border rule (none between clamp's copies, nor across wrap's
// seam). row_open bit k + r: whether the sweep's direction is still open along row y + k
// (r <= 31, so 2r + 1 bits fit).
inline bool blocked(__global const uchar* flags, const int use_flags, const int x, const int y,
                    const int dx, const int dy, const int width, const int height, const int y0,
                    const int pitch, const int border) {
  if (!use_flags) return false;
  const int mx = border_index(x, width, border), my = border_index(y, height, border);
  const int nx = border_index(x + dx, width, border), ny = border_index(y + dy, height, border);
  if (mx < 0 || my < 0 || nx < 0 || ny < 0) return false;
  const int step = dx ? nx - mx : ny - my;
  if (step != 1 && step != -1) return false;
  const uchar bit = dx ? (step > 0 ? FLAG_RIGHT : FLAG_LEFT) : (step > 0 ? FLAG_BOTTOM : FLAG_TOP);
  return (flags[(ulong)(my - y0) * pitch + mx] & bit) != 0;
}

__kernel void bilateral_2d(PASS_ARGS) {
  STRIP_FIELDS(a.strip);
  const int channels = a.channels, r = a.r, border = a.border, use_flags = a.use_flags,
            demod = a.demod, remod = a.remod;
  const float albedo_min = a.albedo_min, range_inv = a.range_inv;
  const int x = get_global_id(0), y = first + (int)get_global_id(1);
  if (x >= width || y >= last) return;
  const ulong plane = (ulong)pitch * rows, at = (ulong)(y - y0) * pitch + x;
  float centre[MAX_CHANNELS], sum[MAX_CHANNELS];
  const float w0 = weights[0] * weights[0];
  float wsum = w0;
  for (int c = 0; c < CHANNEL_COUNT(channels); ++c) {
    centre[c] = colour_at(src, albedo, plane, at, c, demod, albedo_min);
    sum[c] = w0 * centre[c];
  }
  for (int sx = 1; sx >= -1; sx -= 2) {
    ulong row_open = ~0ul;
    bool along_row = true;
    for (int i = sx > 0 ? 0 : 1; i <= r; ++i) {
      if (i > 0) {
        const int from = x + sx * (i - 1);
        along_row =
            along_row && !blocked(flags, use_flags, from, y, sx, 0, width, height, y0, pitch, border);
        for (int k = -r; k <= r; ++k)
          if (blocked(flags, use_flags, from, y + k, sx, 0, width, height, y0, pitch, border))
            row_open &= ~(1ul << (k + r));
      }
      const int qx = border_index(x + sx * i, width, border);
      if (qx < 0) break;
      for (int sy = 1; sy >= -1; sy -= 2) {
        bool down_tap = true, down_centre = true;
        for (int j = sy > 0 ? 0 : 1; j <= r; ++j) {
          const int dy = sy * j;
          if (j > 0) {
            const int from = y + sy * (j - 1);
            down_tap = down_tap && !blocked(flags, use_flags, x + sx * i, from, 0, sy, width,
                                            height, y0, pitch, border);
            down_centre = down_centre && !blocked(flags, use_flags, x, from, 0, sy, width,
                                                  height, y0, pitch, border);
          }
          const int qy = strip_row(y + dy, y0, rows, height, border);
          if (qy < 0) break;
          if (i == 0 && j == 0) continue;
          if (!((along_row && down_tap) || (down_centre && ((row_open >> (dy + r)) & 1ul))))
            continue;
          float v[MAX_CHANNELS];
          const float d2 = read_tap(src, albedo, plane, (ulong)qy * pitch + qx, channels, demod,
                                    albedo_min, centre, v);
          const float spatial = weights[i] * weights[j];
          const float w = range_inv > 0.0f ? spatial * exp(-d2 * range_inv) : spatial;
          accumulate(w, v, channels, sum, &wsum);
        }
      }
    }
  }
  store_normalised(dst, remod_albedo, plane, at, channels, sum, wsum, remod, albedo_min);
}
