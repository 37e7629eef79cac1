// The rank filters' 3x3 median network, shared with its test (the filters themselves are
// registered in registry.cpp).
#pragma once

namespace halo {

// The median of w[0..8] by 19 compare-exchanges (kernels/rank.cl runs the same); w is
// reordered, the median left in w[4].
float median9(float* w);

}  // namespace halo
