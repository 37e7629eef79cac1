// The separable path shared by gaussian, box, sep and rank-1 conv: a rows pass and a columns
// pass with host-computed weights. kernels/separable.cl is the device side.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "filters/filter.hpp"

namespace halo {

struct SeparableKernel {
  std::string filter;       // kernel name prefix: gaussian -> gaussian_rows, gaussian_cols
  std::vector<float> rows;  // horizontal weights, 2*rx+1 of them, applied first
  std::vector<float> cols;  // vertical weights, 2*ry+1, applied to the rows pass result
  float offset = 0.0f;      // added after the columns pass
  bool gray = false;
  Border border = Border::clamp;
};

std::unique_ptr<Stage> make_separable_stage(std::string spec, SeparableKernel kernel,
                                            std::vector<std::string> details);

// "[0.25 0.5 0.25]" for details and notes.
std::string format_weights(const std::vector<float>& weights);
// The 2r+1 Gaussian weights exp(-i^2 / (2 sigma^2)), normalised to sum 1 (gaussian.cpp).
std::vector<float> gaussian_weights(int r, double sigma);

}  // namespace halo
