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
#include "core/record.hpp"
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

void write_histogram_json(const std::string& path, const Histogram& h, const std::string& input,
                          const std::string& quantity) {
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
  if (!quantity.empty()) doc["quantity"] = quantity;
  if (h.codes)
    doc["max_code"] = h.max_code;
  else
    doc["range"] = {h.lo, h.hi};
  nlohmann::json counts = nlohmann::json::array();
  for (int k = 0; k < h.hists; ++k)
    counts.push_back(std::vector<std::uint64_t>(h.counts.begin() + std::size_t(k) * h.bins,
                                                h.counts.begin() + std::size_t(k + 1) * h.bins));
  doc["counts"] = counts;
  write_atomically(path, [&](std::ostream& out) { out << json_text(doc, 1) << "\n"; });
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

namespace {

// "Nice" axis ticks: about `want` steps of 1, 2 or 5 times a power of ten over [lo, hi].
std::vector<double> ticks(double lo, double hi, int want) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / want;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / power < 1.5   ? power
                      : raw / power < 3.5 ? 2 * power
                      : raw / power < 7.5 ? 5 * power
                                          : 10 * power;
  std::vector<double> out;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    out.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  return out;
}

std::string tick_text(double v) {
  return std::fabs(v) >= 1e5 || (v != 0 && std::fabs(v) < 1e-3) ? fmt::format("{:.0e}", v)
                                                                : fmt::format("{:g}", v);
}

// What the plot shows: per histogram, its bins' heights in [0, 1], and the axes' ranges.
struct PlotData {
  std::vector<std::vector<double>> heights;  // [hist][bin]
  double x_lo = 0, x_hi = 1;                 // data units of the first bin's lower edge, the
                                             // last bin's upper edge
  double peak = 0;                           // the largest count
  bool log_counts = false;
  std::vector<std::string> names;
};

PlotData plot_data(const Histogram& h, bool log_scale) {
  PlotData d;
  d.log_counts = log_scale;
  d.names = channel_names(h);
  d.x_lo = lower(h, 0), d.x_hi = upper(h, h.bins - 1);
  for (auto c : h.counts) d.peak = std::max(d.peak, double(c));
  const auto scaled = [&](double c) { return log_scale ? std::log10(1 + c) : c; };
  for (int k = 0; k < h.hists; ++k) {
    std::vector<double> heights(std::size_t(h.bins), 0.0);
    for (int b = 0; b < h.bins; ++b)
      if (d.peak > 0)
        heights[b] = scaled(double(h.counts[std::size_t(k) * h.bins + b])) / scaled(d.peak);
    d.heights.push_back(std::move(heights));
  }
  return d;
}

std::string axis_label(const Histogram& h, const std::string& quantity) {
  const std::string what = !quantity.empty() ? quantity
                           : h.hists == 3    ? "R, G, B"
                                             : to_string(h.mode);
  return h.codes ? fmt::format("{} code (0..{})", what, h.max_code)
                 : fmt::format("{} value [{:g}, {:g}]", what, h.lo, h.hi);
}

// SVG: bars as one path per histogram, axes with ticks in data units and counts, labels.
void write_svg(const std::string& path, const Histogram& h, const PlotData& d,
               const std::string& quantity) {
  const int W = 720, H = 360, left = 70, right = 20, top = 30, bottom = 50;
  const double pw = W - left - right, ph = H - top - bottom;
  const char* colours[3] = {"#d62828", "#2a9d3a", "#2850dc"};
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      W, H, W, H);
  for (std::size_t k = 0; k < d.heights.size(); ++k) {
    std::string bars = fmt::format("M{} {}", left, top + ph);
    const std::size_t n = d.heights[k].size();
    for (std::size_t b = 0; b < n; ++b) {
      const double x0 = left + pw * double(b) / double(n),
                   x1 = left + pw * double(b + 1) / double(n);
      const double y = top + ph * (1 - d.heights[k][b]);
      bars += fmt::format(" L{:.2f} {:.2f} L{:.2f} {:.2f}", x0, y, x1, y);
    }
    bars += fmt::format(" L{} {} Z", left + pw, top + ph);
    svg += fmt::format("<path d=\"{}\" fill=\"{}\" fill-opacity=\"{}\" stroke=\"none\"/>\n", bars,
                       d.heights.size() == 3 ? colours[k] : "#3c3c3c",
                       d.heights.size() == 3 ? "0.45" : "0.85");
  }
  // Axes, ticks and labels.
  svg += fmt::format("<path d=\"M{} {} V{} H{}\" fill=\"none\" stroke=\"black\"/>\n", left, top,
                     top + ph, left + pw);
  for (double t : ticks(d.x_lo, d.x_hi, 8)) {
    const double x = left + pw * (t - d.x_lo) / (d.x_hi - d.x_lo);
    svg += fmt::format(
        "<path d=\"M{:.2f} {} v5\" stroke=\"black\"/><text x=\"{:.2f}\" y=\"{}\" "
        "text-anchor=\"middle\">{}</text>\n",
        x, top + ph, x, top + ph + 18, tick_text(t));
  }
  const auto count_ticks = d.log_counts ? std::vector<double>{} : ticks(0, d.peak, 5);
  for (double t : count_ticks) {
    const double y = top + ph * (1 - t / d.peak);
    svg += fmt::format(
        "<path d=\"M{} {:.2f} h-5\" stroke=\"black\"/><text x=\"{}\" y=\"{:.2f}\" "
        "text-anchor=\"end\">{}</text>\n",
        left, y, left - 8, y + 4, tick_text(t));
  }
  if (d.log_counts)  // decades of the log count axis
    for (double p = 1; p <= d.peak; p *= 10) {
      const double y = top + ph * (1 - std::log10(1 + p) / std::log10(1 + d.peak));
      svg += fmt::format(
          "<path d=\"M{} {:.2f} h-5\" stroke=\"black\"/><text x=\"{}\" "
          "y=\"{:.2f}\" text-anchor=\"end\">{}</text>\n",
          left, y, left - 8, y + 4, tick_text(p));
    }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2,
                     H - 10, axis_label(h, quantity));
  svg += fmt::format(
      "<text x=\"16\" y=\"{}\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 16 {})\">pixels{}</text>\n",
      top + ph / 2, top + ph / 2, d.log_counts ? " (log scale)" : "");
  svg += fmt::format(
      "<text x=\"{}\" y=\"18\" text-anchor=\"middle\">{} histogram, {} bins, "
      "{} pixels binned{}</text>\n",
      left + pw / 2, quantity.empty() ? to_string(h.mode) : quantity, h.bins, h.binned(),
      h.under + h.over + h.nan + h.inf
          ? fmt::format(" ({} outside the range)", h.under + h.over + h.nan + h.inf)
          : "");
  svg += "</svg>\n";
  write_atomically(path, [&](std::ostream& out) { out << svg; });
}

