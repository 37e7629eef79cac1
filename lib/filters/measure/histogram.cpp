// Histograms: parameters, the exact CPU reference, the device strategies of
// kernels/histogram.cl, and the pass-through pipeline stage `histogram`.
#include "filters/measure/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <spdlog/spdlog.h>

#include "cl/groups.hpp"
#include "cl/tuning.hpp"
#include "core/error.hpp"
#include "filters/colour/convert.hpp"
#include "filters/filter.hpp"
#include "kernels/contract.h"

namespace halo {

namespace {

constexpr std::uint64_t kChunk = std::uint64_t(1) << 30;  // pixels per launch: no uint overflow

// What the samples are and how to reach them.
struct Source {
  std::uint64_t pixels = 0;
  int width = 0;
  int channels = 0;   // colour channels available to the modes
  bool codes = true;  // integer binning
  int max_code = 255;
  int input = HIST_INPUT_U8;  // kernels/histogram.cl INPUT
  int stored_channels = 1;    // interleaved stride (8/16-bit input)
  int pitch = 0;              // planar layout (float input)
  std::size_t plane = 0;
  std::size_t origin = 0;  // floats from a plane's start to the first counted row
};

int mode_number(HistogramMode mode) {
  switch (mode) {
    case HistogramMode::luma:
      return HIST_MODE_LUMA;
    case HistogramMode::luma709:
      return HIST_MODE_LUMA709;
    case HistogramMode::rgb:
      return HIST_MODE_RGB;
    default:
      return HIST_MODE_CHANNEL;
  }
}

// Checks the mode against the image and sets up the result's shape.
Histogram prepare(const HistogramSpec& spec, const Source& src) {
  const bool three = spec.mode == HistogramMode::luma || spec.mode == HistogramMode::luma709 ||
                     spec.mode == HistogramMode::rgb;
  if (three && src.channels < 3)
    throw Error(ErrorKind::Usage, "histogram: mode=" + to_string(spec.mode) +
                                      " needs 3 colour channels, the image has " +
                                      std::to_string(src.channels) + " (use mode=gray)");
  if (spec.mode == HistogramMode::gray && src.channels != 1)
    throw Error(ErrorKind::Usage, "histogram: mode=gray needs one colour channel, the image has " +
                                      std::to_string(src.channels) +
                                      " (use mode=luma, or mode=channel:c=N)");
  if (spec.mode == HistogramMode::channel && spec.channel >= src.channels)
    throw Error(ErrorKind::Usage, "histogram: channel c=" + std::to_string(spec.channel) +
                                      " does not exist, the image has " +
                                      std::to_string(src.channels) + " colour channels");
  if (src.codes && !spec.auto_range)
    throw Error(ErrorKind::Usage,
                "histogram: range= applies to float data; 8/16-bit data is binned by code");
  Histogram h;
  h.mode = spec.mode;
  h.bins = spec.bins;
  h.hists = spec.mode == HistogramMode::rgb ? 3 : 1;
  h.codes = src.codes;
  h.max_code = src.max_code;
  h.lo = spec.lo;
  h.hi = spec.hi;
  h.counts.assign(std::size_t(h.hists) * h.bins, 0);
  return h;
}

int channel_of(const HistogramSpec& spec) {
  return spec.mode == HistogramMode::channel ? spec.channel : 0;
}

// The value histogrammed for pixel p and sub-histogram k, as the kernels compute it.
template <typename Get>
float float_value(const HistogramSpec& spec, Get get, std::uint64_t p, int k) {
  switch (spec.mode) {
    case HistogramMode::luma:
      return 0.299f * get(p, 0) + 0.587f * get(p, 1) + 0.114f * get(p, 2);
    case HistogramMode::luma709:
      return 0.2126f * get(p, 0) + 0.7152f * get(p, 1) + 0.0722f * get(p, 2);
    case HistogramMode::rgb:
      return get(p, k);
    default:
      return get(p, channel_of(spec));
  }
}

template <typename Code>
std::uint32_t code_value(const HistogramSpec& spec, Code code, std::uint64_t p, int k) {
  switch (spec.mode) {
    case HistogramMode::luma:
      return (299u * code(p, 0) + 587u * code(p, 1) + 114u * code(p, 2)) / 1000u;
    case HistogramMode::luma709:
      return (2126u * code(p, 0) + 7152u * code(p, 1) + 722u * code(p, 2)) / 10000u;
    case HistogramMode::rgb:
      return code(p, k);
    default:
      return code(p, channel_of(spec));
  }
}

float scale_of(const Histogram& h) {
  return float(h.bins) / (h.hi - h.lo);
}

// range=auto: lo and hi widened to the finite values float_value gives `pixels` pixels.
template <typename Get>
void widen_range(const HistogramSpec& spec, Get get, std::uint64_t pixels, float& lo, float& hi) {
  const int hists = spec.mode == HistogramMode::rgb ? 3 : 1;
  for (std::uint64_t p = 0; p < pixels; ++p)
    for (int k = 0; k < hists; ++k)
      if (const float x = float_value(spec, get, p, k); std::isfinite(x))
        lo = std::fmin(lo, x), hi = std::fmax(hi, x);
}

// range=auto, and a range that holds one value, become a usable [lo, hi].
void settle_range(Histogram& h, float lo, float hi) {
  if (!(lo <= hi)) lo = 0, hi = 1;  // no finite values at all
  if (hi == lo) hi = lo + 1;
  h.lo = lo, h.hi = hi;
}

template <typename Get, typename Code>
Histogram count_reference(const HistogramSpec& spec, const Source& src, Get get, Code code) {
  Histogram h = prepare(spec, src);
  h.method = "reference";
  if (h.codes) {
    for (std::uint64_t p = 0; p < src.pixels; ++p)
      for (int k = 0; k < h.hists; ++k) {
        const std::uint64_t v = code_value(spec, code, p, k);
        ++h.counts[k * h.bins + v * h.bins / (h.max_code + 1)];
      }
    return h;
  }
  if (spec.auto_range) {
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    widen_range(spec, get, src.pixels, lo, hi);
    settle_range(h, lo, hi);
  }
  const float scale = scale_of(h);
  for (std::uint64_t p = 0; p < src.pixels; ++p)
    for (int k = 0; k < h.hists; ++k) {
      const float x = float_value(spec, get, p, k);
      if (std::isnan(x))
        ++h.nan;
      else if (std::isinf(x))
        ++h.inf;
      else if (x < h.lo)
        ++h.under;
      else if (x > h.hi)
        ++h.over;
      else
        ++h.counts[k * h.bins + std::min(std::uint32_t(std::floor((x - h.lo) * scale)),
                                         std::uint32_t(h.bins - 1))];
    }
  return h;
}

Source source_of(const PixelBuffer& pixels) {
  Source s;
  s.pixels = std::uint64_t(pixels.width) * pixels.height;
  s.width = pixels.width;
  s.channels = pixels.channels - (pixels.alpha ? 1 : 0);
  s.codes = pixels.type != PixelType::f32;
  s.max_code = pixels.type == PixelType::u16 ? 65535 : 255;
  s.input = pixels.type == PixelType::u8    ? HIST_INPUT_U8
            : pixels.type == PixelType::u16 ? HIST_INPUT_U16
                                            : HIST_INPUT_FLOAT;
  s.stored_channels = pixels.channels;
  return s;
}

// The rows `rows` of a planar image holding `held` rows from image row y0.
Source source_of(int width, int channels, bool alpha, int pitch, PixelType origin, int y0, int held,
                 Span rows) {
  Source s;
  s.pixels = std::uint64_t(width) * rows.count();
  s.width = width;
  s.channels = channels - (alpha ? 1 : 0);
  s.codes = origin != PixelType::f32;
  s.max_code = origin == PixelType::u16 ? 65535 : 255;
  s.input = HIST_INPUT_FLOAT;
  s.pitch = pitch;
  s.plane = std::size_t(pitch) * held;
  s.origin = std::size_t(rows.first - y0) * pitch;
  return s;
}

Source source_of(const DeviceImage& image, Span rows) {
  return source_of(image.width, image.channels, image.alpha, image.pitch, image.source, image.y0,
                   image.height, rows);
}

std::string method_for(const HistogramSpec& spec, int counters, const DeviceInfo& info) {
  const std::uint64_t budget = info.local_budget();
  if (spec.method != "auto") {
    if (spec.method == "private" && 4ull * counters > budget)
      throw Error(ErrorKind::Usage, "histogram: method=private needs " +
                                        std::to_string(4 * counters) +
                                        " bytes of local memory per work-item row");
    if (spec.method == "local" && 4ull * counters > budget)
      throw Error(ErrorKind::Usage,
                  "histogram: method=local needs more local memory than the "
                  "device has for " +
                      std::to_string(counters) + " counters");
    return spec.method;
  }
  return 4ull * counters <= budget ? "local" : "global";
}

// More pixels per work-item amortise each group's clearing and merging; the H200 measured
// best at 128-256 on an 8K frame, but a smaller image then leaves compute units idle. So:
// the most (a power of two, 16..256) that still gives 512 work-items per compute unit (two
// groups of 256; one of 512; half a group of 1024, whose units then hold other groups too).
int pixels_per_item_for(std::uint64_t pixels, const DeviceInfo& device) {
  int ppi = 256;
  while (ppi > 16 && pixels / ppi < 512ull * device.compute_units) ppi /= 2;
  return ppi;
}

// Non-null events only: a wait list may not hold empty ones.
std::vector<cl::Event> events(std::initializer_list<cl::Event> list) {
  std::vector<cl::Event> out;
  for (const auto& e : list)
    if (e()) out.push_back(e);
  return out;
}

double span_ms(const cl::Event& from, const cl::Event& to) {
  cl_ulong start = 0, end = 0;
  check(from.getProfilingInfo(CL_PROFILING_COMMAND_START, &start), "clGetEventProfilingInfo");
  check(to.getProfilingInfo(CL_PROFILING_COMMAND_END, &end), "clGetEventProfilingInfo");
  return double(end - start) * 1e-6;
}

// The kernels' shape for one counting: strategy, work-group, sub-histograms, pixels per
// work-item, and the defines that carry them.
struct CountPlan {
  int group = 256, subhists = 1, ppi = 16;
  bool totals64 = false;  // local sub-histograms merge straight into the 64-bit totals
  Defines defines;
};

CountPlan plan_count(Device& device, const HistogramSpec& spec, const Source& src, Histogram& h) {
  const int counters = h.hists * h.bins + 4;
  h.method = method_for(spec, counters, device.info());
  const std::uint64_t budget = device.info().local_budget();
  const Tuning& tuning = device.tuning();
  CountPlan p;
  if (h.method == "private")
    for (p.group = 32; p.group > 1 && 4ull * p.group * counters > budget;) p.group /= 2;
  if (h.method == "local") {
    p.group = int(std::min<std::size_t>(tuning.hist_group, device.info().max_work_group));
    for (p.subhists = tuning.hist_subhists;
         p.subhists > 1 && 4ull * p.subhists * counters > budget;)
      p.subhists /= 2;
  }
  // Without 64-bit atomics (or with private counters) the kernels write 32-bit partials that
  // histogram_reduce adds into the totals.
  p.totals64 = h.method == "local" && device.info().int64_atomics;
  p.ppi =
      spec.pixels_per_item ? spec.pixels_per_item : pixels_per_item_for(src.pixels, device.info());
  h.pixels_per_item = p.ppi;
  p.defines = {{"INPUT", std::to_string(src.input)},
               {"CHANNELS", std::to_string(src.stored_channels)},
               {"MODE", std::to_string(mode_number(spec.mode))},
               {"CHANNEL", std::to_string(channel_of(spec))},
               {"BINS", std::to_string(h.bins)},
               {"CODES", src.codes ? "1" : "0"},
               {"MAX_CODE", std::to_string(src.max_code)},
               {"WHOLE_BLOCKS", p.ppi % HIST_BLOCK == 0 ? "1" : "0"},
               knob_define(&Tuning::hist_group, p.group),
               knob_define(&Tuning::hist_subhists, p.subhists),
               {"TOTALS64", p.totals64 ? "1" : "0"},
               knob_define(tuning, &Tuning::hist_in_flight),
               {"METHOD", std::to_string(h.method == "global"  ? HIST_METHOD_GLOBAL
                                         : h.method == "local" ? HIST_METHOD_LOCAL
                                                               : HIST_METHOD_PRIVATE)}};
  return p;
}

// range=auto on float data: the finite min and max, folded on the host from per-group pairs.
void settle_auto_range(Device& device, const cl::Buffer& samples, const Source& src,
                       const CountPlan& plan, Histogram& h, const cl::Event& uploaded) {
  auto minmax = device.kernel("histogram.cl", "histogram_minmax", plan.defines);
  const std::size_t groups = 256;
  cl::Buffer pairs = device.buffer(groups * 2 * sizeof(float), "histogram range");
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (int k = 0; k < h.hists; ++k) {
    set_args(minmax, samples, pairs, cl_ulong(src.pixels), k, cl_ulong(src.width),
             cl_ulong(src.pitch), cl_ulong(src.plane), cl_ulong(src.origin));
    const cl::Event ranged =
        device.launch(minmax, "histogram_minmax", cl::NDRange(groups * plan.group),
                      cl::NDRange(plan.group), src.pixels * sizeof(float), events({uploaded}));
    std::vector<float> found(groups * 2);
    device.read(pairs, found.data(), found.size() * sizeof(float), "histogram range",
                events({ranged}));
    for (std::size_t g = 0; g < groups; ++g)
      lo = std::fmin(lo, found[2 * g]), hi = std::fmax(hi, found[2 * g + 1]);
  }
  settle_range(h, lo, hi);
}

// The first and last command of one counting: the totals hold the counts after `last`.
struct Counted {
  cl::Event first, last;
  // Device time from the first count to the last reduce; once both have completed.
  double ms() const { return first() ? span_ms(first, last) : 0.0; }
};

// Counts src's pixels into `totals` on the out-of-order queue (upload -> count -> reduce,
// ordered by events alone). h: the shape from prepare(), whose method, pixels per work-item
// and (range=auto) range this settles.
Counted count_into(Device& device, const cl::Buffer& samples, const HistogramSpec& spec,
                   const Source& src, Histogram& h, cl::Buffer& totals, const cl::Event& zeroed,
                   const cl::Event& uploaded) {
  const CountPlan plan = plan_count(device, spec, src, h);
  const int counters = h.hists * h.bins + 4;
  if (!h.codes && spec.auto_range) settle_auto_range(device, samples, src, plan, h, uploaded);
  const float scale = h.codes ? 1.0f : scale_of(h);
  auto count = device.kernel("histogram.cl", "histogram_" + h.method, plan.defines);
  cl::Kernel reduce;  // compiled only where the counting writes partials
  if (!plan.totals64) reduce = device.kernel("histogram.cl", "histogram_reduce", plan.defines);
  const std::uint64_t per_group = std::uint64_t(plan.group) * plan.ppi;
  const std::uint64_t max_groups = (std::min(kChunk, src.pixels) + per_group - 1) / per_group;
  const std::size_t rows = plan.totals64 ? 0 : h.method == "private" ? max_groups : 1;
  // What the count kernel writes: 32-bit partials, or the totals themselves.
  cl::Buffer partials =
      rows ? device.buffer(rows * counters * sizeof(cl_uint), "histogram partials") : totals;
  const std::size_t sample_bytes = src.input == HIST_INPUT_U8    ? 1
                                   : src.input == HIST_INPUT_U16 ? 2
                                                                 : 4;
  cl::Event first_count, last;  // the totals are complete after `last`
  for (std::uint64_t first = 0; first < src.pixels; first += kChunk) {
    const std::uint64_t n = std::min(kChunk, src.pixels - first);
    const std::uint64_t groups = (n + per_group - 1) / per_group;
    // The partials are reused per chunk: cleared once the previous reduce has read them.
    cl::Event cleared;
    if (rows == 1)
      cleared = device.fill_zero(partials, counters * sizeof(cl_uint), "histogram partials",
                                 events({last}));
    set_args(count, samples, partials, cl_ulong(first), cl_ulong(n), h.lo, h.hi, scale,
             cl_ulong(src.width), cl_ulong(src.pitch), cl_ulong(src.plane), cl_ulong(src.origin),
             cl_int(plan.ppi));
    const cl::Event counted = device.launch(
        count, "histogram_" + h.method, cl::NDRange(groups * plan.group), cl::NDRange(plan.group),
        n * sample_bytes * (src.input == HIST_INPUT_FLOAT ? h.hists : src.stored_channels),
        events({uploaded, cleared, zeroed, last}));
    if (!first_count()) first_count = counted;
    last = counted;
    if (plan.totals64) continue;
    set_args(reduce, partials, totals, cl_uint(rows == 1 ? 1 : groups));
    last = device.launch(reduce, "histogram_reduce", cl::NDRange(counters), groups::row, 0,
                         events({counted, zeroed}));
  }
  return {first_count, last};
}

// The totals' counters into h's counts and apart counters.
void fill_counts(Histogram& h, const std::vector<std::uint64_t>& result) {
  const std::size_t counters = result.size();
  std::copy(result.begin(), result.end() - 4, h.counts.begin());
  h.under = result[counters - 4], h.over = result[counters - 3];
  h.nan = result[counters - 2], h.inf = result[counters - 1];
}

// A whole histogram on the out-of-order queue: upload (when `pixels` is given), count, read.
Histogram count_device(Device& device, const cl::Buffer& samples, const HistogramSpec& spec,
                       const Source& src, HistogramTotals* given,
                       const PixelBuffer* pixels = nullptr) {
  Histogram h = prepare(spec, src);
  HistogramTotals fresh;
  HistogramTotals& totals = given ? *given : fresh;
  Device::OutOfOrder out_of_order(device);
  cl::Event uploaded;
  if (pixels)
    uploaded = device.write(const_cast<cl::Buffer&>(samples), pixels->bytes.data(),
                            pixels->bytes.size(), "upload");
  cl::Event zeroed;
  cl::Buffer& buffer = totals.prepare(device, h.hists * h.bins + 4, zeroed);
  const Counted counted = count_into(device, samples, spec, src, h, buffer, zeroed, uploaded);
  totals.added(counted.last);
  fill_counts(h, totals.take(device));
  h.count_to_reduce_ms = counted.ms();
  spdlog::debug("histogram: {} queue, count to reduce {:.3f} ms",
                device.has_out_of_order() ? "out-of-order" : "in-order", h.count_to_reduce_ms);
  return h;
}

// A run's counts so far (complete after finish), and their running totals on the device.
struct HistogramState : StageState {
  std::unique_ptr<Histogram> histogram;
  std::unique_ptr<HistogramTotals> totals;

