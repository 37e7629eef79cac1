// OIDN's transfer functions (net/transfer.hpp).
#include "net/transfer.hpp"

#include <cmath>

#include "core/srgb.hpp"

namespace halo {

namespace {

constexpr float kPuA = 1.41283765e+03f, kPuB = 1.64593172e+00f, kPuC = 4.31384981e-01f,
                kPuD = -2.94139609e-03f, kPuE = 1.92653254e-01f, kPuF = 6.26026094e-03f,
                kPuG = 9.98620152e-01f, kPuY0 = 1.57945760e-06f, kPuY1 = 3.22087631e-02f,
                kPuX0 = 2.23151711e-03f, kPuX1 = 3.70974749e-01f;

}  // namespace

float pu_forward(float y) {
  return y <= kPuY0   ? kPuA * y
         : y <= kPuY1 ? kPuB * std::pow(y, kPuC) + kPuD
                      : kPuE * std::log(y + kPuF) + kPuG;
}

// 1 / pu_forward(65504): the largest half float maps to 1.
const float kPuNorm = 1.0f / pu_forward(65504.0f);

float forward(float y, Transfer t) {
  switch (t) {
    case Transfer::srgb:
      return linear_to_srgb(y);
    case Transfer::pu:
      return pu_forward(y) * kPuNorm;
    default:
      return y;
  }
}

float inverse(float x, Transfer t) {
  switch (t) {
    case Transfer::srgb:
      return srgb_to_linear(x);
    case Transfer::pu:
      x /= kPuNorm;
      return x <= kPuX0   ? x / kPuA
             : x <= kPuX1 ? std::pow((x - kPuD) / kPuB, 1.0f / kPuC)
                          : std::exp((x - kPuG) / kPuE) - kPuF;
    default:
      return x;
  }
}

}  // namespace halo
