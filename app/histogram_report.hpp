// Presenting a histogram: the stdout summary, JSON and CSV files with a stable schema, and a
// plot written through the image writer.
#pragma once

#include <string>

#include "filters/measure/histogram.hpp"

namespace halo {

// Total, min/max/mean, median and percentiles, the most populated bins, a sparkline.
std::string histogram_summary(const Histogram& h);

// JSON schema "halo.histogram/1" (README, "Histograms"); written atomically.
// quantity: what was binned when it is not the samples themselves ("log2 luma (stops)").
void write_histogram_json(const std::string& path, const Histogram& h, const std::string& input,
                          const std::string& quantity = "");
// CSV: bin,lower,upper,count (rgb: count_r,count_g,count_b); one row per bin.
void write_histogram_csv(const std::string& path, const Histogram& h);
// A bar chart, one colour per channel, optionally with a log count axis.
void write_histogram_plot(const std::string& path, const Histogram& h, bool log_scale,
                          const std::string& quantity = "");

}  // namespace halo
