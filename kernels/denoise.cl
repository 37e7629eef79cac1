// The denoise filter's network (lib/net/denoise_net.hpp, OIDN's U-Net) and its input
// and output transforms (lib/filters/denoise/denoise.cpp), on planar float32 tensors: channel after
// channel, height x width floats each.
//
// A convolution sums bias, then input channel by input channel, the 3x3 window row by row, as
// the reference does (with fma where it multiplies and adds); results agree with it to float
// rounding, not bit for bit.

#include "common.cl"

// ---- transfer functions (OIDN's training/color.py; the same constants as denoise.cpp) ----
// Chosen by TRANSFER_* (contract.h).

// The PU2 fit of Aydin et al. 2008 that OIDN publishes, normalised so that 65504 maps to 1.
#define PU_A 1.41283765e+03f
#define PU_B 1.64593172e+00f
#define PU_C 4.31384981e-01f
#define PU_D -2.94139609e-03f
#define PU_E 1.92653254e-01f
#define PU_F 6.26026094e-03f
#define PU_G 9.98620152e-01f
#define PU_Y0 1.57945760e-06f
#define PU_Y1 3.22087631e-02f
#define PU_X0 2.23151711e-03f
#define PU_X1 3.70974749e-01f

inline float transfer_forward(const float y, const int transfer, const float pu_norm) {
  if (transfer == TRANSFER_SRGB)
    return y <= 0.0031308f ? 12.92f * y : 1.055f * pow(y, 1.0f / 2.4f) - 0.055f;
  if (transfer == TRANSFER_PU) {
    const float x = y <= PU_Y0   ? PU_A * y
                    : y <= PU_Y1 ? PU_B * pow(y, PU_C) + PU_D
                                 : PU_E * log(y + PU_F) + PU_G;
    return x * pu_norm;
  }
  return y;
}

inline float transfer_inverse(float x, const int transfer, const float pu_norm) {
  if (transfer == TRANSFER_SRGB)
    return x <= 0.04045f ? x / 12.92f : pow((x + 0.055f) / 1.055f, 2.4f);
  if (transfer == TRANSFER_PU) {
    x = x / pu_norm;
    return x <= PU_X0   ? x / PU_A
           : x <= PU_X1 ? pow((x - PU_D) / PU_B, 1.0f / PU_C)
                        : exp((x - PU_G) / PU_E) - PU_F;
  }
  return x;
}

inline float nan_to_zero(const float v) { return isnan(v) ? 0.0f : v; }

