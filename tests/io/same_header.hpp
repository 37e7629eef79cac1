// Whether two readers present a file alike: halo's own readers (EXR, TIFF) against
// OpenImageIO's, which the module used for those files before.
#pragma once

#include <doctest/doctest.h>

#include "io/codec.hpp"

namespace halo::test {

// Size, channel names, alpha and placement equal (metadata and samples are each test's own).
inline void check_same_layout(const ImageHeader& ours, const ImageHeader& theirs) {
  REQUIRE(ours.width == theirs.width);
  REQUIRE(ours.height == theirs.height);
  CHECK(ours.channels == theirs.channels);
  CHECK(ours.alpha == theirs.alpha);
  CHECK(ours.placement.x == theirs.placement.x);
  CHECK(ours.placement.y == theirs.placement.y);
  CHECK(ours.placement.full_width == theirs.placement.full_width);
  CHECK(ours.placement.full_height == theirs.placement.full_height);
}

}  // namespace halo::test
