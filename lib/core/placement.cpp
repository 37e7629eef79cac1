// Placement's text, for -v and errors (core/placement.hpp).
#include "core/placement.hpp"

#include <fmt/format.h>

namespace halo {

std::string Placement::text(int width, int height) const {
  std::string text = fmt::format("{}x{} pixels at ({}, {})", width, height, x, y);
  if (full_width > 0 && full_height > 0)
    text += fmt::format(" of the {}x{} frame at ({}, {})", full_width, full_height, full_x, full_y);
  return text;
}

}  // namespace halo