// A float image somewhere in canvas coordinates (denoise.cpp's Canvas: the image, extended
// by the border rule for border=clamp|reflect|wrap): channel c of pixel (x, y) is at
// base[c * plane + ((y - oy) * pitch + (x - ox)) * step]: planar with step 1, interleaved
// (the normal and depth guides, kernels/guides.cl) with plane 1 and step 4. An image's (set
// `image`) is read through the border rule past its edges; a tensor made on the canvas is read
// as it is.
// A planar source: its buffer p and its PlanarLayout p##_at (contract.h).
#define PLANAR(p) __global const float *p, const PlanarLayout p##_at
#define PLANAR_AT(p, c, x, y)                                                  \
  p[(size_t)(c) * p##_at.plane +                                               \
    ((size_t)((y) - p##_at.oy) * p##_at.pitch + ((x) - p##_at.ox)) * p##_at.step]
// The same through the canvas's border (width, height, border in scope).
#define CANVAS_AT(p, c, x, y)                                                                   \
  PLANAR_AT(p, c, p##_at.image ? border_index(x, width, border) : (x),                          \
            p##_at.image ? border_index(y, height, border) : (y))

// The network's input tensor for the region [rx, rx + rw) x [ry, ry + rh) of the canvas (the
// image `width` x `height` and, past its edges, what `border` maps there), zero beyond it up to
// the tensor's size: the main image's 3 channels (1 broadcast to 3), then the
// albedo's and the normal's when `aux` has them (1: albedo, 2: albedo and normal), each
// sanitised as OIDN does. The main image: times `scale`, NaN to 0, clamped to [0, 1] (or
// [-1, 1] mapped to [0, 1] when `snorm`; [0, FLT_MAX] when `hdr`), then the transfer.
__kernel void denoise_input(__global float* dst, __global const float* main,
                            __global const float* albedo, __global const float* normal,
                            const DenoiseInputArgs a) {
  const int th = a.th, tw = a.tw, rx = a.rx, ry = a.ry, rw = a.rw,
            rh = a.rh, width = a.width, height = a.height, border = a.border,
            main_planes = a.main_planes, aux = a.aux, transfer = a.transfer.kind,
            hdr = a.transfer.hdr, snorm = a.transfer.snorm;
  const float pu_norm = a.transfer.pu_norm, scale = a.transfer.scale;
  const PlanarLayout main_at = a.main, albedo_at = a.albedo, normal_at = a.normal;
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= tw || y >= th) return;
  const size_t plane = (size_t)th * tw, at = (size_t)y * tw + x;
  const bool inside = x < rw && y < rh;
  const int ix = rx + x, iy = ry + y;
  for (int c = 0; c < 3; ++c) {
    float v = 0.0f;
    if (inside) {
      v = nan_to_zero(CANVAS_AT(main, main_planes == 1 ? 0 : c, ix, iy) * scale);
      v = clamp(v, snorm ? -1.0f : 0.0f, hdr ? FLT_MAX : 1.0f);
      if (snorm) v = v * 0.5f + 0.5f;
      v = transfer_forward(v, transfer, pu_norm);
    }
    dst[c * plane + at] = v;
  }
  if (aux >= 1)
    for (int c = 0; c < 3; ++c)
      dst[(3 + c) * plane + at] =
          inside ? clamp(nan_to_zero(CANVAS_AT(albedo, c, ix, iy)), 0.0f, 1.0f) : 0.0f;
  if (aux >= 2)
    for (int c = 0; c < 3; ++c)
      dst[(6 + c) * plane + at] =
          inside ? clamp(nan_to_zero(CANVAS_AT(normal, c, ix, iy)), -1.0f, 1.0f) * 0.5f + 0.5f
                 : 0.0f;
}

// The network's output (3 channels, the tensor's (0, 0) at image pixel (rx, ry)) into the
// pixels [cx, cx + cw) x [cy, cy + ch) of `out` (`planes` of 1 or 3: one takes the mean): NaN to
// 0, no less than 0, the inverse transfer, then [-1, 1] from [0, 1] when `snorm`, no more than
// 1 unless `hdr`, times `scale` (the inverse of the input's).
__kernel void denoise_output(__global const float* src, __global float* out,
                             const DenoiseOutputArgs a) {
  const int th = a.th, tw = a.tw, rx = a.rx, ry = a.ry, out_ox = a.out_ox, out_oy = a.out_oy,
            out_pitch = a.out_pitch, out_plane = a.out_plane, planes = a.planes, cx = a.cx,
            cy = a.cy, cw = a.cw, ch = a.ch, transfer = a.transfer.kind, hdr = a.transfer.hdr,
            snorm = a.transfer.snorm;
  const float pu_norm = a.transfer.pu_norm, scale = a.transfer.scale;
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= cw || y >= ch) return;
  const int ix = cx + x, iy = cy + y;
  const size_t plane = (size_t)th * tw, at = (size_t)(iy - ry) * tw + (ix - rx);
  float v[3];
  for (int c = 0; c < 3; ++c) {
    float s = max(nan_to_zero(src[c * plane + at]), 0.0f);
    s = transfer_inverse(s, transfer, pu_norm);
    if (snorm) s = max(s * 2.0f - 1.0f, -1.0f);
    if (!hdr) s = min(s, 1.0f);
    v[c] = s;
  }
  const size_t o = (size_t)(iy - out_oy) * out_pitch + (ix - out_ox);
  if (planes == 1) {
    out[o] = (v[0] + v[1] + v[2]) * (1.0f / 3.0f) * scale;
  } else {
    for (int c = 0; c < 3; ++c) out[(size_t)c * out_plane + o] = v[c] * scale;
  }
}

// Autoexposure's bins (OIDN: about 16x16 pixels each, bin i of n covering [i*H/n, (i+1)*H/n)):
// the mean luminance (Rec. 709 weights on colour with NaN as 0, clamped to [0, FLT_MAX]) of
// each. One work-group of GROUP_SQUARE x GROUP_SQUARE per bin.
__kernel __attribute__((reqd_work_group_size(GROUP_SQUARE, GROUP_SQUARE, 1))) void denoise_exposure_bins(
    PLANAR(image), const int planes, const int width, const int height, const int bins_w,
    const int bins_h, __global float* bins) {
  __local float sums[GROUP_SQUARE * GROUP_SQUARE];
  const int i = get_group_id(1), j = get_group_id(0);
  const int y0 = i * height / bins_h, y1 = (i + 1) * height / bins_h;
  const int x0 = j * width / bins_w, x1 = (j + 1) * width / bins_w;
  const int lx = get_local_id(0), ly = get_local_id(1), id = ly * GROUP_SQUARE + lx;
  float sum = 0.0f;
  for (int y = y0 + ly; y < y1; y += GROUP_SQUARE)
    for (int x = x0 + lx; x < x1; x += GROUP_SQUARE) {
      float c[3];
      for (int k = 0; k < 3; ++k)
        c[k] = clamp(nan_to_zero(PLANAR_AT(image, planes == 1 ? 0 : k, x, y)), 0.0f, FLT_MAX);
      sum += 0.212671f * c[0] + 0.715160f * c[1] + 0.072169f * c[2];
    }
  sums[id] = sum;
  for (int step = GROUP_SQUARE * GROUP_SQUARE / 2; step > 0; step >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (id < step) sums[id] += sums[id + step];
  }
  if (id == 0) bins[i * bins_w + j] = sums[0] / (float)((y1 - y0) * (x1 - x0));
}

// ---- the network's layers ----

// Weights as the host packs them for a tile of NET_OC_TILE output channels: tile t, input channel
// c (0 .. the input channels rounded up to NET_IN_STEP), tap k (row-major 3x3), output o of the
// tile: weight[((t * in_padded + c) * 9 + k) * NET_OC_TILE + o], zero past the real channels; bias
// likewise padded to whole tiles.

#ifndef RELU
#define RELU 1
#endif
#ifndef UPSAMPLE
#define UPSAMPLE 0
#endif
#ifndef POOL
#define POOL 0
#endif

inline float activation(const float v) { return RELU ? fmax(v, 0.0f) : v; }

// Input channel c of the concatenated input at (x, y) of an h x w layer (zero outside): src's
// channels first (read at half resolution when UPSAMPLE), then skip's.
inline float layer_input(__global const float* src, const int src_c, __global const float* skip,
                         const int c, const int y, const int x, const int h, const int w) {
  if (y < 0 || y >= h || x < 0 || x >= w) return 0.0f;
  if (c < src_c) {
    if (UPSAMPLE) return src[((size_t)c * (h / 2) + (y >> 1)) * (w / 2) + (x >> 1)];
    return src[((size_t)c * h + y) * w + x];
  }
  return skip[((size_t)(c - src_c) * h + y) * w + x];
}

#ifdef NET_TILED
// GPUs: a work-group computes NET_TILE_X x NET_TILE_Y pixels of NET_OC_TILE output channels,
// each work-item a 2 x 2 block (pooled to one pixel with POOL) of NET_OC_ITEM channels. Input
// channels come NET_IN_STEP at a time: their (NET_TILE_Y + 2) x (NET_TILE_X + 2) patch and their
// weights are staged in local memory, then every work-item runs its 3x3 windows from there.
// Work-group: (NET_TILE_X / 2, NET_TILE_Y / 2, NET_OC_TILE / NET_OC_ITEM).
#define LX (NET_TILE_X / 2)
#define LY (NET_TILE_Y / 2)
#define LC (NET_OC_TILE / NET_OC_ITEM)
#define PATCH_W (NET_TILE_X + 2)
#define PATCH_H (NET_TILE_Y + 2)

__kernel __attribute__((reqd_work_group_size(LX, LY, LC))) void denoise_conv(
    __global const float* restrict src, const int src_c, __global const float* restrict skip,
    __global const float* restrict weight, __global const float* restrict bias,
    __global float* restrict dst, const int in_c, const int out_c, const int h, const int w) {
  __local float patch[NET_IN_STEP][PATCH_H][PATCH_W];
  __local float taps[NET_IN_STEP * 9 * NET_OC_TILE];
  const int lx = get_local_id(0), ly = get_local_id(1), lc = get_local_id(2);
  const int id = (lc * LY + ly) * LX + lx;
  const int threads = LX * LY * LC;
  const int x0 = get_group_id(0) * NET_TILE_X, y0 = get_group_id(1) * NET_TILE_Y;
  const int tile = get_group_id(2);
  const int in_padded = (in_c + NET_IN_STEP - 1) / NET_IN_STEP * NET_IN_STEP;

  float acc[NET_OC_ITEM][2][2];
  for (int o = 0; o < NET_OC_ITEM; ++o) {
    const float b = bias[tile * NET_OC_TILE + lc * NET_OC_ITEM + o];
    acc[o][0][0] = acc[o][0][1] = acc[o][1][0] = acc[o][1][1] = b;
  }
  for (int c0 = 0; c0 < in_c; c0 += NET_IN_STEP) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = id; i < NET_IN_STEP * PATCH_H * PATCH_W; i += threads) {
      const int k = i / (PATCH_H * PATCH_W), r = i % (PATCH_H * PATCH_W);
      const int py = r / PATCH_W, px = r % PATCH_W;
      const int c = c0 + k;
      patch[k][py][px] =
          c < in_c ? layer_input(src, src_c, skip, c, y0 - 1 + py, x0 - 1 + px, h, w) : 0.0f;
    }
    __global const float* wt = weight + ((size_t)tile * in_padded + c0) * 9 * NET_OC_TILE;
    for (int i = id; i < NET_IN_STEP * 9 * NET_OC_TILE; i += threads) taps[i] = wt[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < NET_IN_STEP; ++k) {
      float v[4][4];  // the work-item's 2x2 block with its one-pixel rim
      for (int r = 0; r < 4; ++r)
        for (int s = 0; s < 4; ++s) v[r][s] = patch[k][2 * ly + r][2 * lx + s];
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) {
          __local const float* t = taps + (k * 9 + ky * 3 + kx) * NET_OC_TILE + lc * NET_OC_ITEM;
          for (int o = 0; o < NET_OC_ITEM; ++o) {
            const float wo = t[o];
            acc[o][0][0] = fma(wo, v[ky][kx], acc[o][0][0]);
            acc[o][0][1] = fma(wo, v[ky][kx + 1], acc[o][0][1]);
            acc[o][1][0] = fma(wo, v[ky + 1][kx], acc[o][1][0]);
            acc[o][1][1] = fma(wo, v[ky + 1][kx + 1], acc[o][1][1]);
          }
        }
    }
  }
  // Pooled layers have even sides (levels above the deepest); the deepest level's may be odd,
  // so the block's second row and column are checked on their own.
  const int x = x0 + 2 * lx, y = y0 + 2 * ly;
  if (x >= w || y >= h) return;
  for (int o = 0; o < NET_OC_ITEM; ++o) {
    const int oc = tile * NET_OC_TILE + lc * NET_OC_ITEM + o;
    if (oc >= out_c) break;
    if (POOL) {
      const float m = fmax(fmax(acc[o][0][0], acc[o][0][1]), fmax(acc[o][1][0], acc[o][1][1]));
      dst[((size_t)oc * (h / 2) + y / 2) * (w / 2) + x / 2] = activation(m);
    } else {
      __global float* d = dst + ((size_t)oc * h + y) * w + x;
      d[0] = activation(acc[o][0][0]);
      if (x + 1 < w) d[1] = activation(acc[o][0][1]);
      if (y + 1 < h) {
        d[w] = activation(acc[o][1][0]);
        if (x + 1 < w) d[w + 1] = activation(acc[o][1][1]);
      }
    }
  }
}
#endif

