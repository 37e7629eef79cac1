// Baked colour tables (lib/filters/colour/color_lut.cpp, whose ColorLut::apply is the same
// arithmetic): one work-item per pixel of the image rows [first, last) of the three colour planes;
// alpha, if any, is copied by the host. The table is float4 entries (r, g, b, unused).
#pragma OPENCL FP_CONTRACT OFF

#include "color_pixel.cl"

// The shaper (color_lut.hpp) on one side: SHAPER_LINEAR over [lo, hi]; SHAPER_LOG, 0..2^lo over the
// first `toe` of the table, then equal stops to 2^hi. `a` is 2^lo. NaN reads as 0.
inline float half_shape(const float x, const int kind, const float lo, const float hi,
                        const float toe, const float a) {
  if (kind == SHAPER_LINEAR) {
    const float u = (x - lo) / (hi - lo);
    return u > 0.0f ? (u < 1.0f ? u : 1.0f) : 0.0f;
  }
  if (!(x > 0.0f)) return 0.0f;
  if (x < a) return x / a * toe;
  const float u = toe + (1.0f - toe) * ((log2(x) - lo) / (hi - lo));
  return u < 1.0f ? u : 1.0f;
}

// With neg > 0: -2^neg_hi..0 over the table's first `neg`, the rest over what remains.
inline float shape(const float x, const int kind, const float8 s) {
  const float lo = s.s0, hi = s.s1, toe = s.s2, a = s.s3, neg = s.s4, neg_hi = s.s5;
  if (neg > 0.0f) {
    if (x < 0.0f) return neg * (1.0f - half_shape(-x, kind, lo, neg_hi, toe, a));
    return neg + (1.0f - neg) * half_shape(x, kind, lo, hi, toe, a);
  }
  return half_shape(x, kind, lo, hi, toe, a);
}

inline void locate(const float u, const int n, int* i, float* f) {
  const float pos = u * (float)(n - 1);
  *i = min((int)pos, n - 2);
  *f = pos - (float)*i;
}

// A shaper comes as (lo, hi, toe, 2^lo, neg, neg_hi) and its kind; split tables have a second
// one for their output curves.
#define COLOR_ARGS                                                                              \
  __global const float *in, __global float *out, const StripArgs strip,                        \
      __global const float4 *table, const int size, const float8 shaper, const int shaper_kind, \
      const float8 post_shaper, const int post_kind, const int colours, const float2 bounds

#define SHAPE(value, s, k) shape((value), (k), (s))

// Three curves of n entries from table[first]: channel c of (r, g, b) at its own position.
inline float curve(__global const float4* table, const int first, const int n, const float u,
                   const int c) {
  int i;
  float f;
  locate(u, n, &i, &f);
  const float4 t0 = table[first + i], t1 = table[first + i + 1];
  const float v0 = c == 0 ? t0.x : (c == 1 ? t0.y : t0.z);
  const float v1 = c == 0 ? t1.x : (c == 1 ? t1.y : t1.z);
  return v0 + f * (v1 - v0);
}

// Rows of (r, g, b, offset), read as 12 floats.
__kernel void color_matrix(COLOR_ARGS) {
  STRIP_FIELDS(strip);
  COLOUR_PROLOGUE
  const float r = v[0], g = v[1], b = v[2];
  for (int c = 0; c < 3; ++c) {
    const float4 m = table[c];
    STORE(c, m.x * r + m.y * g + m.z * b + m.w);
  }
}

__kernel void color_curves(COLOR_ARGS) {
  STRIP_FIELDS(strip);
  COLOUR_PROLOGUE
  for (int c = 0; c < 3; ++c) STORE(c, curve(table, 0, size, SHAPE(v[c], shaper, shaper_kind), c));
}

// Input curves (entries 0..size-1), the matrix's rows (entries 2 size ..), output curves
// (entries size .. 2 size - 1).
__kernel void color_split(COLOR_ARGS) {
  STRIP_FIELDS(strip);
  COLOUR_PROLOGUE
  for (int c = 0; c < 3; ++c) v[c] = curve(table, 0, size, SHAPE(v[c], shaper, shaper_kind), c);
  for (int c = 0; c < 3; ++c) {
    const float4 m = table[2 * size + c];
    const float mixed = m.x * v[0] + m.y * v[1] + m.z * v[2] + m.w;
    STORE(c, curve(table, size, size, SHAPE(mixed, post_shaper, post_kind), c));
  }
}

// Tetrahedral interpolation (ColorLut::apply, the same path): the order of the three fractions
// picks which of the cell's six tetrahedra (all sharing its diagonal) holds the point, and the
// corners a and b the path from 000 to 111 passes: v = c000 + f1 (ca - c000) + f2 (cb - ca) +
// f3 (c111 - cb).
__kernel void color_cube(COLOR_ARGS) {
  STRIP_FIELDS(strip);
  COLOUR_PROLOGUE
  int ir, ig, ib;
  float fr, fg, fb;
  locate(SHAPE(v[0], shaper, shaper_kind), size, &ir, &fr);
  locate(SHAPE(v[1], shaper, shaper_kind), size, &ig, &fg);
  locate(SHAPE(v[2], shaper, shaper_kind), size, &ib, &fb);
  const size_t n = size;
  const size_t base = ((size_t)ib * n + ig) * n + ir;
  const size_t dr = 1, dg = n, db = n * n;
  size_t a, b;
  float f1, f2, f3;
  if (fr > fg) {
    if (fg > fb) {
      a = dr, b = dr + dg, f1 = fr, f2 = fg, f3 = fb;
    } else if (fr > fb) {
      a = dr, b = dr + db, f1 = fr, f2 = fb, f3 = fg;
    } else {
      a = db, b = dr + db, f1 = fb, f2 = fr, f3 = fg;
    }
  } else if (fb > fg) {
    a = db, b = dg + db, f1 = fb, f2 = fg, f3 = fr;
  } else if (fb > fr) {
    a = dg, b = dg + db, f1 = fg, f2 = fb, f3 = fr;
  } else {
    a = dg, b = dr + dg, f1 = fg, f2 = fr, f3 = fb;
  }
  const float4 c000 = table[base], ca = table[base + a], cb = table[base + b];
  const float4 c111 = table[base + dr + dg + db];
  const float4 o = c000 + f1 * (ca - c000) + f2 * (cb - ca) + f3 * (c111 - cb);
  STORE(0, o.x);
  STORE(1, o.y);
  STORE(2, o.z);
}
