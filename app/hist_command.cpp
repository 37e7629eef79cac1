// `halo hist`: the exact histogram of one image, on the device (or the reference), with
// summary, JSON, CSV and plot outputs.
#include <spdlog/spdlog.h>

#include <cmath>
#include <limits>

#include "app/commands.hpp"
#include "app/device_pool.hpp"
#include "app/histogram_report.hpp"
#include "batch/inputs.hpp"
#include "cl/cl_error.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "filters/registry.hpp"
#include "io/image_io.hpp"
#include "io/standard_streams.hpp"
#include "run/measure.hpp"

namespace halo {

namespace {

struct HistOptions {
  std::string input, mode = "luma", range = "auto", method = "auto";
  int bins = 256, channel = 0;
  std::string ppi = "auto";
  std::string json, csv, plot;
  bool log_scale = false, verify = false;
  bool stops = false;  // --stops
};

// The options as a histogram spec, so they are checked by the same parameter table as -f, and
// counted by the same stage.
std::string spec_text_of(const HistOptions& o) {
  std::string text = fmt::format("histogram:mode={}:bins={}:range={}:method={}:ppi={}", o.mode,
                                 o.bins, o.range, o.method, o.ppi);
  if (o.mode == "channel") text += ":c=" + std::to_string(o.channel);
  return text;
}

HistogramSpec spec_of(const std::string& text) {
  return HistogramSpec::from(Args(parse_spec(text), find_filter("histogram")->params));
}

// The first counter where two histograms differ, for the --verify message.
std::string first_difference(const Histogram& a, const Histogram& b) {
  for (std::size_t i = 0; i < a.counts.size(); ++i)
    if (a.counts[i] != b.counts[i])
      return fmt::format("bin {}: device {} vs reference {}", i, a.counts[i], b.counts[i]);
  return fmt::format(
      "apart counters or range: device under {} over {} NaN {} Inf {} [{}, {}], "
      "reference under {} over {} NaN {} Inf {} [{}, {}]",
      a.under, a.over, a.nan, a.inf, a.lo, a.hi, b.under, b.over, b.nan, b.inf, b.lo, b.hi);
}

// --stops: the samples the histogram counts (Rec.709 luma for the luma modes, each channel for
// rgb, the one channel for gray and channel) as log2, computed here once so that the device
// and the reference count the same floats. The bins are then stops (EV): an HDR image whose
// highlights are 10^4 times its shadows spreads over 14 stops instead of landing in bin 0.
// Zero and negative samples become -inf and are counted apart (Inf).
PixelBuffer in_stops(const PixelBuffer& pixels, const HistOptions& o) {
  const Image image = to_image(pixels);
  const bool rgb = o.mode == "rgb", luma = o.mode == "luma" || o.mode == "luma709";
  if ((rgb || luma) && image.color_channels() < 3)
    throw Error(ErrorKind::Usage, "--stops with --mode " + o.mode + " needs 3 colour channels");
  const int channels = rgb ? 3 : 1;
  PixelBuffer out(image.width(), image.height(), channels, PixelType::f32);
  float* s = out.samples<float>();
  const auto stops = [](double v) {
    return v > 0 ? float(std::log2(v)) : -std::numeric_limits<float>::infinity();
  };
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x, s += channels) {
      if (luma)
        s[0] = stops(0.2126 * image.at(x, y, 0) + 0.7152 * image.at(x, y, 1) +
                     0.0722 * image.at(x, y, 2));
      else if (rgb)
        for (int c = 0; c < 3; ++c) s[c] = stops(image.at(x, y, c));
      else
        s[0] = stops(image.at(x, y, o.mode == "channel" ? o.channel : 0));
    }
  return out;
}

int hist(const HistOptions& given, const GlobalOptions& global) {
  std::optional<StandardInput> piped;
  const std::string input = is_standard_input(given.input) ? piped.emplace().path() : given.input;
  HistOptions o = given;
  std::string quantity;
  // --stops: the image read whole and its log2 computed here once, so that the device and the
  // reference count the same floats. Otherwise the histogram stage streams the file.
  std::optional<PixelBuffer> stops;
  if (o.stops) {
    stops = in_stops(read_image(parse_input_ref(input)).pixels, o);
    quantity = "log2 " + std::string(o.mode == "rgb" ? "R, G, B" : o.mode) + " (stops)";
    if (o.mode != "rgb") o.mode = "gray", o.channel = 0;
  }
  const std::string spec_text = spec_text_of(o);
  const HistogramSpec spec = spec_of(spec_text);
  refuse_clobbering({{"--json", o.json}, {"--csv", o.csv}, {"--plot", o.plot}}, {o.input});
  // The file opened once: its size for the device choice, then each count streams it.
  std::optional<HistogramStream> streamed;
  if (!stops) streamed.emplace(input, spec_text);
  const auto count = [&](Device* device) {
    if (streamed) return streamed->count(device);
    return device ? histogram_device(*device, *stops, spec) : histogram_reference(*stops, spec);
  };
  const double samples =
      stops ? double(stops->width) * stops->height * stops->channels : streamed->samples();
  Histogram result;
  bool counted = false;
  DevicePool devices(global, 1);
  devices.plan(
      {.per_sample = StageCost{}, .needs_device = o.verify});  // counting: the default cost
  DevicePool::Lease lease = devices.acquire(samples);
  if (Device* device = lease.device()) {
    try {
      result = count(device);
      counted = true;
    } catch (const ClError& e) {
      fall_back_or_rethrow(global, e, "", "counting on the CPU instead");
    }
  }
  if (!counted) result = count(nullptr);
  // With a report on standard output (-), the text goes to stderr so stdout stays parseable.
  std::FILE* text = is_standard_output(o.json) || is_standard_output(o.csv) ? stderr : stdout;
  fmt::print(text, "{}", histogram_summary(result));
  if (!quantity.empty()) fmt::print(text, "binned: {}\n", quantity);
  if (!o.json.empty()) write_histogram_json(o.json, result, o.input, quantity);
  if (!o.csv.empty()) write_histogram_csv(o.csv, result);
  if (!o.plot.empty()) write_histogram_plot(o.plot, result, o.log_scale, quantity);
  if (o.verify && counted) {
    const Histogram reference = count(nullptr);
    if (!result.same_counts(reference))
      throw Error(ErrorKind::Mismatch, "verify: histogram differs from the reference at " +
                                           first_difference(result, reference));
    fmt::print(text, "verify histogram: identical to the reference ({} bins, {} binned)\n",
               result.counts.size(), result.binned());
  }
  return 0;
}

}  // namespace

