// The streaming executor: an image arrives row by row, goes through the pipeline strip by strip
// (each strip's input widened by the chain's reach, so results equal the whole image's bit for
// bit), and leaves row by row. Reading strip k+1, the device (or reference) work on strip k and
// writing strip k-1 run at the same time on their own threads, with a bounded number of
// strips in flight, so host memory does not grow with the image; with several lanes, several
// strips are on the device (or the reference) at once.
#pragma once

#include <functional>
#include <memory_resource>
#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"

namespace halo {

// One strip's input on the host: the samples of its rows as stored, and the same rows of each
// guide set the pipeline uses (Pipeline::guide_sets() order).
struct HostStrip {
  Span rows;
  PixelBuffer pixels;
  std::vector<Guides> guides;
};

// The input, read in order.
struct StreamInput {
  int width = 0, height = 0, channels = 0;
  PixelType type = PixelType::u8;
  bool alpha = false;
  // Fills the image rows `rows` of `strip` (within strip.rows; pixels and guides are allocated
  // by the executor, guides with the channels `guide_shape` gives). Called from one thread
  // with consecutive ranges from row 0 to the last, each row once.
  std::function<void(HostStrip& strip, Span rows)> read;
  // Starts read() over from row 0, for a first pass over the input (ScansInput); empty when
  // the source cannot be read twice.
  std::function<void()> rewind;
  // The planes of each guide set as the source holds them (normal 3, depth 1, albedo 3; 0:
  // absent), so the executor can allocate a strip's guides.
  struct GuideShape {
    int normal = 0, depth = 0, albedo = 0, motion = 0;
    std::string described;
  };
  std::vector<GuideShape> guide_shapes;
};

// Where output rows go, in order: the image rows `rows` as samples of the output type.
using StreamOutput = std::function<void(Span rows, const PixelBuffer& pixels)>;

// StreamOptions: in pipeline/pipeline.hpp, beside RunOptions, which holds them.

// Wall-clock seconds per phase (summed over strips) and of the whole run: with overlap the
// phases add up to more than the wall time.
struct StreamPhases {
  double read_s = 0, device_s = 0, write_s = 0, wall_s = 0;
};

struct StreamResult {
  std::vector<StageCheck> checks;       // merged over strips
  std::vector<Device::Timing> timings;  // summed over strips, by stage and label
  std::vector<StageRun> runs;           // one per stage: histograms, flags
  StreamPhases phases;
  int strips = 0;

  bool ok() const;
};

StreamResult stream_device(Device& device, const Pipeline& pipeline, const StreamInput& input,
                           PixelType type, const StreamOutput& output,
                           const StreamOptions& options);
StreamResult stream_reference(const Pipeline& pipeline, const StreamInput& input, PixelType type,
                              const StreamOutput& output, const StreamOptions& options);

// Copy the image rows `rows` between strips (or whole images) of one image that hold them.
void copy_rows(const Image& from, Image& to, Span rows);
void copy_rows(const Guides& from, Guides& to, Span rows);
void copy_rows(const HostStrip& from, HostStrip& to, Span rows);

}  // namespace halo
