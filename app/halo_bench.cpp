// halo_bench: times filters on generated random images with OpenCL profiling events (warm-up,
// then the median of N runs) and reports ms, GB/s and the ratio to the device's one-pass floor
// (bytes read once + written once, at the copy bandwidth measured in the same run). Each filter
// is first checked against its CPU reference on a smaller image. Links only the engine, so it
// can be packed for the GPU machine.
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "cl/cl_error.hpp"
#include "cl/pinned_pool.hpp"
#include "core/record.hpp"
#include "filters/guided/guides.hpp"
#include "filters/measure/histogram.hpp"
#include "filters/registry.hpp"
#include "net/denoise_net.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/stream.hpp"
#include "pipeline/strips.hpp"
#include "pipeline/transfer.hpp"
#include "verify/compare.hpp"

namespace halo {
namespace {

struct Options {
  int width = 7680, height = 4320;
  std::vector<int> channels = {1, 3};
  std::vector<std::string> filters = {"sharpen",      "emboss:gray=0", "gaussian:r=2",
                                      "gaussian:r=8", "gaussian:r=16", "gaussian:r=64",
                                      "box:r=4",      "box:r=32"};
  std::vector<std::string> hist_methods = {"global", "local", "private"};
  std::vector<std::string> hist_ppi = {"16", "64", "256", "auto"};
  bool histograms = true;
  bool filters_on = true;
  bool guided = true;
  int stream = 0;                          // images for the batch-overlap measurement; 0: skip it
  std::vector<std::string> denoise_sizes;  // WxH frames for the denoise network; none: skip it
  std::vector<std::string> denoise_specs = {"denoise"};
  int runs = 20;
  int warmup = 3;
  std::string device = "auto";
  std::string json;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Device times of o.runs calls of `once` after o.warmup untimed ones: the median total per
// call (labels in `skip` left out) and the median per label of its time in a call.
struct Timed {
  double median_ms = 0;
  double wall_ms = 0;  // median host time from the first enqueue to the queue's end
  std::map<std::string, double> by_label;
};

template <class Once>
Timed time_runs(Device& device, const Options& o, const std::set<std::string>& skip, Once once) {
  std::vector<double> totals, walls;
  std::map<std::string, std::vector<double>> labels;
  // Buffers reused from call to call, as halo run reuses them from strip to strip: the wall
  // time then holds no allocation.
  Device::Recycling recycling(device);
  for (int i = 0; i < o.warmup + o.runs; ++i) {
    recycling.next_strip();
    device.finish();
    const auto start = std::chrono::steady_clock::now();
    once();
    const auto timings = device.take_timings();
    const std::chrono::duration<double, std::milli> wall = std::chrono::steady_clock::now() - start;
    if (i >= o.warmup) walls.push_back(wall.count());
    double total = 0;
    std::map<std::string, double> call;  // per label, summed over the call's launches
    for (const auto& t : timings) {
      if (skip.count(t.label)) continue;
      total += t.ms;
      call[t.label] += t.ms;
    }
    if (i >= o.warmup)
      for (const auto& [label, ms] : call) labels[label].push_back(ms);
    if (i >= o.warmup) totals.push_back(total);
  }
  Timed timed{median(totals), median(walls), {}};
  for (auto& [label, times] : labels) timed.by_label[label] = median(times);
  return timed;
}

PixelBuffer random_floats(int width, int height, int channels) {
  return random_pixels(width, height, channels, PixelType::f32, 1234);
}

// Copy bandwidth (read + write) of a device-to-device buffer copy, the yardstick of the floor.
double copy_gbps(Device& device, std::size_t bytes, int runs) {
  cl::Buffer a = device.buffer(bytes, "copy source"), b = device.buffer(bytes, "copy target");
  std::vector<double> ms;
  for (int i = 0; i < runs + 2; ++i) {
    device.copy(a, b, 0, 0, bytes, "copy");
    const auto t = device.take_timings();
    if (i >= 2) ms.push_back(t.front().ms);
  }
  return 2.0 * bytes / (median(ms) * 1e6);
}

// The image itself copied by the driver (clEnqueueCopyBuffer): what moving exactly a filter's
// bytes costs at this size, beside the floor taken from 1 GiB copies. A filter's ratio to this
// row is the part of its gap that its own kernel owns.
void bench_image_copy(Device& device, const Options& o, const DeviceImage& input, int channels,
                      double floor_ms, nlohmann::json& results) {
  const std::size_t bytes = input.bytes();
  cl::Buffer target = device.buffer(bytes, "copy target");
  const Timed timed =
      time_runs(device, o, {}, [&] { device.copy(input.buffer, target, 0, 0, bytes, "copy"); });
  const double m = timed.median_ms;
  fmt::print("{:<18} {:>3} {:>10.4f} {:>9.0f} {:>9.4f} {:>8.2f} {:>10} {:>9.4f}\n",
             "(copy, same bytes)", channels, m, 2.0 * bytes / (m * 1e6), floor_ms, m / floor_ms,
             "-", timed.wall_ms);
  results.push_back({{"filter", "copy"},
                     {"channels", channels},
                     {"median_ms", m},
                     {"gbps", 2.0 * bytes / (m * 1e6)},
                     {"floor_ms", floor_ms},
                     {"x_floor", m / floor_ms},
                     {"wall_ms", timed.wall_ms}});
}

// Device vs reference on a 1023x517 crop-sized image before any timing is trusted.
double check(Device& device, const Stage& stage, int channels) {
  const PixelBuffer small = random_floats(1023, 517, channels);
  const Image got = download_image(device, stage.enqueue(device, upload(device, small)));
  device.take_timings();
  return compare(got, stage.reference(to_image(small)), 1e-5).max_error;
}

PixelBuffer random_bytes(int width, int height, int channels, bool constant) {
  PixelBuffer pixels = random_pixels(width, height, channels, PixelType::u8, 99);
  if (constant) std::fill(pixels.bytes.begin(), pixels.bytes.end(), std::byte{128});
  return pixels;
}

HistogramSpec hist_spec(const std::string& text) {
  return HistogramSpec::from(Args(parse_spec(text), find_filter("histogram")->params));
}

// Each strategy and pixels-per-item on 8-bit data; time = count + reduce kernels (the upload
// is left out), against the read floor (input bytes at the copy bandwidth).
void bench_histograms(Device& device, const Options& o, double copy, nlohmann::json& results) {
  struct Case {
    std::string name, mode;
    int channels;
    bool constant;
  };
  const Case cases[] = {{"rgb8 random", "luma", 3, false},
                        {"rgb8 constant", "luma", 3, true},
                        {"grey8 random", "gray", 1, false}};
  fmt::print("\n{:<14} {:<6} {:>8} {:>5} {:>10} {:>9} {:>9} {:>8} {:>9}\n", "histogram", "mode",
             "method", "ppi", "ms", "GB/s", "floor ms", "x floor", "count ms");
  for (const auto& c : cases) {
    const PixelBuffer pixels = random_bytes(o.width, o.height, c.channels, c.constant);
    const Histogram expected = histogram_reference(pixels, hist_spec("histogram:mode=" + c.mode));
    const double floor_ms = pixels.bytes.size() / (copy * 1e6);
    for (const auto& method : o.hist_methods)
      for (const auto& ppi : o.hist_ppi) {
        const std::string spec =
            fmt::format("histogram:mode={}:method={}:ppi={}", c.mode, method, ppi);
        bool exact = true;
        int used_ppi = 0;
        HistogramTotals totals;  // run on from call to call, as a batch's would
        const Timed timed = time_runs(device, o, {"upload"}, [&] {
          const Histogram got = histogram_device(device, pixels, hist_spec(spec), &totals);
          exact = exact && got.same_counts(expected);
          used_ppi = got.pixels_per_item;
        });
        const double m = timed.median_ms;
        const double count_ms = timed.by_label.at("histogram_" + method);
        fmt::print("{:<14} {:<6} {:>8} {:>5} {:>10.4f} {:>9.0f} {:>9.4f} {:>8.2f} {:>9.4f}{}\n",
                   c.name, c.mode, method, fmt::format("{}{}", ppi == "auto" ? "a" : "", used_ppi),
                   m, pixels.bytes.size() / (m * 1e6), floor_ms, m / floor_ms, count_ms,
                   exact ? "" : "  MISMATCH");
        results.push_back({{"histogram", c.name},
                           {"mode", c.mode},
                           {"method", method},
                           {"ppi", used_ppi},
                           {"ppi_spec", ppi},
                           {"median_ms", m},
                           {"floor_ms", floor_ms},
                           {"x_floor", m / floor_ms},
                           {"count_ms", count_ms},
                           {"exact", exact}});
      }
  }
}

// Guides like a render's: normals that turn across bands, depth in steps, albedo in (0, 1).
std::shared_ptr<const Guides> bench_guides(int w, int h, bool albedo) {
  Image n(w, h, 3), z(w, h, 1), a;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float t = float((x / 97 + y / 61) % 5) * 0.3f;
      n.at(x, y, 0) = std::sin(t), n.at(x, y, 2) = std::cos(t);
      z.at(x, y, 0) = 2.0f + float((x / 211) % 3);
    }
  if (albedo) {
    a = Image(w, h, 3);
    for (float& v : a.data()) v = 0.5f;
  }
  return std::make_shared<const Guides>(
      prepare_guides(std::move(n), std::move(z), std::move(a), w, h));
}

// bilateral and atrous on RGB float with normal and depth (and albedo): bytes counted as
// colour in and out + normal + depth [+ albedo], once each.
void bench_guided(Device& device, const Options& o, double copy, nlohmann::json& results) {
  const PixelBuffer pixels = random_floats(o.width, o.height, 3);
  const DeviceImage input = upload(device, pixels);
  fmt::print("\n{:<30} {:>10} {:>9} {:>9} {:>8}\n", "guided (RGB + N + Z [+ A])", "ms", "GB/s",
             "floor ms", "x floor");
  for (const bool albedo : {false, true}) {
    const auto guides = bench_guides(o.width, o.height, albedo);
    // The defaults, larger radii, and the options that cost more (walk=2d) or less (atrous
    // without the fireflies step and the outline rule).
    for (const std::string spec :
         {"bilateral", "bilateral:fireflies=0", "bilateral:r=8", "bilateral:walk=2d", "atrous",
          "atrous:fireflies=0:outline=0", "atrous:iters=5"}) {
      auto stage = make_stage(spec + (albedo ? "" : ":albedo=off"));
      StageRun run;  // uploads the guides on its first call, as a file's run does once
      run.guides = guides.get();
      const double planes = 3 + 3 + 3 + 1 + (albedo ? 3 : 0);
      const double bytes = planes * std::size_t(o.width) * o.height * sizeof(float);
      const double floor_ms = bytes / (copy * 1e6);
      const Timed timed =
          time_runs(device, o, {"upload", "alpha"}, [&] { stage->enqueue(device, input, run); });
      const double m = timed.median_ms;
      const std::string name = spec + (albedo ? " +albedo" : "");
      // Each kernel's median after the total: where a guided filter's time goes.
      std::string kernels;
      for (const auto& [label, ms] : timed.by_label)
        kernels += fmt::format(" {} {:.3f}", label, ms);
      fmt::print("{:<30} {:>10.4f} {:>9.0f} {:>9.4f} {:>8.2f} {}\n", name, m, bytes / (m * 1e6),
                 floor_ms, m / floor_ms, kernels);
      results.push_back({{"guided", name},
                         {"median_ms", m},
                         {"floor_ms", floor_ms},
                         {"x_floor", m / floor_ms},
                         {"bytes", bytes},
                         {"kernels_ms", timed.by_label}});
    }
  }
}

// The device's fused multiply-add throughput (flop/s) by kernels/peak.cl: the ceiling of
// compute-bound kernels, measured like the copy bandwidth.
double peak_flops(Device& device, int runs) {
  const int width = std::max(device.tuning().vec, 1);
  const std::size_t items = std::size_t(device.info().compute_units) * 2048 * 4 / width;
  const int chains = 8, steps = 1024;
  cl::Buffer out = device.buffer(items * sizeof(float), "peak output");
  auto k = device.kernel("peak.cl", "peak_fma",
                         {{"CHAINS", std::to_string(chains)},
                          {"STEPS", std::to_string(steps)},
                          {"WIDTH", std::to_string(width)}});
  std::vector<double> ms;
  for (int i = 0; i < runs + 2; ++i) {
    set_args(k, out, 0.999f, 0.001f);
    device.launch(k, "peak", cl::NDRange(items), cl::NDRange(width > 1 ? 1 : 256));
    const auto t = device.take_timings();
    if (i >= 2) ms.push_back(t.front().ms);
  }
  return 2.0 * chains * steps * width * items / (median(ms) * 1e-3);
}

// Guides like a render's for the denoise network: albedo in (0, 1), unit normals.
Guides denoise_guides(int w, int h) {
  Image n(w, h, 3), a(w, h, 3);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.05f, 0.95f);
  for (float& v : a.data()) v = u(rng);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float t = float((x / 37 + y / 23) % 7) * 0.4f;
      n.at(x, y, 0) = std::sin(t), n.at(x, y, 2) = std::cos(t);
    }
  Guides g;
  g.normal = std::move(n);
  g.albedo = std::move(a);
  return g;
}

