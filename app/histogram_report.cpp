// Histogram summary and files.
#include "app/histogram_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "io/image_io.hpp"

namespace halo {

namespace {

std::vector<std::string> channel_names(const Histogram& h) {
  if (h.hists == 3) return {"R", "G", "B"};
  return {to_string(h.mode) == "channel" ? "C" : "Y"};
}

// Lower edge of bin b in data units: codes for integer data, values for float data.
double lower(const Histogram& h, int b) {
  if (h.codes) return double(b) * (h.max_code + 1) / h.bins;
  return h.lo + double(b) * (double(h.hi) - h.lo) / h.bins;
}
double upper(const Histogram& h, int b) {
  return lower(h, b + 1);
}

// The bin holding the q-quantile of one channel's counts.
int quantile_bin(const std::uint64_t* counts, int bins, std::uint64_t total, double q) {
  const auto target = std::uint64_t(std::ceil(q * double(total)));
  std::uint64_t seen = 0;
  for (int b = 0; b < bins; ++b)
    if ((seen += counts[b]) >= std::max<std::uint64_t>(target, 1)) return b;
  return bins - 1;
}

std::string sparkline(const std::uint64_t* counts, int bins, int width) {
  static const char* bars[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  const int columns = std::min(bins, width);
  std::vector<std::uint64_t> sums(columns, 0);
  for (int b = 0; b < bins; ++b) sums[std::size_t(b) * columns / bins] += counts[b];
  const auto peak = *std::max_element(sums.begin(), sums.end());
  std::string line;
  for (auto s : sums) line += bars[peak ? (s * 8 + peak - 1) / peak : 0];
  return line;
}

}  // namespace

std::string histogram_summary(const Histogram& h) {
  std::string text = fmt::format("histogram {} {} bins, {} binned ({}, {}", to_string(h.mode),
                                 h.bins, h.binned(), h.codes ? "integer codes" : "float", h.method);
  if (h.pixels_per_item) text += fmt::format(", {} px/work-item", h.pixels_per_item);
  // Device time from the first count kernel to the last reduce (out-of-order queue events).
  if (h.count_to_reduce_ms > 0)
    text += fmt::format(", count to reduce {:.3f} ms", h.count_to_reduce_ms);
  text += ")\n";
  if (!h.codes)
    text += fmt::format("  range [{}, {}]  under {}  over {}  NaN {}  Inf {}\n", h.lo, h.hi,
                        h.under, h.over, h.nan, h.inf);
  const auto names = channel_names(h);
  for (int k = 0; k < h.hists; ++k) {
    const std::uint64_t* c = h.counts.data() + std::size_t(k) * h.bins;
    const std::uint64_t total = std::accumulate(c, c + h.bins, std::uint64_t(0));
    if (total == 0) {
      text += fmt::format("  {}: empty\n", names[k]);
      continue;
    }
    int first = 0, last = h.bins - 1;
    while (!c[first]) ++first;
    while (!c[last]) --last;
    double mean = 0;
    for (int b = 0; b < h.bins; ++b) mean += double(c[b]) * b;
    mean /= double(total);
    std::vector<int> order(h.bins);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + std::min(5, h.bins), order.end(),
                      [&](int a, int b) { return c[a] > c[b]; });
    std::string top;
    for (int i = 0; i < std::min(5, h.bins) && c[order[i]]; ++i)
      top += fmt::format("{}{} ({})", i ? ", " : "", order[i], c[order[i]]);
    text += fmt::format(
        "  {}: bins min {} max {} mean {:.2f} | p1 {} p5 {} p25 {} median {} p75 {} p95 {} "
        "p99 {}\n  {}: top {}\n  {}: |{}|\n",
        names[k], first, last, mean, quantile_bin(c, h.bins, total, 0.01),
        quantile_bin(c, h.bins, total, 0.05), quantile_bin(c, h.bins, total, 0.25),
        quantile_bin(c, h.bins, total, 0.5), quantile_bin(c, h.bins, total, 0.75),
        quantile_bin(c, h.bins, total, 0.95), quantile_bin(c, h.bins, total, 0.99), names[k], top,
        names[k], sparkline(c, h.bins, 64));
  }
  return text;
}

void write_histogram_json(const std::string& path, const Histogram& h, const std::string& input) {
  nlohmann::json doc = {{"schema", "halo.histogram/1"},
                        {"input", input},
                        {"mode", to_string(h.mode)},
                        {"bins", h.bins},
                        {"binning", h.codes ? "codes" : "float"},
                        {"method", h.method},
                        {"pixels_per_item", h.pixels_per_item},
                        {"channels", channel_names(h)},
                        {"binned", h.binned()},
                        {"under", h.under},
                        {"over", h.over},
                        {"nan", h.nan},
                        {"inf", h.inf}};
  if (h.codes)
    doc["max_code"] = h.max_code;
  else
    doc["range"] = {h.lo, h.hi};
  nlohmann::json counts = nlohmann::json::array();
  for (int k = 0; k < h.hists; ++k)
    counts.push_back(std::vector<std::uint64_t>(h.counts.begin() + std::size_t(k) * h.bins,
                                                h.counts.begin() + std::size_t(k + 1) * h.bins));
  doc["counts"] = counts;
  write_atomically(path, [&](std::ostream& out) { out << doc.dump(1) << "\n"; });
}

void write_histogram_csv(const std::string& path, const Histogram& h) {
  write_atomically(path, [&](std::ostream& out) {
    out << "bin,lower,upper";
    if (h.hists == 3)
      out << ",count_r,count_g,count_b\n";
    else
      out << ",count\n";
    for (int b = 0; b < h.bins; ++b) {
      out << fmt::format("{},{},{}", b, lower(h, b), upper(h, b));
      for (int k = 0; k < h.hists; ++k) out << "," << h.counts[std::size_t(k) * h.bins + b];
      out << "\n";
    }
  });
}

void write_histogram_plot(const std::string& path, const Histogram& h, bool log_scale) {
  const int width = std::clamp(h.bins, 256, 1024), height = 200;
  PixelBuffer plot(width, height, 3, PixelType::u8);
  auto* px = plot.samples<std::uint8_t>();
  std::fill(px, px + plot.sample_count(), std::uint8_t(255));
  const auto scaled = [&](std::uint64_t c) {
    return log_scale ? std::log1p(double(c)) : double(c);
  };
  double peak = 0;
  for (auto c : h.counts) peak = std::max(peak, scaled(c));
  const std::uint8_t colours[3][3] = {{220, 40, 40}, {40, 170, 40}, {40, 80, 220}};
  for (int k = 0; k < h.hists; ++k)
    for (int x = 0; x < width; ++x) {
      const int b = int(std::int64_t(x) * h.bins / width);
      const double v = peak > 0 ? scaled(h.counts[std::size_t(k) * h.bins + b]) / peak : 0;
      const int bar = int(std::lround(v * (height - 1)));
      for (int y = height - bar; y < height; ++y)
        for (int ch = 0; ch < 3; ++ch) {
          auto& p = px[(std::size_t(y) * width + x) * 3 + ch];
          // Channels blend where they overlap; one histogram is drawn dark grey.
          const std::uint8_t ink = h.hists == 3 ? colours[k][ch] : 60;
          p = std::uint8_t(p == 255 ? ink : (p + ink) / 2);
        }
    }
  write_image(path, plot, storable_type(path, SampleType::u8));
}

}  // namespace halo
