// Pipelines: parsing, reach and guide sets, strip plans, and in-memory runs (through the
// streaming executor, so whole images and strips share one code path).
#include "pipeline/pipeline.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "filters/registry.hpp"
#include "pipeline/stream.hpp"

namespace halo {

Pipeline::Pipeline(const std::vector<StageSpec>& specs) {
  for (const auto& spec : specs) {
    try {
      append(make_stage(spec.text));
    } catch (const Error& e) {
      if (spec.origin.empty()) throw;
      throw Error(e.kind(), spec.origin + ": " + e.what());
    }
  }
}

void Pipeline::append(std::shared_ptr<const Stage> stage) {
  // Guides have the input's size: a guided stage must see the image at that size.
  if (stage->guide_sources() && resizes())
    throw Error(ErrorKind::Usage, "'" + stage->spec() +
                                      "' reads guides of the input's size: put it before the "
                                      "stages that change the image's size");
  if (stage->resizes())
    for (const auto& before : stages_)
      if (before->traits().measures)
        throw Error(ErrorKind::Usage,
                    "'" + before->spec() + "' before '" + stage->spec() +
                        "' would measure only the rows that stage keeps: put it after");
  // Its neighbour frames come from their files as stored: so must its own input.
  if (stage->traits().reads_frames && !stages_.empty())
    throw Error(ErrorKind::Usage,
                "'" + stage->spec() +
                    "' reads the frames around its own from their files as "
                    "they are stored, so it comes first; '" +
                    stages_.back()->spec() +
                    "' is before it (--linear and --auto-orient add stages first)");
  int set = -1;
  if (const GuideSources* sources = stage->guide_sources()) {
    const auto it = std::find_if(guide_sets_.begin(), guide_sets_.end(),
                                 [&](const GuideSources& s) { return s == *sources; });
    set = int(it - guide_sets_.begin());
    if (it == guide_sets_.end()) guide_sets_.push_back(*sources);
  }
  set_of_.push_back(set);
  stages_.push_back(std::move(stage));
}

StageCost Pipeline::cost() const {
  StageCost sum{0, 0};
  for (const auto& stage : stages_) {
    const StageCost c = stage->traits().cost;
    sum.reference_ns += c.reference_ns;
    sum.device_ns += c.device_ns;
  }
  return sum;
}

ImageDesc Pipeline::describe(const ImageDesc& in) const {
  ImageDesc desc = in;
  for (const auto& stage : stages_) desc = stage->describe(desc);
  return desc;
}

int Pipeline::decode_shrink(Size in, DecodeShrink how) const {
  for (const auto& stage : stages_) {
    if (const ShrinksOnLoad* shrinks = facet<ShrinksOnLoad>(*stage))
      if (const int shrink = shrinks->decode_shrink(in, how); shrink > 1) return shrink;
    const StageTraits traits = stage->traits();
    if (!traits.moves_samples && !(how == DecodeShrink::blocks && traits.associates_alpha))
      return 1;
    in = stage->output_size(in);
  }
  return 1;
}

Pipeline Pipeline::read_shrunk(Size in, int shrink) const {
  Pipeline result;
  bool replaced = false;
  for (const auto& stage : stages_) {
    const ShrinksOnLoad* shrinks = replaced ? nullptr : facet<ShrinksOnLoad>(*stage);
    if (shrinks) {
      result.append(shrinks->read_shrunk(in, shrink));
      replaced = true;
    } else {
      result.append(stage);
    }
    if (!replaced) in = stage->output_size(in);
  }
  if (!replaced)
    throw Error(ErrorKind::Internal, "read_shrunk: no stage shrinks the input as it is read");
  return result;
}

bool Pipeline::resizes() const {
  return std::any_of(stages_.begin(), stages_.end(), [](const auto& s) { return s->resizes(); });
}

int Pipeline::reach() const {
  return reach_after(-1);
}

int Pipeline::reach_after(int i) const {
  int reach = 0;
  for (std::size_t j = std::size_t(i + 1); j < stages_.size(); ++j) reach += stages_[j]->reach();
  return reach;
}

std::string Pipeline::whole_image_reason(PixelType source) const {
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    const Stage& stage = *stages_[i];
    if (auto why = stage.whole_image_reason(source); !why.empty())
      return "'" + stage.spec() + "': " + why;
    // Strips need the scan before the first strip, and only the input itself can be read
    // through twice (stream.cpp's scan_input).
    const ScansInput* scans = facet<ScansInput>(stage);
    if (i > 0 && scans && scans->scan(1, 1, source))
      return "'" + stage.spec() + "' measures its whole input, which earlier stages make";
  }
  return "";
}

namespace {

std::vector<Size> stage_sizes(const Pipeline& pipeline, Size input) {
  std::vector<Size> sizes = {input};
  for (const auto& stage : pipeline.stages()) sizes.push_back(stage->output_size(sizes.back()));
  return sizes;
}

}  // namespace

StripPlan::StripPlan(const Pipeline& pipeline, Size input, int strip_rows, bool carried)
    : pipeline_(pipeline),
      sizes_(stage_sizes(pipeline, input)),
      height_(sizes_.back().height),
      rows_(strip_rows <= 0 || strip_rows > height_ ? height_ : strip_rows),
      carried_(carried && rows_ < height_ && !pipeline.resizes()),
      shift_(carried_ ? std::min(pipeline.reach(), rows_ - 1) : 0),
      strips_(std::max(1, ceil_div(height_ + shift_, rows_))) {
  // Rows each stage computes for a full strip: from the reach when no stage resizes, else the
  // most any of the first few strips computes (resizing maps strips unevenly).
  for (std::size_t i = 0; i < pipeline.stages().size(); ++i) {
    int most = std::min(rows_ + 2 * pipeline.reach_after(int(i)), height_);
    if (pipeline.resizes()) {
      most = 0;
      for (int k = 0; k < std::min(strips_, 3); ++k)
        most = std::max(most, stage_rows(k, i).count());
    }
    full_rows_.push_back(most);
  }
}

