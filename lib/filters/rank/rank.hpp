// The rank filters' 3x3 median network, shared with its test (the filters themselves are
// registered in registry.cpp).
#pragma once

namespace halo {

// The median of w[0..8] by 19 compare-exchanges (kernels/rank.cl runs the same); w is
// reordered, the median left in w[4].
float median9(float* w);

// The median of w[0..n-1], n odd, by forgetful selection (kernels/rank.cl runs the same): the
// first n/2 + 2 samples, their minimum and maximum dropped and the next sample taken in, until
// one is left. 168 compare-exchanges for 25 samples, 624 for 49, against 300 and 1176 for an
// odd-even transposition sort. w is reordered.
float forgetful_median(float* w, int n);

}  // namespace halo