// OIDN's network through the denoise filter on RGB float frames with albedo and normals: the
// whole filter and each layer, against floors from the layer's work at the measured FMA
// throughput and its tensors' bytes at the copy bandwidth (the larger of the two, per layer).
// Checked against the reference on a 176x112 frame first (odd sides at the deepest level).
void bench_denoise(Device& device, const Options& o, double copy, nlohmann::json& results) {
  const double peak = peak_flops(device, o.runs);
  fmt::print("\ndenoise: FMA peak {:.3f} TFLOP/s (kernels/peak.cl), copy {:.0f} GB/s\n",
             peak * 1e-12, copy);
  for (const auto& spec : o.denoise_specs) {
    const auto stage = make_stage(spec);
    {
      const int w = 176, h = 112;  // the deepest level 11 x 7: odd sides
      const Guides g = denoise_guides(w, h);
      StageRun dev_run, ref_run;
      dev_run.guides = ref_run.guides = &g;
      const PixelBuffer small = random_floats(w, h, 3);
      const Image got =
          download_image(device, stage->enqueue(device, upload(device, small), dev_run));
      device.take_timings();
      const double error = compare(got, stage->reference(to_image(small), ref_run), 1e-4).max_error;
      fmt::print("{} against the reference (176x112): max error {:.3g}\n", spec, error);
    }
    for (const auto& size : o.denoise_sizes) {
      int w = 0, h = 0;
      std::sscanf(size.c_str(), "%dx%d", &w, &h);
      const Guides g = denoise_guides(w, h);
      StageRun run;
      run.guides = &g;
      const DeviceImage input = upload(device, random_floats(w, h, 3));
      device.take_timings();
      const Timed timed =
          time_runs(device, o, {"alpha"}, [&] { stage->enqueue(device, input, run); });
      // The network the filter ran, for the floors.
      const auto net = DenoiseNet::load("rt_hdr_alb_nrm");
      const double px = double(ceil_div(w, 16) * 16) * (ceil_div(h, 16) * 16);
      double floor_total = 0, flops_total = 0;
      nlohmann::json layers = nlohmann::json::array();
      fmt::print("\n{:<24} {:>9} {:>9} {:>9} {:>8}   ({} {})\n", "layer", "ms", "TFLOP/s",
                 "floor ms", "x floor", spec, size);
      for (const auto& l : net->layers()) {
        const double at = px / double(1 << (2 * l.level));
        const double flops = 2.0 * 9 * l.in * l.out * at;
        const double bytes = 4.0 * (l.in * at + l.out * (l.pool ? at / 4 : at));
        const double floor_ms = std::max(flops / peak, bytes / (copy * 1e9)) * 1e3;
        double ms = 0;
        for (const auto& [label, t] : timed.by_label)
          if (label == l.name || label.rfind(l.name + " ", 0) == 0) ms += t;
        floor_total += floor_ms, flops_total += flops;
        fmt::print("{:<24} {:>9.3f} {:>9.3f} {:>9.3f} {:>8.2f}\n", l.name, ms, flops / (ms * 1e9),
                   floor_ms, ms / floor_ms);
        layers.push_back({{"layer", l.name}, {"ms", ms}, {"flops", flops}, {"floor_ms", floor_ms}});
      }
      const double m = timed.median_ms;
      fmt::print("{:<24} {:>9.3f} {:>9.3f} {:>9.3f} {:>8.2f}   wall {:.3f} ms\n", "whole filter", m,
                 flops_total / (m * 1e9), floor_total, m / floor_total, timed.wall_ms);
      results.push_back({{"denoise", spec},
                         {"size", size},
                         {"median_ms", m},
                         {"wall_ms", timed.wall_ms},
                         {"floor_ms", floor_total},
                         {"flops", flops_total},
                         {"peak_flops", peak},
                         {"layers", layers},
                         {"kernels_ms", timed.by_label}});
    }
  }
}

