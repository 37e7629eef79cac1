// What each stage declares of its device memory (StageTraits::memory.strip_buffers) against
// what it holds: every registered filter, by name and by its example, through the streaming
// executor on the test device, with guides where it takes them; the strip images each strip
// takes at once are counted as the device recycles them (the strip's input, the stages'
// temporaries and results). Strip planning sizes strips by the declaration (with one more the
// executor keeps), so a stage holding more than it declares runs short of a device's memory
// that planning said was enough.
#include <doctest/doctest.h>

#include <optional>

#include "core/error.hpp"
#include "engine/guided_support.hpp"
#include "filters/registry.hpp"
#include "pipeline/pipeline.hpp"
#include "support.hpp"

using namespace halo;

TEST_CASE("every stage holds no more strip images on the device than it declares") {
  Device& device = test::device();
  int checked = 0;
  for (const auto& filter : filter_registry())
    for (const std::string& spec : {filter.name, filter.example}) {
      std::optional<Pipeline> pipeline;
      try {
        pipeline.emplace(std::vector<StageSpec>{{spec, ""}});
      } catch (const Error&) {
        continue;  // a bare name that needs parameters
      }
      if (pipeline->stages().front()->traits().resizes && spec.find("crop") != std::string::npos)
        continue;  // a crop larger than the test image
      CAPTURE(spec);
      const PixelBuffer input = test::random_pixels(61, 37, 3, PixelType::u8, 7);
      RunOptions options;
      options.stream.strip_rows = 8;  // several strips, each taking the last one's images again
      for (std::size_t s = 0; s < pipeline->guide_sets().size(); ++s)
        options.guides.push_back(test::random_guides(61, 37, true, 3 + unsigned(s)));
      Device::Recycling::take_peak(device);
      REQUIRE(run_device(device, *pipeline, input, PixelType::f32, options).ok());
      device.take_timings();
      int declared = 0;
      for (const auto& stage : pipeline->stages())
        declared = std::max(declared, stage->traits().memory.strip_buffers);
      const std::size_t held = Device::Recycling::take_peak(device);
      INFO(spec << " holds " << held << " strip images and declares " << declared);
      CHECK(held > 0);
      CHECK(held + 1 <= std::size_t(declared));
      ++checked;
    }
  CHECK(checked > 60);
}
