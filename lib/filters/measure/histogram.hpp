// Exact histograms: the reference and three device strategies, bin for bin identical.
// Integer data (8/16-bit, or float data that came from 8/16-bit and is binned as the codes it
// would be written as) bins codes with integer arithmetic; float data bins
// floor((x - lo) * scale), scale = bins / (hi - lo) rounded to float, x == hi in the last bin,
// and counts values outside [lo, hi], NaN and Inf apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cl/device.hpp"
#include "core/image.hpp"
#include "spec/params.hpp"

namespace halo {

enum class HistogramMode { gray, channel, luma, luma709, rgb };

struct HistogramSpec {
  HistogramMode mode = HistogramMode::luma;
  int channel = 0;  // for channel mode
  int bins = 256;
  bool auto_range = true;  // float data: range from the data's finite min and max
  float lo = 0, hi = 1;
  std::string method = "auto";  // auto, global, local, private
  int pixels_per_item = 0;      // 0: auto, see pixels_per_item_for() in histogram.cpp

  static HistogramSpec from(const Args& args);
};

struct Histogram {
  HistogramMode mode = HistogramMode::luma;
  int bins = 0;
  int hists = 1;      // 3 for rgb
  bool codes = true;  // integer binning of codes 0..max_code
  int max_code = 255;
  float lo = 0, hi = 1;               // float binning
  std::vector<std::uint64_t> counts;  // hists * bins
  std::uint64_t under = 0, over = 0, nan = 0, inf = 0;
  std::string method;       // which device strategy produced it ("reference" on the CPU)
  int pixels_per_item = 0;  // the device's, after ppi=auto is settled (0 for the reference)
  // Device time from the first count to the last reduce (to the last count where local
  // sub-histograms add straight into the 64-bit totals).
  double count_to_reduce_ms = 0;

  std::uint64_t binned() const;  // sum of counts
  bool same_counts(const Histogram& other) const;
};

std::string to_string(HistogramMode mode);

// Running 64-bit totals of a histogram's counters on a device. Counts of any number of strips
// or images add up there, and take() returns what was added since the previous take(): the
// difference of two read-backs, exact modulo 2^64, so a caller that counts many images never
// clears them. Used from one queue at a time.
class HistogramTotals {
 public:
  // The buffer for `counters` counters, to add to after `ready` (its zeroing, when this is the
  // first use, the size changed, or the previous counting was never taken back).
  cl::Buffer& prepare(Device& device, int counters, cl::Event& ready);
  // The buffer as prepare() left it, for the next strip of the same histogram.
  cl::Buffer& buffer() { return buffer_; }
  // The last command that adds to the totals; take() waits for it.
  void added(cl::Event last) { last_ = std::move(last); }
  // The counts added since the previous take().
  std::vector<std::uint64_t> take(Device& device);

 private:
  cl::Buffer buffer_;
  cl::Event last_;
  std::vector<std::uint64_t> record_;  // the totals at the previous take
  bool valid_ = false;                 // record_ matches the buffer
};

// From samples as stored (8/16-bit codes, or float). `totals`: running totals to count into
// (a caller with many images keeps one per histogram shape); nullptr: fresh ones.
Histogram histogram_reference(const PixelBuffer& pixels, const HistogramSpec& spec);
Histogram histogram_device(Device& device, const PixelBuffer& pixels, const HistogramSpec& spec,
                           HistogramTotals* totals = nullptr);
// From a pipeline's planar float image (its rows `rows`); integer sources are binned by their
// codes.
Histogram histogram_reference(const Image& image, const HistogramSpec& spec);
Histogram histogram_reference(const Image& image, const HistogramSpec& spec, Span rows);
Histogram histogram_device(Device& device, const DeviceImage& image, const HistogramSpec& spec,
                           HistogramTotals* totals = nullptr);

// Adds part's counts to sum (same shape and range).
void add_counts(Histogram& sum, const Histogram& part);

}  // namespace halo