#ifdef NET_MMA
// NVIDIA GPUs from Ampere on, precision=tf32 and fp16: the convolution as a matrix product on
// the tensor cores (mma.sync through inline PTX, float sums), pixels as rows, input channels of
// one tap as the inner dimension, output channels as columns. A work-group computes NET_TILE_X x
// NET_TILE_Y pixels of NET_OC_TILE output channels; each warp two rows of 16 pixels (two m16
// tiles: a 2x2 pooling window never leaves a warp) and all NET_OC_TILE channels. Input channels
// come a stage at a time: their (NET_TILE_Y + 2) x (NET_TILE_X + 2) patch and their weights
// (rounded on the host) are staged in local memory as 32-bit words, each word-plane padded so
// that the fragments' loads meet no bank twice.
// - tf32 (m16n8k8): 8 channels a stage, a word per channel, rounded to TF32 as staged.
// - fp16 (NET_F16, m16n8k16): 16 channels a stage as 8 pairs, a word per pair (channel 2p in
//   its low half, 2p + 1 in its high half: the fragments' own packing, so that the same loads
//   serve). A layer's input pairs are its source's pairs, then its skip's, each side's channel
//   count rounded up to even (the weights are packed to match). Tensors between layers hold
//   such pairs too (SRC_PAIRS, SKIP_PAIRS, DST_PAIRS: plane p holds channels 2p and 2p + 1),
//   half the bytes of float; half holds at most 65504, so values are clamped to it.
#ifndef NET_F16
#define NET_F16 0
#endif
#ifndef SRC_PAIRS
#define SRC_PAIRS 0
#endif
#ifndef SKIP_PAIRS
#define SKIP_PAIRS 0
#endif
#ifndef DST_PAIRS
#define DST_PAIRS 0
#endif
#define MT_X (NET_TILE_X / 16)
#define WARPS (MT_X * NET_TILE_Y / 2)
#define N_TILES (NET_OC_TILE / 8)
#define PATCH_W (NET_TILE_X + 2)
#define PATCH_H (NET_TILE_Y + 2)
#define BANK_PAD(n) ((n) + (40 - (n) % 32) % 32)  // the next size that is 8 mod 32
#define PATCH_C BANK_PAD(PATCH_H * PATCH_W)
#define TAPS_C BANK_PAD(9 * NET_OC_TILE)

