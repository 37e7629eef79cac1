// Device-against-reference checks shared by the filter tests.
#pragma once

#include <doctest/doctest.h>

#include "filters/convert.hpp"
#include "filters/registry.hpp"
#include "support.hpp"
#include "verify/compare.hpp"

namespace halo::test {

inline constexpr const char* kBorders[] = {"zero", "clamp", "reflect", "wrap"};

inline void check_device_matches(Device& device, const std::string& spec, const Image& in,
                                 double tolerance = 1e-5) {
  const auto stage = make_stage(spec);
  const DeviceImage result = stage->enqueue(device, upload(device, to_pixels(in, PixelType::f32)));
  const Comparison c = compare(download_image(device, result), stage->reference(in), tolerance);
  device.take_timings();
  INFO(spec, " on ", in.width(), "x", in.height(), "x", in.channels(), ": ", c.summary());
  CHECK(c.ok());
}

inline void check_device_matches(const std::string& spec, const Image& in) {
  check_device_matches(device(), spec, in);
}

}  // namespace halo::test