// Host <-> device bandwidth from pageable (std::vector) and pinned memory, by event times.
// Returns the pinned {upload, download} GB/s.
std::pair<double, double> bench_transfers(Device& device, const Options& o,
                                          nlohmann::json& results) {
  const std::size_t bytes = std::size_t(256) << 20;
  cl::Buffer target = device.buffer(bytes, "transfer target");
  std::vector<std::uint8_t> pageable(bytes, 1);
  const auto pinned = device.pinned(bytes);
  std::memset(pinned->data(), 1, bytes);
  fmt::print("\n{:<30} {:>10} {:>9}\n", "transfers (256 MiB)", "ms", "GB/s");
  std::pair<double, double> pinned_gbps;
  for (const bool use_pinned : {false, true})
    for (const bool upload : {true, false}) {
      void* host = use_pinned ? pinned->data() : pageable.data();
      const double m = time_runs(device, o, {}, [&] {
                         if (upload)
                           device.write(target, host, bytes, "upload");
                         else
                           device.read(target, host, bytes, "download");
                       }).median_ms;
      const std::string name =
          std::string(upload ? "upload" : "download") + (use_pinned ? " pinned" : " pageable");
      fmt::print("{:<30} {:>10.3f} {:>9.1f}\n", name, m, bytes / (m * 1e6));
      results.push_back({{"transfer", name}, {"median_ms", m}, {"gbps", bytes / (m * 1e6)}});
      if (use_pinned) (upload ? pinned_gbps.first : pinned_gbps.second) = bytes / (m * 1e6);
    }
  return pinned_gbps;
}