inline uint lane_id(void) {
  uint r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}
inline uint to_tf32(const float f) {
  uint r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(f));
  return r;
}
// lo and hi as two halves of a word (lo in the low bits), clamped to half's range.
inline uint to_half2(const float lo, const float hi) {
  uint r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;"
      : "=r"(r)
      : "f"(clamp(hi, -65504.0f, 65504.0f)), "f"(clamp(lo, -65504.0f, 65504.0f)));
  return r;
}
inline float lane_xor(const float v, const int mask) {
  float r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(v), "r"(mask));
  return r;
}
// d += a (16 x K, rows) * b (K x 8, columns): one warp's tensor-core step, K 16 halves or 8
// tf32 values a stage.
#if NET_F16
#define MMA_SHAPE "m16n8k16.row.col.f32.f16.f16.f32"
#else
#define MMA_SHAPE "m16n8k8.row.col.f32.tf32.tf32.f32"
#endif
#define MMA(d, a, b0, b1)                                                                      \
  asm volatile("mma.sync.aligned." MMA_SHAPE " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "        \
               "{%0,%1,%2,%3};"                                                                \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))

#if NET_F16
// Pair p of `planes` (c channels, stored as pairs when PAIRS) at (x, y) of an h x w layer, zero
// outside; `up`: planes at half resolution, read nearest.
inline uint pair_of(__global const float* planes, const int pairs_stored, const int c, const int p,
                    int y, int x, int h, int w, const bool up) {
  if (y < 0 || y >= h || x < 0 || x >= w) return 0u;
  if (up) y >>= 1, x >>= 1, h /= 2, w /= 2;
  const size_t at = (size_t)y * w + x, plane = (size_t)h * w;
  if (pairs_stored) return ((__global const uint*)planes)[p * plane + at];
  const float lo = 2 * p < c ? planes[2 * p * plane + at] : 0.0f;
  const float hi = 2 * p + 1 < c ? planes[(2 * p + 1) * plane + at] : 0.0f;
  return to_half2(lo, hi);
}

