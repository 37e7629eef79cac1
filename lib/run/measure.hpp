// Running a file's chain only for what its stages measure (halo hist), through the streaming
// executor on a device or the reference.
#pragma once

#include <string>

#include "cl/device.hpp"
#include "filters/histogram.hpp"
#include "pipeline/stream.hpp"

namespace halo {

// The exact histogram of `input` ("path" or "path[channels]") by the histogram stage `spec`
// (as `halo run -f histogram:...` runs it): the image streamed strip by strip, in bounded
// memory at any size, counted on `device` (nullptr: the reference); no pixels come back.
Histogram stream_histogram(const std::string& input, const std::string& spec, Device* device);

}  // namespace halo
