// Turning by an angle that is not a multiple of 90 degrees (lib/filters/geometry/rotate.cpp); the
// `rotate` filter (lib/filters/geometry/mirror.cpp) takes the exact paths for the multiples.
#pragma once

#include <memory>

#include "filters/filter.hpp"

namespace halo {

// The stage for `rotate` with these arguments (filter, background, size) by `degrees`
// clockwise.
std::unique_ptr<Stage> make_free_rotation(const Args& args, double degrees);

}  // namespace halo
