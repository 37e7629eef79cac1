// The device's arithmetic ceiling, for halo_bench's floors: each work-item runs CHAINS
// independent chains (enough to hide the FMA latency) of STEPS fused multiply-adds on WIDTH-wide
// vectors (1 on GPUs, whose lanes are work-items; the vector width of the _vec kernels on
// CPUs), and stores their sum so the compiler keeps them. halo_bench counts
// 2 * CHAINS * STEPS * WIDTH flops a work-item.
#ifndef CHAINS
#define CHAINS 8
#endif
#ifndef STEPS
#define STEPS 1024
#endif
#ifndef WIDTH
#define WIDTH 1
#endif

#if WIDTH == 1
#define FLOATW float
#else
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define FLOATW CAT(float, WIDTH)
#endif

__kernel void peak_fma(__global float* out, const float a, const float b) {
  FLOATW v[CHAINS];
  for (int i = 0; i < CHAINS; ++i) v[i] = (FLOATW)((float)(get_global_id(0) + i));
  for (int s = 0; s < STEPS; ++s)
#pragma unroll
    for (int i = 0; i < CHAINS; ++i) v[i] = fma(v[i], (FLOATW)(a), (FLOATW)(b));
  FLOATW sum = v[0];
  for (int i = 1; i < CHAINS; ++i) sum += v[i];
#if WIDTH == 1
  out[get_global_id(0)] = sum;
#else
  out[get_global_id(0)] = sum.s0 + sum.s1;
#endif
}