Command add_hist_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<HistOptions>();
  auto* cmd = app.add_subcommand("hist",
                                 "exact histogram of an image (64-bit counts), on the "
                                 "device, identical to the CPU reference");
  cmd->add_option("input", o->input,
                  "input image, or - for standard input; FILE[ch,...] picks channels")
      ->required();
  cmd->add_option("--mode", o->mode,
                  "luma (Rec.601, integer on 8/16-bit: grey v lands in bin v), luma709, rgb, "
                  "gray (one-channel images), channel")
      ->capture_default_str();
  cmd->add_option("-c,--channel", o->channel, "channel index for --mode channel");
  cmd->add_option("--bins", o->bins, "1..65536")->capture_default_str();
  cmd->add_option("--range", o->range, "lo,hi for float data, or auto (finite min and max)")
      ->capture_default_str();
  cmd->add_option("--method", o->method, "auto, global, local, private (device strategy)")
      ->capture_default_str();
  cmd->add_option("--ppi", o->ppi, "pixels per work-item, or auto (by image size and device)")
      ->capture_default_str();
  cmd->add_option("--json", o->json, "write counts as JSON (schema halo.histogram/1)");
  cmd->add_option("--csv", o->csv, "write counts as CSV: bin,lower,upper,count...");
  cmd->add_option("--plot", o->plot,
                  "draw the histogram: .svg for a chart with axes, ticks and labels; .png (or "
                  "another image format) for bars with axes and numeric ticks");
  cmd->add_flag("--log", o->log_scale, "log count axis for --plot");
  cmd->add_flag("--stops", o->stops,
                "bin log2 of the values (exposure stops), for HDR images whose range puts "
                "almost everything in the first bin; --range then is in stops");
  cmd->add_flag("--verify", o->verify, "also count on the CPU; exit 1 unless identical");
  return [o, &global] { return hist(*o, global); };
}

}  // namespace halo
