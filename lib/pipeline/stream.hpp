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
    int normal = 0, depth = 0, albedo = 0;
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

// What bounds a strip's size: the host budget (--max-memory), and the device's memory and largest
// buffer (0 on the reference). A CPU device's buffers are host memory and count in both.
struct StripLimits {
  std::size_t host_bytes = std::size_t(1) << 30;
  std::size_t device_bytes = 0, max_allocation = 0;
  bool device_is_host = true;
  // Float bytes per strip buffer to aim for: big strips keep launches and re-read halo rows
  // few; on a CPU smaller ones stay in its caches and keep memory low (1.5 MiB: a 5K RGB
  // photo's 3x3 conv ran as fast in strips of 25 rows as of 34, in 86 MiB instead of 88;
  // of 17 rows, 3% slower).
  std::size_t target_bytes = std::size_t(3) << 19;
  int in_flight = 2;  // StreamOptions::in_flight
};

// Output rows per strip for `input` through `pipeline`: about target_bytes a buffer, at least
// four times the chain's reach (the halo rows a strip reads again then cost at most half
// more, and only in the passes that read them; twice on a CPU device, which carries a
// separable stage's rows-pass rows over), within the limits; the image's height when a
// stage needs the whole image. Error(BadData) when not even one row (or the whole image) fits,
// naming what it needs and the limit.
int choose_strip_rows(const Pipeline& pipeline, const StreamInput& input, PixelType out_type,
                      const StripLimits& limits);

// choose_strip_rows's strips and the host bytes they hold at that height: the strips queued,
// read and written (with the device's buffers where they are host memory) over the window of
// input rows a strip reads, and the share of the budget a stage keeps for its own working set
// (StageMemory). What a file reserves of --max-memory beside a batch's other files.
struct StripSizing {
  int rows = 0;
  std::size_t host_bytes = 0;
};
StripSizing size_strips(const Pipeline& pipeline, const StreamInput& input, PixelType out_type,
                        const StripLimits& limits);

// Strips of one file at once: two queues on a GPU (one strip's transfers overlap another's
// kernels) when it is the only file (in a batch, other files' strips do that); one on a CPU
// device (PoCL spreads each kernel over every core already); on the reference, the cores the
// other files at once leave. device: nullptr for the reference.
int lanes_for(const Device* device, int workers);

// Strips queued on each side of the device: one on a CPU device, whose kernels already use
// every core (a second one only held memory: 2-3 MiB of a 5K photo's strips); two on a GPU and
// on the reference's lanes.
int in_flight_for(const Device* device);

// What bounds a strip on `device` (nullptr: the reference): the memory a file may take, and
// the device's memory and largest buffer.
StripLimits strip_limits(const Device* device);

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