// Pair p of the layer's input: src's pairs, then skip's.
inline uint layer_pair(__global const float* src, const int src_c, __global const float* skip,
                       const int in_c, const int p, const int y, const int x, const int h,
                       const int w) {
  const int src_pairs = (src_c + 1) / 2;
  if (p < src_pairs) return pair_of(src, SRC_PAIRS, src_c, p, y, x, h, w, UPSAMPLE);
  return pair_of(skip, SKIP_PAIRS, in_c - src_c, p - src_pairs, y, x, h, w, false);
}
#endif

__kernel __attribute__((reqd_work_group_size(32 * WARPS, 1, 1))) void denoise_conv(
    __global const float* restrict src, const int src_c, __global const float* restrict skip,
    __global const float* restrict weight, __global const float* restrict bias,
    __global float* restrict dst, const int in_c, const int out_c, const int h, const int w) {
  __local uint patch[8 * PATCH_C];
  __local uint taps[8 * TAPS_C];
  const int id = get_local_id(0), warp = id / 32;
  const int lane = (int)lane_id(), g = lane >> 2, t = lane & 3;
  const int x0 = get_group_id(0) * NET_TILE_X, y0 = get_group_id(1) * NET_TILE_Y;
  const int tile = get_group_id(2);
  // The stages: 8 words each (channels for tf32, pairs of channels for fp16).
#if NET_F16
  const int words = (src_c + 1) / 2 + (in_c - src_c + 1) / 2;
#else
  const int words = in_c;
#endif
  const int words_padded = (words + 7) / 8 * 8;
  // The warp's 16 columns and two rows of the work-group's tile.
  const int px = (warp % MT_X) * 16, py = (warp / MT_X) * 2;

  float acc[2][N_TILES][4];
  for (int n = 0; n < N_TILES; ++n) {
    const float b0 = bias[tile * NET_OC_TILE + n * 8 + 2 * t],
                b1 = bias[tile * NET_OC_TILE + n * 8 + 2 * t + 1];
    for (int m = 0; m < 2; ++m) acc[m][n][0] = acc[m][n][2] = b0, acc[m][n][1] = acc[m][n][3] = b1;
  }
  for (int c0 = 0; c0 < words; c0 += 8) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = id; i < 8 * PATCH_H * PATCH_W; i += 32 * WARPS) {
      const int k = i / (PATCH_H * PATCH_W), r = i % (PATCH_H * PATCH_W);
      const int c = c0 + k, yy = y0 - 1 + r / PATCH_W, xx = x0 - 1 + r % PATCH_W;
#if NET_F16
      patch[k * PATCH_C + r] = c < words ? layer_pair(src, src_c, skip, in_c, c, yy, xx, h, w) : 0u;
#else
      patch[k * PATCH_C + r] =
          to_tf32(c < in_c ? layer_input(src, src_c, skip, c, yy, xx, h, w) : 0.0f);
#endif
    }
    __global const uint* wt =
        (__global const uint*)weight + ((size_t)tile * words_padded + c0) * 9 * NET_OC_TILE;
    for (int i = id; i < 8 * 9 * NET_OC_TILE; i += 32 * WARPS)
      taps[(i / (9 * NET_OC_TILE)) * TAPS_C + i % (9 * NET_OC_TILE)] = wt[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int ky = 0; ky < 3; ++ky)
      for (int kx = 0; kx < 3; ++kx) {
        // A: rows are pixels px + g (+ 8), columns words t (+ 4).
        uint a[2][4];
        for (int m = 0; m < 2; ++m) {
          __local const uint* row = patch + (py + m + ky) * PATCH_W + px + g + kx;
          a[m][0] = row[t * PATCH_C];
          a[m][1] = row[t * PATCH_C + 8];
          a[m][2] = row[(t + 4) * PATCH_C];
          a[m][3] = row[(t + 4) * PATCH_C + 8];
        }
        // B: rows are words t (+ 4), columns output channels g of each n8 tile.
        __local const uint* b = taps + (ky * 3 + kx) * NET_OC_TILE + g;
        for (int n = 0; n < N_TILES; ++n) {
          const uint b0 = b[t * TAPS_C + n * 8], b1 = b[(t + 4) * TAPS_C + n * 8];
          MMA(acc[0][n], a[0], b0, b1);
          MMA(acc[1][n], a[1], b0, b1);
        }
      }
  }
  // D: row g (+ 8) is pixel px + g (+ 8), column 2t (+ 1) output channel n * 8 + 2t (+ 1).
  const int y = y0 + py;
  const int oh = POOL ? h / 2 : h, ow = POOL ? w / 2 : w;
  for (int n = 0; n < N_TILES; ++n)
    for (int half_row = 0; half_row < 2; ++half_row) {
      const int oc = tile * NET_OC_TILE + n * 8 + 2 * t;  // and oc + 1
      const int x = x0 + px + g + 8 * half_row;
      float v0[2], v1[2];  // rows y and y + 1 of channels oc and oc + 1
      for (int j = 0; j < 2; ++j) {
        v0[j] = activation(acc[0][n][2 * half_row + j]);
        v1[j] = activation(acc[1][n][2 * half_row + j]);
        if (POOL) {
          // The 2x2 window: the warp's two rows, and pixel x's neighbour in the lane 4 away.
          const float v = fmax(v0[j], v1[j]);
          v0[j] = fmax(v, lane_xor(v, 4));
        }
      }
      if (POOL && (g & 1)) continue;
      const int oy = POOL ? y / 2 : y, ox = POOL ? x / 2 : x;
      if (x >= w || y >= h || oc >= out_c) continue;
#if DST_PAIRS
      // out_c is even here: the pair is whole.
      __global uint* d = (__global uint*)dst + ((size_t)(oc / 2) * oh + oy) * ow + ox;
      d[0] = to_half2(v0[0], v0[1]);
      if (!POOL && y + 1 < h) d[ow] = to_half2(v1[0], v1[1]);  // odd at the deepest level
#else
      for (int j = 0; j < 2 && oc + j < out_c; ++j) {
        __global float* d = dst + ((size_t)(oc + j) * oh + oy) * ow + ox;
        d[0] = v0[j];
        if (!POOL && y + 1 < h) d[ow] = v1[j];
      }
#endif
    }
}
#endif

