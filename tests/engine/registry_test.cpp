// Every registered filter, by its bare name (its defaults, where it has them for every
// parameter) and by its example, on the device against the plain C++ reference on odd sizes,
// 1, 3 and 4 channels and every border, with guides where it takes them: a filter added to the
// registry is tested here before it has a test of its own. Exact where README says so (every
// filter but the guided ones), within --verify's tolerance for those.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "engine/guided_support.hpp"
#include "engine/separable_support.hpp"
#include "filters/registry.hpp"
#include "pipeline/pipeline.hpp"
#include "support.hpp"

using namespace halo;

namespace {

// The spec as given, or empty when the filter needs parameters that a bare name lacks.
bool parses(const std::string& spec) {
  try {
    make_stage(spec);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

TEST_CASE("every registered filter equals its reference: defaults, example, odd sizes, borders") {
  Device& device = test::device();
  for (const auto& filter : filter_registry()) {
    if (!filter.swept) continue;  // its own tests (FilterDef::swept)
    const bool colour_only = filter.name == "bilateral" || filter.name == "atrous";
    for (const std::string& spec : {filter.name, filter.example}) {
      if (!parses(spec)) continue;
      for (const auto& [w, h] : {std::pair{1, 1}, {7, 5}, {61, 37}, {1023, 9}})
        for (const int channels : {1, 3, 4}) {
          if (colour_only && channels != 3) continue;                 // albedo and colour weights
          if (filter.name == "histogram" && channels == 1) continue;  // luma of RGB
          PixelBuffer input = test::random_pixels(w, h, channels, PixelType::u8, unsigned(w + h));
          input.alpha = channels == 4;
          for (const char* border : test::kBorders) {
            const Pipeline pipeline({{spec + ":border=" + border, ""}});
            RunOptions options;
            options.stream.verify =
                true;  // each stage against the reference, side results included
            options.stream.keep_flags = true;
            for (std::size_t s = 0; s < pipeline.guide_sets().size(); ++s)
              options.guides.push_back(test::random_guides(w, h, true, 3 + unsigned(s)));
            const RunResult got = run_device(device, pipeline, input, PixelType::f32, options);
            device.take_timings();
            const PixelBuffer expected = run_reference(pipeline, input, PixelType::f32, options);
            // w and h as text: INFO's lambda cannot capture structured bindings (clang 14).
            const std::string size = std::to_string(w) + "x" + std::to_string(h);
            INFO(spec, ":border=", std::string(border), " on ", size, "x", channels);
            CHECK(got.ok());  // within --verify's tolerance; flags and histograms exactly
            // Taps in the same fma order: bit for bit. The guided filters' weights go through
            // exp(), and the sRGB curve through pow(), which devices round their own way
            // (README: within tolerance).
            const bool rounds_own_way = filter.name == "linear" || filter.name == "srgb";
            if (pipeline.guide_sets().empty() && !rounds_own_way)
              CHECK(got.pixels.bytes == expected.bytes);
          }
        }
    }
  }
}

TEST_CASE("every filter declares whether it is guided as the stages it makes are") {
  // halo run decides where premultiplication goes from FilterDef::guided without making a
  // stage; the stage itself says so through its Guided facet.
  int guided = 0;
  for (const auto& filter : filter_registry()) {
    INFO(filter.name);
    const auto stage = make_stage(filter.example);
    CHECK(filter.guided == (stage->guide_sources() != nullptr));
    guided += filter.guided;
  }
  CHECK(guided == 3);  // bilateral, atrous, denoise
}
