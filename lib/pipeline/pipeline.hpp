// A chain of stages, parsed once and shared by every file, strip and worker thread, and the
// in-memory ways to run it: on an OpenCL device (one upload, the stages in order with the
// image resident, one download; strip by strip when asked) or on the plain reference.
// lib/pipeline/stream.hpp runs it over images that arrive and leave row by row.
#pragma once

#include <memory>
#include <memory_resource>
#include <string>
#include <vector>

#include "cl/device.hpp"
#include "filters/filter.hpp"
#include "filters/guided/guides.hpp"
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

  // Stages are immutable plans: pipelines made for one file share the run's unbound ones.
  const std::vector<std::shared_ptr<const Stage>>& stages() const { return stages_; }
  void append(std::shared_ptr<const Stage> stage);

  // The image after the chain (its size, window, colour profile, orientation): each stage's
  // description folded over the one before.
  ImageDesc describe(const ImageDesc& in) const;
  // The image's size after the chain, for an input of `in` (stages that resize change it).
  Size output_size(Size in) const { return describe(ImageDesc{in}).size; }
  // Whether a stage changes the image's size.
  bool resizes() const;
  // By how much an input of size `in` may be shrunk as it is read (`how`: 2, 4 or 8 for a
  // decoder's DCT scaling, any factor for averaged blocks; 1: not at all): what the first stage
  // that does more than move samples (or premultiply, for blocks) allows (thumbnail's
  // shrink-on-load).
  int decode_shrink(Size in, DecodeShrink how) const;
  // The chain for its input of size `in` read at 1/shrink (as decode_shrink allowed): the
  // stage that allowed it maps its output onto the image's span of the shrunk input.
  Pipeline read_shrunk(Size in, int shrink) const;
  // Rows above and below an output row that the whole chain reads.
  int reach() const;
  // The chain's cost per sample: its stages' summed.
  StageCost cost() const;
  // Reach of the stages after stage i (of all stages for i = -1).
  int reach_after(int i) const;
  // Why the chain needs the whole image at once ("" when it can run strip by strip).
  std::string whole_image_reason(PixelType source) const;
  // The distinct guide sources of the guided stages (stages with the same sources share one
  // set of guides), and the set each stage uses (-1: none).
  const std::vector<GuideSources>& guide_sets() const { return guide_sets_; }
  int guide_set(std::size_t stage) const { return set_of_[stage]; }

 private:
  std::vector<std::shared_ptr<const Stage>> stages_;
  std::vector<GuideSources> guide_sets_;
  std::vector<int> set_of_;
};

// How output rows are cut into strips, and which rows each stage computes for one strip so
// that every output row sees exactly the input rows it would see on the whole image.
class StripPlan {
 public:
  // Strips of `strip_rows` output rows (the last one shorter); strip_rows <= 0 or >= height:
  // one strip, the whole image. carried: the strips run in order through one StageRun each
  // and the first stage carries rows (CarriesRows), so a strip after the first reads
  // only the input rows the one before did not (at least one, so no strip is empty); the first
  // strip then delivers the chain's reach fewer rows, so that every strip reads strip_rows.
  // Stages that resize (Stage::resizes) map each stage's rows to the rows it reads; strips are
  // then cut from the output's rows, and never carried.
  StripPlan(const Pipeline& pipeline, Size input, int strip_rows, bool carried = false);
  // An input whose width does not matter (no stage resizes).
  StripPlan(const Pipeline& pipeline, int height, int strip_rows, bool carried = false)
      : StripPlan(pipeline, Size{1, height}, strip_rows, carried) {}

  int height() const { return height_; }  // the output's
  int input_height() const { return sizes_.front().height; }
  Size size_after(std::size_t i) const { return sizes_[i + 1]; }  // stage i's result
  int strips() const { return strips_; }
  Span output(int k) const;                     // the rows strip k delivers
  Span input(int k) const;                      // the input rows it reads
  Span stage_rows(int k, std::size_t i) const;  // the rows stage i computes for it
  int full_stage_rows(std::size_t i) const { return full_rows_[i]; }  // for a full strip
  // The rows of stage i's result (i = -1: of the input) that are strip k's own: the strips'
  // own rows partition every stage's rows, which is what measuring stages count.
  Span own_rows(int k, int i) const;

 private:
  Span widened_input(int k) const;  // the input rows the chain reads for output(k)

  const Pipeline& pipeline_;
  std::vector<Size> sizes_;  // the input's, then each stage's result
  int height_, rows_;
  bool carried_;
  int shift_;  // rows the first strip delivers fewer than the others
  int strips_;
  std::vector<int> full_rows_;  // full_stage_rows, by stage
};

struct StageCheck {
  std::string stage;  // "decode", a spec, or "encode"
  Comparison result;
  std::string problem;   // a side result (histogram, flags) that differs from the reference
  double tolerance = 0;  // what the stage was held to (StatesTolerance)

  bool ok() const { return result.ok() && problem.empty(); }
};

// How the streaming executor (pipeline/stream.hpp) runs a pipeline over an image.
struct StreamOptions {
  int strip_rows = 0;  // output rows per strip (StripPlan); 0: the whole image at once
  bool verify = false;
  double tolerance = 1e-4;
  bool keep_flags = false;
  std::pmr::memory_resource* host_memory = nullptr;  // for host strips (nullptr: recycled heap)
  int in_flight = 2;  // strips queued between reader and device, and device and writer
  // Strips worked on at once: queues on the device (two let one strip's transfers overlap
  // another's kernels on a GPU), threads on the reference.
  int lanes = 1;
  // Only what the stages measure is wanted (halo hist): no strip is read back from the device
  // or converted to the output type on the reference, and the output is given empty pixels.
  bool measure_only = false;
};

// A whole image in memory through the streaming executor: its options, as given, and what an
// image in memory adds.
struct RunOptions {
  StreamOptions stream;
  std::pmr::memory_resource* result_memory = nullptr;  // the result's samples (nullptr: heap)
  std::vector<Guides> guides;  // whole-image guides, one per Pipeline::guide_sets() entry
};

struct RunResult {
  PixelBuffer pixels;
  std::vector<StageCheck> checks;
  std::vector<Device::Timing> timings;
  std::vector<StageRun> runs;  // one per stage: its histogram or flags

  bool ok() const;
};

// The whole pipeline on the plain C++ reference.
PixelBuffer run_reference(const Pipeline& pipeline, const PixelBuffer& input, PixelType type,
                          const RunOptions& options = {});
// The whole pipeline on an OpenCL device; output samples of the given type.
RunResult run_device(Device& device, const Pipeline& pipeline, const PixelBuffer& input,
                     PixelType type, const RunOptions& options);

}  // namespace halo