#ifdef NET_VEC
// CPUs: a work-item computes VEC neighbouring pixels of one row (one vector) for NET_OC_TILE output
// channels, loading each input row's three shifted vectors once for the 3x3 window's columns;
// the weights are broadcast from memory. Upsampling and pooling are separate kernels here
// (denoise_upsample, denoise_pool).

// VEC pixels of `row` from x on, zero outside [0, w).
inline FLOATV edge_load(__global const float* row, const int x, const int w) {
  float v[VEC];
  for (int i = 0; i < VEC; ++i) v[i] = x + i >= 0 && x + i < w ? row[x + i] : 0.0f;
  return VLOAD(0, v);
}

// One input row's three taps into every accumulator: `row` points at the work-item's first
// pixel, `t` at the row's 3 x NET_OC_TILE weights. EDGE: columns past the sides read as zero.
#define ROW_TAPS(EDGE)                                                         \
  {                                                                            \
    const FLOATV v0 = EDGE ? edge_load(row - x0, x0 - 1, w) : VLOAD(0, row - 1); \
    const FLOATV v1 = EDGE ? edge_load(row - x0, x0, w) : VLOAD(0, row);       \
    const FLOATV v2 = EDGE ? edge_load(row - x0, x0 + 1, w) : VLOAD(0, row + 1); \
    for (int o = 0; o < NET_OC_TILE; ++o) {                                    \
      acc[o] = fma((FLOATV)(t[o]), v0, acc[o]);                                \
      acc[o] = fma((FLOATV)(t[NET_OC_TILE + o]), v1, acc[o]);                  \
      acc[o] = fma((FLOATV)(t[2 * NET_OC_TILE + o]), v2, acc[o]);              \
    }                                                                          \
  }