Span StripPlan::output(int k) const {
  return {std::max(0, k * rows_ - shift_), std::min(height_, (k + 1) * rows_ - shift_)};
}

Span StripPlan::input(int k) const {
  const Span rows = widened_input(k);
  if (!carried_ || k == 0) return rows;
  const int fresh = std::max(rows.first, widened_input(k - 1).last);
  return {std::min(fresh, rows.last - 1), rows.last};
}

Span StripPlan::widened_input(int k) const {
  const auto& stages = pipeline_.stages();
  if (stages.empty()) return output(k);
  return stages[0]->input_rows(stage_rows(k, 0), sizes_[0]);
}

Span StripPlan::stage_rows(int k, std::size_t i) const {
  // From the output back: each later stage's input rows are this stage's rows (for stages
  // that keep the size, widened by their reach).
  const auto& stages = pipeline_.stages();
  Span rows = output(k);
  for (std::size_t j = stages.size() - 1; j > i; --j) rows = stages[j]->input_rows(rows, sizes_[j]);
  return rows;
}

Span StripPlan::own_rows(int k, int i) const {
  Span own = output(k);
  const auto& stages = pipeline_.stages();
  for (int j = int(stages.size()) - 1; j > i; --j) {
    const Size in = sizes_[j], out = sizes_[j + 1];
    own = {stages[j]->input_row(own.first, in, out), stages[j]->input_row(own.last, in, out)};
  }
  return own;
}

bool RunResult::ok() const {
  for (const auto& check : checks)
    if (!check.ok()) return false;
  return true;
}

namespace {

// An in-memory image as a stream: rows copied from `pixels` and the whole-image guides.
StreamInput memory_input(const PixelBuffer& pixels, const std::vector<Guides>& guides) {
  StreamInput in;
  in.width = pixels.width;
  in.height = pixels.height;
  in.channels = pixels.channels;
  in.type = pixels.type;
  in.alpha = pixels.alpha;
  for (const auto& g : guides)
    in.guide_shapes.push_back({g.normal.channels(), g.depth.channels(), g.albedo.channels(),
                               g.motion.channels(), g.described});
  in.read = [&pixels, &guides](HostStrip& strip, Span rows) {
    const std::size_t row_bytes = pixels.bytes.size() / pixels.height;
    std::memcpy(strip.pixels.bytes.data() + (rows.first - strip.rows.first) * row_bytes,
                pixels.bytes.data() + rows.first * row_bytes, rows.count() * row_bytes);
    for (std::size_t s = 0; s < guides.size(); ++s) copy_rows(guides[s], strip.guides[s], rows);
  };
  in.rewind = [] {};  // read() copies any rows asked for
  return in;
}

// Output rows into one buffer of the whole image, made at the first rows: filters may change
// the channel count (gray=1), and the first rows tell.
StreamOutput memory_output(PixelBuffer& out, int width, int height, PixelType type,
                           std::pmr::memory_resource* memory) {
  return [&out, width, height, type, memory](Span rows, const PixelBuffer& pixels) {
    if (out.bytes.empty())
      out = PixelBuffer::uninitialized(width, height, pixels.channels, type, pixels.alpha, memory);
    const std::size_t row_bytes = out.bytes.size() / out.height;
    std::memcpy(out.bytes.data() + rows.first * row_bytes, pixels.bytes.data(),
                rows.count() * row_bytes);
  };
}

void check_guide_sets(const Pipeline& pipeline, const RunOptions& options) {
  if (!options.guides.empty() && options.guides.size() != pipeline.guide_sets().size())
    throw Error(ErrorKind::Internal, "run: " + std::to_string(options.guides.size()) +
                                         " guide sets given, the pipeline uses " +
                                         std::to_string(pipeline.guide_sets().size()));
}

// Guide sets for a run: those given, or none (self-guided) for each set the pipeline has.
std::vector<Guides> guides_for(const Pipeline& pipeline, const RunOptions& options) {
  check_guide_sets(pipeline, options);
  return options.guides.empty() ? std::vector<Guides>(pipeline.guide_sets().size())
                                : options.guides;
}

}  // namespace

PixelBuffer run_reference(const Pipeline& pipeline, const PixelBuffer& input, PixelType type,
                          const RunOptions& options) {
  const std::vector<Guides> guides = guides_for(pipeline, options);
  PixelBuffer out;
  const Size size = pipeline.output_size({input.width, input.height});
  stream_reference(pipeline, memory_input(input, guides), type,
                   memory_output(out, size.width, size.height, type, options.result_memory),
                   options.stream);
  return out;
}

RunResult run_device(Device& device, const Pipeline& pipeline, const PixelBuffer& input,
                     PixelType type, const RunOptions& options) {
  const std::vector<Guides> guides = guides_for(pipeline, options);
  RunResult result;
  const Size size = pipeline.output_size({input.width, input.height});
  StreamResult streamed = stream_device(
      device, pipeline, memory_input(input, guides), type,
      memory_output(result.pixels, size.width, size.height, type, options.result_memory),
      options.stream);
  result.checks = std::move(streamed.checks);
  result.timings = std::move(streamed.timings);
  result.runs = std::move(streamed.runs);
  return result;
}

}  // namespace halo
