// Strip sizing: how many output rows each strip of a file holds, from what the stages declare
// (their reach, the rows they read, the memory they keep) and what bounds a strip (--max-memory,
// the device's memory and largest buffer); how many strips are in flight at once.
#pragma once

#include <cstddef>

#include "pipeline/stream.hpp"

namespace halo {

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

}  // namespace halo
