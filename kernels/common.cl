// Helpers shared by halo's kernels. Border addressing must match halo::border_index in
// lib/filters/filter.cpp exactly. The mode is a kernel argument rather than a define: the
// branch is uniform and only taken outside the image, and one program serves all four modes.
#ifndef HALO_COMMON_CL
#define HALO_COMMON_CL

#define BORDER_ZERO 0
#define BORDER_CLAMP 1
#define BORDER_REFLECT 2
#define BORDER_WRAP 3

// Index of the pixel that stands in for coordinate i of a line of n pixels; -1 means "zero".
inline int border_index(int i, const int n, const int border) {
  if (i >= 0 && i < n) return i;
  switch (border) {
    case BORDER_ZERO:
      return -1;
    case BORDER_CLAMP:
      return clamp(i, 0, n - 1);
    case BORDER_REFLECT: {
      // Mirror about the edge pixel without repeating it (dcb|abcd|cba), for any distance.
      if (n == 1) return 0;
      const int period = 2 * n - 2;
      i = abs(i) % period;
      return i < n ? i : period - i;
    }
    default:
      return ((i % n) + n) % n;
  }
}

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

// The CPU forms of the kernels (VEC from the tuning table): VEC-wide float vectors.
#ifndef VEC
#define VEC 16
#endif
#define FLOATV CAT(float, VEC)
#define VLOAD CAT(vload, VEC)
#define VSTORE CAT(vstore, VEC)

#endif
