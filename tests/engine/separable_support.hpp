// Device-against-reference checks shared by the filter tests.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "filters/registry.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/transfer.hpp"
#include "support.hpp"
#include "verify/compare.hpp"

namespace halo::test {

inline constexpr const char* kBorders[] = {"zero", "clamp", "reflect", "wrap"};

// Twice: with the input kept (as benchmarks and the tuner run a stage) and given up to the
// stage (DeviceImage::scratch, as the streaming lane runs it: the result may take its buffer).
inline void check_device_matches(Device& device, const std::string& spec, const Image& in,
                                 double tolerance = 1e-5) {
  const auto stage = make_stage(spec);
  const Image expected = stage->reference(in);
  for (const bool scratch : {false, true}) {
    DeviceImage input = upload(device, to_pixels(in, PixelType::f32));
    input.scratch = scratch;
    const DeviceImage result = stage->enqueue(device, input);
    const Comparison c = compare(download_image(device, result), expected, tolerance);
    device.take_timings();
    INFO(spec, " on ", in.width(), "x", in.height(), "x", in.channels(),
         scratch ? " (scratch)" : "", ": ", c.summary());
    CHECK(c.ok());
    if (!scratch) CHECK(compare(download_image(device, input), in, 0.0).ok());  // left alone
  }
}

inline void check_device_matches(const std::string& spec, const Image& in) {
  check_device_matches(device(), spec, in);
}

// The kernels a stage launches on a 40x30 image, by their timing labels ("gaussian_rows
// gaussian_cols"): which path a tuning and a device's limits chose.
inline std::string launched_kernels(Device& device, const std::string& spec) {
  const auto stage = make_stage(spec);
  const DeviceImage in = upload(device, to_pixels(random_image(40, 30, 1), PixelType::f32));
  device.take_timings();
  stage->enqueue(device, in);
  std::string labels;
  for (const auto& t : device.take_timings()) labels += (labels.empty() ? "" : " ") + t.label;
  return labels;
}

// The same bits in every sample (NaN equal to NaN): for stages that are exact on NaN and
// infinities too.
inline void check_device_bits(const std::string& spec, const Image& in) {
  const auto stage = make_stage(spec);
  const Image expected = stage->reference(in);
  Device& dev = device();
  const Image got =
      download_image(dev, stage->enqueue(dev, upload(dev, to_pixels(in, PixelType::f32))));
  dev.take_timings();
  INFO(spec, " on ", in.width(), "x", in.height(), "x", in.channels());
  std::size_t differing = 0;
  for (int c = 0; c < in.channels(); ++c)
    for (int y = 0; y < in.height(); ++y)
      for (int x = 0; x < in.width(); ++x) {
        const float a = got.at(x, y, c), b = expected.at(x, y, c);
        // NaN equals NaN whatever its payload: devices return their own (NVIDIA's arithmetic
        // gives 0x7fffffff for every NaN, x86 keeps the operand's).
        if (std::isnan(a) && std::isnan(b)) continue;
        if (std::memcmp(&a, &b, sizeof a) != 0) ++differing;
      }
  CHECK(differing == 0);
}

// A pipeline of specs given in the code.
inline Pipeline chain(const std::vector<std::string>& specs) {
  std::vector<StageSpec> list;
  for (const auto& s : specs) list.push_back({s, ""});
  return Pipeline(list);
}

// `pipeline` run in strips of each height: equal to `whole` on the reference and, verified,
// on the test device (two lanes: strips out of order).
inline void check_strips(const Pipeline& pipeline, const PixelBuffer& in, const PixelBuffer& whole,
                         std::initializer_list<int> heights) {
  for (const int strip : heights) {
    INFO("strips of ", strip);
    CHECK(run_reference(pipeline, in, PixelType::f32, {.stream = {.strip_rows = strip}}).bytes ==
          whole.bytes);
    const RunResult dev = run_device(device(), pipeline, in, PixelType::f32,
                                     {.stream = {.strip_rows = strip, .verify = true, .lanes = 2}});
    CHECK(dev.ok());
    CHECK(dev.pixels.bytes == whole.bytes);
  }
}

}  // namespace halo::test