// Digits and the few signs tick labels use, 3x5 pixels each (one row per 3 bits, top first).
const std::uint8_t* glyph(char c) {
  static const std::uint8_t digits[10][5] = {
      {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
      {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7}};
  static const std::uint8_t dot[5] = {0, 0, 0, 0, 2}, minus[5] = {0, 0, 7, 0, 0},
                            plus[5] = {0, 2, 7, 2, 0}, e[5] = {0, 7, 7, 4, 7};
  if (c >= '0' && c <= '9') return digits[c - '0'];
  return c == '.' ? dot : c == '-' ? minus : c == '+' ? plus : c == 'e' ? e : nullptr;
}

// Raster: bars, a frame, ticks, and numeric tick labels in the little font above (the words
// of the SVG's labels need a font halo does not carry: ask for .svg for those).
void write_raster(const std::string& path, const Histogram& h, const PlotData& d) {
  const int left = 34, bottom = 18, top = 6, right = 8;
  const int pw = std::clamp(h.bins, 256, 1024), ph = 200;
  const int width = left + pw + right, height = top + ph + bottom;
  PixelBuffer plot(width, height, 3, PixelType::u8);
  auto* px = plot.samples<std::uint8_t>();
  std::fill(px, px + plot.sample_count(), std::uint8_t(255));
  const auto put = [&](int x, int y, std::uint8_t v) {
    if (x >= 0 && x < width && y >= 0 && y < height)
      for (int ch = 0; ch < 3; ++ch) px[(std::size_t(y) * width + x) * 3 + ch] = v;
  };
  const auto text = [&](int x, int y, const std::string& s) {  // x: the text's right end
    x -= int(s.size()) * 4;
    for (char c : s) {
      if (const std::uint8_t* g = glyph(c))
        for (int r = 0; r < 5; ++r)
          for (int b = 0; b < 3; ++b)
            if (g[r] & (4 >> b)) put(x + b, y + r, 0);
      x += 4;
    }
  };
  const std::uint8_t colours[3][3] = {{220, 40, 40}, {40, 170, 40}, {40, 80, 220}};
  for (std::size_t k = 0; k < d.heights.size(); ++k)
    for (int x = 0; x < pw; ++x) {
      const int b = int(std::int64_t(x) * h.bins / pw);
      const int bar = int(std::lround(d.heights[k][b] * (ph - 1)));
      for (int y = top + ph - bar; y < top + ph; ++y)
        for (int ch = 0; ch < 3; ++ch) {
          auto& p = px[(std::size_t(y) * width + left + x) * 3 + ch];
          const std::uint8_t ink = d.heights.size() == 3 ? colours[k][ch] : 60;
          p = std::uint8_t(p == 255 ? ink : (p + ink) / 2);  // channels blend where they overlap
        }
    }
  for (int y = top; y <= top + ph; ++y) put(left - 1, y, 0);
  for (int x = left - 1; x < left + pw; ++x) put(x, top + ph, 0);
  for (double t : ticks(d.x_lo, d.x_hi, 8)) {
    const int x = left + int(std::lround(pw * (t - d.x_lo) / (d.x_hi - d.x_lo)));
    for (int y = 1; y <= 3; ++y) put(x, top + ph + y, 0);
    const std::string label = tick_text(t);
    text(x + int(label.size()) * 2, top + ph + 6, label);
  }
  if (!d.log_counts)
    for (double t : ticks(0, d.peak, 5)) {
      const int y = top + ph - int(std::lround((ph - 1) * t / d.peak));
      for (int x = 1; x <= 3; ++x) put(left - 1 - x, y, 0);
      text(left - 6, y - 2, tick_text(t));
    }
  write_image(path, plot, storable_type(path, SampleType::u8));
}

}  // namespace

void write_histogram_plot(const std::string& path, const Histogram& h, bool log_scale,
                          const std::string& quantity) {
  const PlotData d = plot_data(h, log_scale);
  if (extension(path) == ".svg")
    write_svg(path, h, d, quantity);
  else
    write_raster(path, h, d);
}

}  // namespace halo
