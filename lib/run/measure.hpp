// Running a file's chain only for what its stages measure (halo hist), through the streaming
// executor on a device or the reference.
#pragma once

#include <string>

#include "cl/device.hpp"
#include "filters/measure/histogram.hpp"
#include "pipeline/pipeline.hpp"
#include "run/input_stream.hpp"

namespace halo {

// `input` ("path" or "path[channels]") opened once for the histogram stage `spec` (as
// `halo run -f histogram:...` runs it): its header is read before any device starts (what
// --device auto weighs), and each count streams the image strip by strip, in bounded memory at
// any size, from its first row.
class HistogramStream {
 public:
  HistogramStream(const std::string& input, const std::string& spec);

  // The file's samples, every channel of it.
  double samples() const;
  // The exact histogram, counted on `device` (nullptr: the reference); no pixels come back. A
  // second count (the reference's for --verify, or after a device failed) reads the file again.
  Histogram count(Device* device);

 private:
  std::string spec_;
  Pipeline pipeline_;
  InputStream in_;
  bool started_ = false;
};

}  // namespace halo