// Frames through the streaming executor, host memory to host memory, as `halo run` streams a
// file: 8-bit RGB frames of 7680x4320 (8K) and 15360x8640 (16K) in page-locked memory,
// gaussian r=8, strips as halo run sizes them on this device, on one queue and on two (one
// strip's transfers overlapping another's kernels). Frames per second by wall clock, against
// the transfer floor: each frame up and back at the pinned bandwidths, the two directions
// overlapped (the larger of the two times).
void bench_stream(Device& device, const Options& o, std::pair<double, double> pinned_gbps,
                  nlohmann::json& results) {
  PinnedPool pool(device);
  const Pipeline pipeline(std::vector<StageSpec>{{"gaussian:r=8", ""}});
  fmt::print("\n{:<36} {:>6} {:>9} {:>9} {:>9} {:>8}\n", "streamed frames (RGB8, gaussian r=8)",
             "strip", "frames/s", "ms/frame", "floor ms", "x floor");
  for (const auto& [name, w, h] :
       {std::tuple{"8K 7680x4320", 7680, 4320}, std::tuple{"16K 15360x8640", 15360, 8640}}) {
    const PixelBuffer pageable = random_bytes(w, h, 3, false);
    PixelBuffer frame(w, h, 3, PixelType::u8, false, &pool);
    std::copy(pageable.bytes.begin(), pageable.bytes.end(), frame.bytes.begin());
    StreamInput shape;
    shape.width = w, shape.height = h, shape.channels = 3, shape.type = PixelType::u8;
    const int strip = choose_strip_rows(pipeline, shape, PixelType::u8, strip_limits(&device));
    const double bytes = double(frame.bytes.size());
    const double floor_ms = std::max(bytes / pinned_gbps.first, bytes / pinned_gbps.second) * 1e-6;
    const PixelBuffer expected =
        run_reference(pipeline, random_bytes(w, 64, 3, false), PixelType::u8);
    for (int lanes : {1, 2}) {
      const RunOptions options{.stream = {.strip_rows = strip, .lanes = lanes},
                               .result_memory = &pool};
      // The first rows against the reference, before any time counts.
      const RunResult check =
          run_device(device, pipeline, random_bytes(w, 64, 3, false), PixelType::u8, options);
      const bool exact = check.pixels.bytes == expected.bytes;
      device.take_timings();
      std::vector<double> rates;
      for (int rep = 0; rep < 3; ++rep) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < o.stream; ++i)
          run_device(device, pipeline, frame, PixelType::u8, options);
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        device.take_timings();
        rates.push_back(o.stream / s);
      }
      const double rate = median(rates);
      const std::string label = std::string(name) + (lanes == 1 ? ", one queue" : ", two queues");
      fmt::print("{:<36} {:>6} {:>9.1f} {:>9.2f} {:>9.2f} {:>8.2f}{}\n", label, strip, rate,
                 1000 / rate, floor_ms, 1000 / rate / floor_ms, exact ? "" : "  MISMATCH");
      results.push_back({{"stream", label},
                         {"strip_rows", strip},
                         {"frames", o.stream},
                         {"frames_per_s", rate},
                         {"frames_per_s_runs", rates},
                         {"floor_ms", floor_ms},
                         {"x_floor", 1000 / rate / floor_ms},
                         {"exact", exact}});
    }
  }
}