  void merge(StageState& other) override {
    auto& b = static_cast<HistogramState&>(other);
    if (!histogram) {
      histogram = std::move(b.histogram);
    } else if (b.histogram) {
      add_counts(*histogram, *b.histogram);
      histogram->count_to_reduce_ms += b.histogram->count_to_reduce_ms;
    }
  }
  void finish(Device& device) override {
    if (!totals) return;
    Device::OutOfOrder out_of_order(device);
    fill_counts(*histogram, totals->take(device));
    totals.reset();
  }
  std::string mismatch(const StageState& reference) const override {
    const auto& r = static_cast<const HistogramState&>(reference);
    return histogram && r.histogram && !histogram->same_counts(*r.histogram)
               ? "histogram differs from the reference"
               : "";
  }
  std::vector<SideOutput> side_outputs() const override {
    if (!histogram) return {};
    return {{.name = "histogram", .histogram = histogram.get()}};
  }
};

// range=auto on float data, streamed: the finite min and max of what is counted, over the
// whole input read through once before the first strip (ScansInput), with the reference's
// own arithmetic (float_value), so that every strip bins into the same range.
class RangeScan : public InputScan {
 public:
  explicit RangeScan(const HistogramSpec& spec) : spec_(spec) {}

  void add(const Image& rows) override {
    for (int y = 0; y < rows.height(); ++y) {
      const auto get = [&](std::uint64_t x, int c) { return rows.row(c, y)[x]; };
      widen_range(spec_, get, std::uint64_t(rows.width()), lo_, hi_);
    }
  }