// Every input channel of `planes` (c0 .. c1 of the concatenated input, planes starting at
// channel c0) into the accumulators. Rows past the top and bottom are skipped.
#define CHANNELS(planes, c0, c1, EDGE)                                                    \
  for (int c = c0; c < c1; ++c) {                                                         \
    __global const float* col = planes + (size_t)(c - c0) * h * w + x0;                   \
    __global const float* wt = weight + ((size_t)tile * in_padded + c) * 9 * NET_OC_TILE; \
    if (y > 0) {                                                                          \
      __global const float* row = col + (size_t)(y - 1) * w;                              \
      __global const float* t = wt;                                                       \
      ROW_TAPS(EDGE)                                                                      \
    }                                                                                     \
    {                                                                                     \
      __global const float* row = col + (size_t)y * w;                                    \
      __global const float* t = wt + 3 * NET_OC_TILE;                                     \
      ROW_TAPS(EDGE)                                                                      \
    }                                                                                     \
    if (y < h - 1) {                                                                      \
      __global const float* row = col + (size_t)(y + 1) * w;                              \
      __global const float* t = wt + 6 * NET_OC_TILE;                                     \
      ROW_TAPS(EDGE)                                                                      \
    }                                                                                     \
  }

__kernel void denoise_conv(__global const float* restrict src, const int src_c,
                           __global const float* restrict skip,
                           __global const float* restrict weight,
                           __global const float* restrict bias, __global float* restrict dst,
                           const int in_c, const int out_c, const int h, const int w) {
  // Output channel tiles first: neighbouring work-groups share their input rows in the cache.
  const int tile = get_global_id(0), x0 = get_global_id(1) * VEC, y = get_global_id(2);
  if (x0 >= w || y >= h) return;
  const int in_padded = (in_c + NET_IN_STEP - 1) / NET_IN_STEP * NET_IN_STEP;
  FLOATV acc[NET_OC_TILE];
  for (int o = 0; o < NET_OC_TILE; ++o) acc[o] = (FLOATV)(bias[tile * NET_OC_TILE + o]);
  if (x0 >= 1 && x0 + VEC + 1 <= w) {
    CHANNELS(src, 0, src_c, false)
    CHANNELS(skip, src_c, in_c, false)
  } else {
    CHANNELS(src, 0, src_c, true)
    CHANNELS(skip, src_c, in_c, true)
  }
  for (int o = 0; o < NET_OC_TILE; ++o) {
    const int oc = tile * NET_OC_TILE + o;
    if (oc >= out_c) break;
    __global float* d = dst + ((size_t)oc * h + y) * w + x0;
    const FLOATV r = RELU ? fmax(acc[o], 0.0f) : acc[o];
    if (x0 + VEC <= w) {
      VSTORE(r, 0, d);
    } else {
      float lanes[VEC];
      VSTORE(r, 0, lanes);
      for (int i = 0; x0 + i < w; ++i) d[i] = lanes[i];
    }
  }
}
#endif

// dst (channels x 2h x 2w) from src (channels x h x w), nearest.
__kernel void denoise_upsample(__global const float* src, __global float* dst, const int h,
                               const int w) {
  const int x = get_global_id(0), y = get_global_id(1), c = get_global_id(2);
  if (x >= 2 * w || y >= 2 * h) return;
  dst[((size_t)c * 2 * h + y) * 2 * w + x] = src[((size_t)c * h + y / 2) * w + x / 2];
}

// dst (channels x h/2 x w/2): the largest of each 2x2 block of src (channels x h x w).
__kernel void denoise_pool(__global const float* src, __global float* dst, const int h,
                           const int w) {
  const int x = get_global_id(0), y = get_global_id(1), c = get_global_id(2);
  if (x >= w / 2 || y >= h / 2) return;
  __global const float* s = src + ((size_t)c * h + 2 * y) * w + 2 * x;
  dst[((size_t)c * (h / 2) + y) * (w / 2) + x] = fmax(fmax(s[0], s[1]), fmax(s[w], s[w + 1]));
}