int run(const Options& o) {
  Device device(select_device(o.device), default_cache_dir());
  const double copy = copy_gbps(device, std::size_t(1) << 30, o.runs);
  fmt::print("device: {} ({}), copy {:.0f} GB/s (read + write, 1 GiB buffers)\n",
             device.info().name, device.info().platform_name, copy);
  fmt::print("image {}x{} float, median of {} runs after {} warm-up\n\n", o.width, o.height, o.runs,
             o.warmup);
  fmt::print("{:<18} {:>3} {:>10} {:>9} {:>9} {:>8} {:>10} {:>9}\n", "filter", "ch", "ms", "GB/s",
             "floor ms", "x floor", "max err", "wall ms");
  nlohmann::json results = nlohmann::json::array();
  for (int channels : o.filters_on ? o.channels : std::vector<int>{}) {
    const PixelBuffer pixels = random_floats(o.width, o.height, channels);
    const DeviceImage input = upload(device, pixels);
    device.take_timings();
    const double bytes = 2.0 * pixels.bytes.size();  // read once + write once
    const double floor_ms = bytes / (copy * 1e6);
    bench_image_copy(device, o, input, channels, floor_ms, results);
    for (const auto& spec : o.filters) {
      const auto stage = make_stage(spec);
      const double error = check(device, *stage, channels);
      const Timed timed = time_runs(device, o, {"alpha"}, [&] { stage->enqueue(device, input); });
      const double m = timed.median_ms;
      fmt::print("{:<18} {:>3} {:>10.4f} {:>9.0f} {:>9.4f} {:>8.2f} {:>10.2g} {:>9.4f}\n", spec,
                 channels, m, bytes / (m * 1e6), floor_ms, m / floor_ms, error, timed.wall_ms);
      nlohmann::json entry = {
          {"filter", spec},          {"channels", channels},    {"width", o.width},
          {"height", o.height},      {"median_ms", m},          {"gbps", bytes / (m * 1e6)},
          {"floor_ms", floor_ms},    {"x_floor", m / floor_ms}, {"max_error_vs_reference", error},
          {"wall_ms", timed.wall_ms}};
      for (auto& [label, ms] : timed.by_label) entry["kernels_ms"][label] = ms;
      results.push_back(entry);
    }
  }
  if (o.guided) bench_guided(device, o, copy, results);
  if (!o.denoise_sizes.empty()) bench_denoise(device, o, copy, results);
  if (o.histograms) bench_histograms(device, o, copy, results);
  if (o.stream > 0) bench_stream(device, o, bench_transfers(device, o, results), results);
  if (!o.json.empty()) {
    const nlohmann::json doc = {{"device", device.info().name},
                                {"driver", device.info().driver_version},
                                {"copy_gbps", copy},
                                {"runs", o.runs},
                                {"results", results}};
    std::ofstream(o.json) << json_text(doc, 2) << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace halo

int main(int argc, char** argv) {
  halo::Options o;
  CLI::App app{"halo_bench: device times of halo's filters against the copy-bandwidth floor"};
  std::string size = "7680x4320";
  app.add_option("--size", size, "image size WxH")->capture_default_str();
  app.add_option("--channels", o.channels, "channel counts to run")->capture_default_str();
  app.add_option("-f,--filter", o.filters, "filter specs (default: a standard set)");
  app.add_option("--runs", o.runs, "timed runs (median)")->capture_default_str();
  app.add_option("--warmup", o.warmup, "untimed runs first")->capture_default_str();
  app.add_option("--device", o.device, "as halo --device")->capture_default_str();
  app.add_option("--json", o.json, "write full results here");
  app.add_option("--hist-ppi", o.hist_ppi,
                 "pixels per work-item to time for histograms (auto: as halo picks; shown aN)")
      ->capture_default_str();
  app.add_flag("!--no-histograms", o.histograms, "skip the histogram strategies");
  app.add_option("--hist-method", o.hist_methods, "histogram strategies to time")
      ->capture_default_str();
  app.add_flag("!--no-guided", o.guided, "skip bilateral and atrous");
  app.add_flag("!--no-filters", o.filters_on, "skip the filters (histograms only)");
  app.add_option("--stream", o.stream,
                 "also stream N 8K and N 16K RGB8 frames from host memory to host memory "
                 "(gaussian r=8, strips as halo run sizes them) on one and two queues, against "
                 "the pinned transfer floor; and pageable vs pinned transfers");
  app.add_option("--denoise", o.denoise_sizes,
                 "also time the denoise network (OIDN's U-Net, weights installed) on RGB frames "
                 "of these sizes with albedo and normals, per layer, against FMA and copy floors "
                 "(e.g. 1920x1080 3840x2160)");
  app.add_option("--denoise-spec", o.denoise_specs, "denoise specs to time")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (std::sscanf(size.c_str(), "%dx%d", &o.width, &o.height) != 2) {
    fmt::print(stderr, "halo_bench: --size wants WxH, got {}\n", size);
    return 64;
  }
  spdlog::set_level(spdlog::level::warn);
  try {
    return halo::run(o);
  } catch (const halo::BuildError& e) {
    fmt::print(stderr, "halo_bench: error: {}\n{}\n", e.what(), e.log());
    return e.exit_code();
  } catch (const halo::Error& e) {
    fmt::print(stderr, "halo_bench: error: {}\n", e.what());
    return e.exit_code();
  }
}
