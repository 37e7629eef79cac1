// A chain of stages run with the image resident on the device: one upload, the stages in order,
// one download. With verification, each stage is also checked against its CPU reference applied
// to that stage's own device input, so a failure names the stage that caused it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cl/device.hpp"
#include "filters/filter.hpp"
#include "verify/compare.hpp"

namespace halo {

struct StageSpec {
  std::string text;
  std::string origin;  // "presets/x.halo:3" when it came from a preset; empty for -f
};

class Pipeline {
 public:
  Pipeline() = default;
  // Parses and validates every spec before any work; errors carry the origin.
  explicit Pipeline(const std::vector<StageSpec>& specs);

  const std::vector<std::unique_ptr<Stage>>& stages() const { return stages_; }
  void append(std::unique_ptr<Stage> stage) { stages_.push_back(std::move(stage)); }

 private:
  std::vector<std::unique_ptr<Stage>> stages_;
};

struct RunOptions {
  bool verify = false;
  double tolerance = 1e-4;                           // see halo::compare
  std::pmr::memory_resource* host_memory = nullptr;  // for the result's samples (nullptr: heap)
};

struct StageCheck {
  std::string stage;  // "decode", a spec, or "encode"
  Comparison result;
  std::string problem;  // a side result (histogram) that differs from the reference

  bool ok() const { return result.ok() && problem.empty(); }
};

struct RunResult {
  PixelBuffer pixels;
  std::vector<StageCheck> checks;
  std::vector<Device::Timing> timings;

  bool ok() const;
};

// The whole pipeline on the plain C++ reference.
PixelBuffer run_reference(const Pipeline& pipeline, const PixelBuffer& input, PixelType type);
// The whole pipeline on an OpenCL device; output samples of the given type.
RunResult run_device(Device& device, const Pipeline& pipeline, const PixelBuffer& input,
                     PixelType type, const RunOptions& options);

}  // namespace halo
