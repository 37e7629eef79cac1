// How a file runs through the streaming executor on a device or the reference: how many strips
// at once, how large, and running a chain only for what its stages measure (halo hist).
#pragma once

#include <string>

#include "cl/device.hpp"
#include "filters/histogram.hpp"
#include "pipeline/stream.hpp"

namespace halo {

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

// The exact histogram of `input` ("path" or "path[channels]") by the histogram stage `spec`
// (as `halo run -f histogram:...` runs it): the image streamed strip by strip, in bounded
// memory at any size, counted on `device` (nullptr: the reference); no pixels come back.
Histogram stream_histogram(const std::string& input, const std::string& spec, Device* device);

}  // namespace halo
