// The sRGB transfer curve of IEC 61966-2-1, both ways, as the host computes it: one copy for
// the colour stages, denoise's input transforms and FLIP (their kernels write it in OpenCL C).
#pragma once

#include <cmath>

namespace halo {

inline float srgb_to_linear(float v) {
  return v <= 0.04045f ? v / 12.92f : std::pow((v + 0.055f) / 1.055f, 2.4f);
}

inline float linear_to_srgb(float v) {
  return v <= 0.0031308f ? v * 12.92f : 1.055f * std::pow(v, 1.0f / 2.4f) - 0.055f;
}

}  // namespace halo
