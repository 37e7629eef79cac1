// Pipeline execution on the device and on the reference.
#include "pipeline/pipeline.hpp"

#include "core/error.hpp"
#include "filters/convert.hpp"
#include "filters/registry.hpp"

namespace halo {

Pipeline::Pipeline(const std::vector<StageSpec>& specs) {
  for (const auto& spec : specs) {
    try {
      stages_.push_back(make_stage(spec.text));
    } catch (const Error& e) {
      if (spec.origin.empty()) throw;
      throw Error(e.kind(), spec.origin + ": " + e.what());
    }
  }
}

bool RunResult::ok() const {
  for (const auto& check : checks)
    if (!check.ok()) return false;
  return true;
}

PixelBuffer run_reference(const Pipeline& pipeline, const PixelBuffer& input, PixelType type) {
  Image image = to_image(input);
  for (const auto& stage : pipeline.stages()) image = stage->reference(image);
  return to_pixels(image, type);
}

RunResult run_device(Device& device, const Pipeline& pipeline, const PixelBuffer& input,
                     PixelType type, const RunOptions& options) {
  RunResult result;
  device.set_stage("upload");
  DeviceImage current = upload(device, input);
  // With verification, `seen` is the device's own input to the next stage, read back.
  Image seen;
  if (options.verify) {
    device.set_stage("verify");
    seen = download_image(device, current);
    result.checks.push_back({"decode", compare(seen, to_image(input), 0.0)});
  }
  for (const auto& stage : pipeline.stages()) {
    device.set_stage(stage->spec());
    current = stage->enqueue(device, current);
    if (options.verify) {
      device.set_stage("verify");
      Image got = download_image(device, current);
      result.checks.push_back(
          {stage->spec(), compare(got, stage->reference(seen), options.tolerance)});
      seen = std::move(got);
    }
  }
  device.set_stage("download");
  result.pixels = download(device, current, type, options.host_memory);
  if (options.verify)
    result.checks.push_back(
        {"encode", compare(to_image(result.pixels), to_image(to_pixels(seen, type)), 0.0)});
  result.timings = device.take_timings();
  return result;
}

}  // namespace halo