  // The spec with the range found, settled as range=auto settles a whole image's.
  HistogramSpec fixed() const {
    Histogram settled;
    settle_range(settled, lo_, hi_);
    HistogramSpec spec = spec_;
    spec.auto_range = false;
    spec.lo = settled.lo, spec.hi = settled.hi;
    return spec;
  }

 private:
  HistogramSpec spec_;
  float lo_ = std::numeric_limits<float>::infinity(), hi_ = -lo_;
};

// The pipeline stage: counts each strip's own rows (StageRun::own, never the overlap), so the
// strips of one run add up to the whole image's histogram; the image passes through.
class HistogramStage : public Stage, public ScansInput {
 public:
  HistogramStage(std::string spec, HistogramSpec hist) : Stage(std::move(spec)), hist_(hist) {}

  StageTraits traits() const override { return {.measures = true}; }
  // range=auto on float data streams after a scan of the input for its range (Pipeline's
  // whole_image_reason keeps a histogram after other stages whole: they make its input).
  std::shared_ptr<InputScan> scan(int, int, PixelType source) const override {
    if (source != PixelType::f32 || !hist_.auto_range) return nullptr;
    return std::make_shared<RangeScan>(hist_);
  }

  Image reference_rows(const Image& in, Span, StageRun& run) const override {
    auto& state = run.state_as<HistogramState>();
    const Histogram part = histogram_reference(in, spec_for(run), run.own);
    if (state.histogram)
      add_counts(*state.histogram, part);
    else
      state.histogram = std::make_unique<Histogram>(part);
    return in;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span,
                           StageRun& run) const override {
    auto& state = run.state_as<HistogramState>();
    const Source src = source_of(in, run.own);
    Counted counted;
    {
      Device::OutOfOrder out_of_order(device);  // finishes its queue when it goes
      cl::Event zeroed;  // the first strip's: later strips come after it has finished
      if (!state.histogram) {
        state.histogram = std::make_unique<Histogram>(prepare(spec_for(run), src));
        state.totals = std::make_unique<HistogramTotals>();
        state.totals->prepare(device, state.histogram->hists * state.histogram->bins + 4, zeroed);
      }
      counted = count_into(device, in.buffer, spec_for(run), src, *state.histogram,
                           state.totals->buffer(), zeroed, {});
      state.totals->added(counted.last);
    }
    state.histogram->count_to_reduce_ms += counted.ms();
    return in;
  }

