// Pipelines: stages chained on the device equal the references chained, and verification
// names the stage that disagrees.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "filters/registry.hpp"
#include "pipeline/pipeline.hpp"
#include "support.hpp"

using namespace halo;

TEST_CASE("a 3-stage pipeline on the device equals the references chained") {
  const Pipeline pipeline(std::vector<StageSpec>{
      {"gaussian:r=3", ""}, {"emboss:border=reflect", ""}, {"box:r=2:border=wrap", ""}});
  const PixelBuffer input = test::random_pixels(1023, 517, 3, PixelType::u8);
  const RunResult result =
      run_device(test::device(), pipeline, input, PixelType::u8, {.stream = {.verify = true}});
  REQUIRE(result.checks.size() == 5);  // decode, three stages, encode
  CHECK(result.checks[1].stage == "gaussian:r=3");
  for (const auto& check : result.checks) {
    INFO(check.stage, ": ", check.result.summary());
    CHECK(check.result.ok());
  }
  const PixelBuffer reference = run_reference(pipeline, input, PixelType::u8);
  CHECK(result.pixels.channels == 1);  // emboss works on luminance
  CHECK(result.pixels.bytes == reference.bytes);
  CHECK_FALSE(result.timings.empty());
}

namespace {

// Runs sharpen on the device but claims a different reference: verification must catch it.
class LyingStage : public Stage {
 public:
  LyingStage() : Stage("liar"), real_(make_stage("sharpen")) {}
  StageTraits traits() const override { return {.reach = 1}; }
  Image reference_rows(const Image& in, Span out, StageRun& run) const override {
    Image result = real_->reference_rows(in, out, run);
    if (out.first <= 2 && 2 < out.last) result.at(3, 2 - in.y0(), 0) += 0.01f;
    return result;
  }
  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun& run) const override {
    return real_->enqueue_rows(device, in, out, run);
  }

 private:
  std::unique_ptr<Stage> real_;
};

}  // namespace

TEST_CASE("verification reports the failing stage and the worst pixel") {
  Pipeline pipeline(std::vector<StageSpec>{{"emboss", ""}});
  pipeline.append(std::make_unique<LyingStage>());
  const PixelBuffer input = test::random_pixels(9, 8, 3, PixelType::u8);
  const RunResult result =
      run_device(test::device(), pipeline, input, PixelType::u8, {.stream = {.verify = true}});
  CHECK_FALSE(result.ok());
  REQUIRE(result.checks.size() == 4);
  CHECK(result.checks[1].result.ok());
  const auto& bad = result.checks[2];
  CHECK(bad.stage == "liar");
  CHECK(bad.result.failures == 1);
  CHECK(bad.result.worst_x == 3);
  CHECK(bad.result.worst_y == 2);
  CHECK(bad.result.max_error == doctest::Approx(0.01).epsilon(1e-3));
}

TEST_CASE("preset errors carry the file and line") {
  try {
    Pipeline(std::vector<StageSpec>{{"emboss", "presets/x.halo:1"},
                                    {"sharpen:k=zz", "presets/x.halo:4"}});
    FAIL("accepted a bad spec");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Usage);
    CHECK(std::string(e.what()).starts_with("presets/x.halo:4: filter 'sharpen:k=zz'"));
  }
}

TEST_CASE("an empty pipeline converts samples only") {
  const PixelBuffer input = test::random_pixels(5, 3, 3, PixelType::u16);
  const RunResult result = run_device(test::device(), Pipeline(), input, PixelType::u16, {});
  CHECK(result.pixels.bytes == input.bytes);
}