 private:
  // The range the input's scan found, when there was one (streamed range=auto); else the spec
  // as given (a whole image settles range=auto itself).
  HistogramSpec spec_for(const StageRun& run) const {
    const auto* scan = dynamic_cast<const RangeScan*>(run.scan.get());
    return scan ? scan->fixed() : hist_;
  }

  HistogramSpec hist_;
};

}  // namespace

std::string to_string(HistogramMode mode) {
  switch (mode) {
    case HistogramMode::gray:
      return "gray";
    case HistogramMode::channel:
      return "channel";
    case HistogramMode::luma:
      return "luma";
    case HistogramMode::luma709:
      return "luma709";
    case HistogramMode::rgb:
      return "rgb";
  }
  return "?";
}

HistogramSpec HistogramSpec::from(const Args& args) {
  HistogramSpec s;
  s.mode = args.choice<HistogramMode>("mode", {{"luma", HistogramMode::luma},
                                               {"luma709", HistogramMode::luma709},
                                               {"gray", HistogramMode::gray},
                                               {"channel", HistogramMode::channel},
                                               {"rgb", HistogramMode::rgb}});
  s.channel = args.integer("c");
  if (args.given("c") && s.mode != HistogramMode::channel) args.fail("c", "only with mode=channel");
  s.bins = args.integer("bins");
  s.method = args.text("method");
  s.pixels_per_item = args.is_auto("ppi") ? 0 : args.integer("ppi");
  if (args.text("range") != "auto") {
    const auto range = args.numbers("range");
    if (range.size() != 2 || !(range[0] < range[1]))
      args.fail("range", "expected lo,hi with lo < hi, or auto");
    s.auto_range = false;
    s.lo = float(range[0]), s.hi = float(range[1]);
    // Bins are computed in float: the ends must be floats, and distinct ones.
    if (!std::isfinite(s.lo) || !std::isfinite(s.hi) || !(s.lo < s.hi) ||
        !std::isfinite(s.hi - s.lo))
      args.fail("range",
                "lo,hi must be finite floats (|x| < 3.4e38) with lo < hi as floats "
                "and hi - lo finite");
  }
  return s;
}

std::uint64_t Histogram::binned() const {
  std::uint64_t total = 0;
  for (auto c : counts) total += c;
  return total;
}

bool Histogram::same_counts(const Histogram& o) const {
  return counts == o.counts && under == o.under && over == o.over && nan == o.nan && inf == o.inf &&
         lo == o.lo && hi == o.hi;
}

Histogram histogram_reference(const PixelBuffer& pixels, const HistogramSpec& spec) {
  const Source src = source_of(pixels);
  const int stride = pixels.channels;
  switch (pixels.type) {
    case PixelType::u8: {
      const auto* s = pixels.samples<std::uint8_t>();
      auto code = [&](std::uint64_t p, int c) { return std::uint32_t(s[p * stride + c]); };
      return count_reference(
          spec, src, [](std::uint64_t, int) { return 0.0f; }, code);
    }
    case PixelType::u16: {
      const auto* s = pixels.samples<std::uint16_t>();
      auto code = [&](std::uint64_t p, int c) { return std::uint32_t(s[p * stride + c]); };
      return count_reference(
          spec, src, [](std::uint64_t, int) { return 0.0f; }, code);
    }
    case PixelType::f32:
      break;
  }
  return histogram_reference(to_image(pixels), spec);
}

Histogram histogram_reference(const Image& image, const HistogramSpec& spec) {
  return histogram_reference(image, spec, image.span());
}

Histogram histogram_reference(const Image& image, const HistogramSpec& spec, Span rows) {
  const Source src = source_of(image.width(), image.channels(), image.alpha(), image.pitch(),
                               image.source(), image.y0(), image.height(), rows);
  const int w = image.width(), row0 = rows.first - image.y0();
  auto get = [&](std::uint64_t p, int c) { return image.at(int(p % w), row0 + int(p / w), c); };
  auto code = [&](std::uint64_t p, int c) {
    return std::uint32_t(quantize(get(p, c), float(src.max_code)));
  };
  return count_reference(spec, src, get, code);
}

Histogram histogram_device(Device& device, const PixelBuffer& pixels, const HistogramSpec& spec,
                           HistogramTotals* totals) {
  if (pixels.type == PixelType::f32) {  // counted as planes, as the pipeline stage's input
    const Image planes = to_image(pixels);
    DeviceImage image = device.image(pixels.width, pixels.height, pixels.channels, pixels.alpha);
    device.write(image.buffer, planes.data().data(), image.bytes(), "upload");
    return histogram_device(device, image, spec, totals);
  }
  const cl::Buffer samples = device.buffer(pixels.bytes.size(), "histogram input");
  return count_device(device, samples, spec, source_of(pixels), totals, &pixels);
}

Histogram histogram_device(Device& device, const DeviceImage& image, const HistogramSpec& spec,
                           HistogramTotals* totals) {
  return count_device(device, image.buffer, spec, source_of(image, image.span()), totals);
}

void add_counts(Histogram& sum, const Histogram& part) {
  if (sum.counts.size() != part.counts.size() || sum.lo != part.lo || sum.hi != part.hi)
    throw Error(ErrorKind::Internal, "histograms of different shapes cannot be added");
  for (std::size_t i = 0; i < sum.counts.size(); ++i) sum.counts[i] += part.counts[i];
  sum.under += part.under, sum.over += part.over, sum.nan += part.nan, sum.inf += part.inf;
}

cl::Buffer& HistogramTotals::prepare(Device& device, int counters, cl::Event& ready) {
  const std::size_t bytes = std::size_t(counters) * sizeof(cl_ulong);
  if (record_.size() != std::size_t(counters)) {
    buffer_ = device.buffer(bytes, "histogram totals");
    valid_ = false;
  }
  if (!valid_) {
    ready = device.fill_zero(buffer_, bytes, "histogram totals");
    record_.assign(counters, 0);
  }
  valid_ = false;  // until take() has read the totals back
  return buffer_;
}

std::vector<std::uint64_t> HistogramTotals::take(Device& device) {
  std::vector<cl_ulong> now(record_.size());
  std::vector<cl::Event> after;
  if (last_()) after.push_back(last_);
  device.read(buffer_, now.data(), now.size() * sizeof(cl_ulong), "histogram totals", after);
  std::vector<std::uint64_t> added(now.size());
  for (std::size_t i = 0; i < now.size(); ++i) added[i] = now[i] - record_[i];
  record_.assign(now.begin(), now.end());
  valid_ = true;
  return added;
}

FilterDef histogram_filter() {
  return {
      .name = "histogram",
      .summary = "exact histogram, reported; the image passes through unchanged",
      .params = {{.name = "mode",
                  .type = ParamType::Choice,
                  .fallback = "luma",
                  .doc = "luma (Rec.601: integer (299R+587G+114B)/1000 on 8/16-bit codes), "
                         "luma709, rgb (3 x bins), gray (one-channel images), channel (with c=)",
                  .choices = {"luma", "luma709", "rgb", "gray", "channel"}},
                 {.name = "c",
                  .type = ParamType::Integer,
                  .fallback = "0",
                  .doc = "channel for mode=channel",
                  .min = 0,
                  .max = 63},
                 {.name = "bins",
                  .type = ParamType::Integer,
                  .fallback = "256",
                  .doc = "number of bins",
                  .min = 1,
                  .max = 65536},
                 {.name = "range",
                  .type = ParamType::Numbers,
                  .fallback = "auto",
                  .doc = "lo,hi for float data (auto: finite min and max); outside, NaN and Inf "
                         "are counted apart",
                  .allow_auto = true},
                 {.name = "method",
                  .type = ParamType::Choice,
                  .fallback = "auto",
                  .doc = "device strategy: global atomics, local sub-histograms, private "
                         "per-work-item counters",
                  .choices = {"auto", "global", "local", "private"}},
                 {.name = "ppi",
                  .type = ParamType::Integer,
                  .fallback = "auto",
                  .doc = "pixels per work-item (auto: as many as keep two work-groups per "
                         "compute unit, 16..256)",
                  .min = 1,
                  .max = 4096,
                  .allow_auto = true},
                 border_param()},
      .notes = {"8/16-bit data: code v goes to bin v*bins/(max+1); a grey pixel R=G=B=v is in "
                "luma bin v at 256 bins",
                "float data: bin floor((x-lo)*(bins/(hi-lo))), x == hi in the last bin",
                "counts are 64-bit and equal the reference's bin for bin"},
      .example = "histogram:mode=luma:bins=256",
      .make = [](const Args& args) -> std::unique_ptr<Stage> {
        return std::make_unique<HistogramStage>(args.spec_text(), HistogramSpec::from(args));
      },
      .mixes_neighbours = false};
}

}  // namespace halo
