// The streaming executor: a reader thread, the device (or reference) work in the caller's
// thread, a writer thread, and bounded queues of strips between them.
#include "pipeline/stream.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "core/block_pool.hpp"
#include "core/concurrency.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"
#include "pipeline/transfer.hpp"

namespace halo {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct OutputStrip {
  Span rows;
  PixelBuffer pixels;
};

// A strip's buffers for the rows `rows`, guides shaped as the source holds them; the samples'
// block has room for `room_rows` rows (at least rows.count()).
HostStrip make_strip(const StreamInput& in, Span rows, std::pmr::memory_resource* memory,
                     int room_rows = 0) {
  HostStrip strip;
  strip.rows = rows;
  strip.pixels = PixelBuffer::uninitialized(in.width, std::max(rows.count(), room_rows),
                                            in.channels, in.type, in.alpha, memory);
  strip.pixels.height = rows.count();
  strip.pixels.bytes.resize(strip.pixels.sample_count() * sample_size(in.type));  // keeps room
  for (const auto& shape : in.guide_shapes) {
    Guides g;
    g.described = shape.described;
    const auto make = [&](int channels) {
      return channels ? Image(in.width, rows, in.height, channels) : Image();
    };
    g.normal = make(shape.normal);
    g.depth = make(shape.depth);
    g.albedo = make(shape.albedo);
    g.motion = make(shape.motion);
    strip.guides.push_back(std::move(g));
  }
  return strip;
}

// Reads strips in order: each strip's rows that the previous one also held are copied from
// it (shared with the lane that has it, and let go of once copied), the rest come from the
// input.
class StripReader {
 public:
  StripReader(const StreamInput& input, const StripPlan& plan, std::pmr::memory_resource* memory)
      : input_(input), plan_(plan), memory_(memory) {}

  std::shared_ptr<const HostStrip> read(int k) {
    const Span rows = plan_.input(k);
    // The first strip reads fewer rows than the next (no rows above it): made as large as
    // they are, its block serves them later instead of idling in the pool (0.7 MiB, 5K RGB).
    const int room = k == 0 && plan_.strips() > 1 ? plan_.input(1).count() : 0;
    auto strip = std::make_shared<HostStrip>(make_strip(input_, rows, memory_, room));
    int next = rows.first;
    if (previous_) {
      const Span overlap{rows.first, std::min(rows.last, previous_->rows.last)};
      if (!overlap.empty()) copy_rows(*previous_, *strip, overlap);
      next = std::max(next, previous_->rows.last);
      previous_.reset();
    }
    skip_to(next);
    if (next < rows.last) input_.read(*strip, {next, rows.last});
    delivered_ = std::max(delivered_, rows.last);
    // Kept only when the next strip shares rows with it (StripPlan's carried form rarely does).
    if (k + 1 < plan_.strips() && plan_.input(k + 1).first < rows.last) previous_ = strip;
    return strip;
  }

 private:
  // The source delivers its rows in order from the first: rows no strip reads (above a crop's
  // window) are read and dropped, a few at a time.
  void skip_to(int row) {
    while (delivered_ < row) {
      const Span rows{delivered_, std::min(row, delivered_ + 64)};
      HostStrip dropped = make_strip(input_, rows, memory_);
      input_.read(dropped, rows);
      delivered_ = rows.last;
    }
  }

  const StreamInput& input_;
  const StripPlan& plan_;
  std::pmr::memory_resource* memory_;
  std::shared_ptr<const HostStrip> previous_;
  int delivered_ = 0;  // rows the source has delivered
};

// Device times summed over strips, by stage and label, in the order they first appear.
void add_timings(std::vector<Device::Timing>& total, const std::vector<Device::Timing>& part) {
  for (const auto& t : part) {
    auto it = std::find_if(total.begin(), total.end(), [&](const Device::Timing& s) {
      return s.stage == t.stage && s.label == t.label;
    });
    if (it == total.end()) {
      total.push_back(t);
    } else {
      it->ms += t.ms;
      it->bytes += t.bytes;
    }
  }
}

// The checks of one run, one per stage plus decode and encode, filled strip by strip.
class Checks {
 public:
  explicit Checks(const Pipeline& pipeline) {
    checks_.push_back({"decode", {}, ""});
    for (const auto& stage : pipeline.stages()) checks_.push_back({stage->spec(), {}, ""});
    checks_.push_back({"encode", {}, ""});
  }

  // Check i against the strip's own rows; the rest of the computed rows (the overlap with the
  // neighbours, which they count) must match too, but add to the figures only on failure.
  void add_rows(std::size_t i, const Image& got, const Image& expected, double tolerance, Span own,
                Span computed) {
    checks_[i].tolerance = tolerance;
    add(checks_[i].result, compare(got, expected, tolerance, own));
    for (const Span halo : {Span{computed.first, own.first}, Span{own.last, computed.last}}) {
      if (halo.empty()) continue;
      const Comparison c = compare(got, expected, tolerance, halo);
      if (!c.ok()) {
        Comparison& total = checks_[i].result;
        total.failures += c.failures;
        if (c.max_error > total.max_error) {
          total.max_error = c.max_error;
          total.worst_x = c.worst_x, total.worst_y = c.worst_y, total.worst_c = c.worst_c;
          total.worst_actual = c.worst_actual, total.worst_expected = c.worst_expected;
        }
      }
    }
  }

  void problem(std::size_t i, std::string text) {
    if (checks_[i].problem.empty()) checks_[i].problem = std::move(text);
  }
  std::vector<StageCheck> take() { return std::move(checks_); }

  // Another lane's checks of the same stages, on other strips.
  static void merge(std::vector<StageCheck>& into, std::vector<StageCheck> other) {
    if (into.empty()) {
      into = std::move(other);
      return;
    }
    for (std::size_t i = 0; i < other.size(); ++i) {
      add(into[i].result, other[i].result);
      into[i].tolerance = std::max(into[i].tolerance, other[i].tolerance);
      if (into[i].problem.empty()) into[i].problem = std::move(other[i].problem);
    }
  }

 private:
  std::vector<StageCheck> checks_;
};

// What each stage's scan (ScansInput) found, by stage; empty when none scans.
using Scans = std::vector<std::shared_ptr<const InputScan>>;

// The first stage's scan, when it has one (Pipeline::whole_image_reason keeps the others from
// streaming: they see the whole image and measure it themselves).
std::shared_ptr<InputScan> first_scan(const Pipeline& pipeline, int width, int height,
                                      PixelType type) {
  if (pipeline.stages().empty()) return nullptr;
  const ScansInput* scans = facet<ScansInput>(*pipeline.stages()[0]);
  return scans ? scans->scan(width, height, type) : nullptr;
}

// A strip's rows into a scan, a few at a time (no float copy of the whole strip).
void scan_rows(InputScan& scan, const HostStrip& strip, int height) {
  const PixelBuffer& p = strip.pixels;
  const std::size_t row_bytes = p.bytes.size() / std::max(p.height, 1);
  for (int y = 0; y < p.height; y += 64) {
    const int n = std::min(64, p.height - y);
    PixelBuffer part = PixelBuffer::uninitialized(p.width, n, p.channels, p.type, p.alpha);
    std::memcpy(part.bytes.data(), p.bytes.data() + y * row_bytes, n * row_bytes);
    const int first = strip.rows.first + y;
    scan.add(to_image(part, {first, first + n}, height));
  }
}

// The scan before the first strip, when the image comes in more than one: the input read
// through once in strips of the plan's height, then started over. With one strip, the lane scans
// it as it arrives (scan_single).
Scans scan_input(const Pipeline& pipeline, const StreamInput& input, const StripPlan& plan,
                 std::pmr::memory_resource* memory) {
  const std::shared_ptr<InputScan> scan =
      first_scan(pipeline, input.width, input.height, input.type);
  if (!scan || plan.strips() < 2) return {};
  if (!input.rewind)
    throw Error(ErrorKind::Internal, "'" + pipeline.stages()[0]->spec() +
                                         "' measures its whole input, which cannot be read twice");
  const int rows = std::max(1, plan.input(0).count());
  for (int y = 0; y < input.height; y += rows) {
    const Span span{y, std::min(input.height, y + rows)};
    HostStrip strip = make_strip(input, span, memory);
    input.read(strip, span);
    scan_rows(*scan, strip, input.height);
  }
  input.rewind();
  return {scan};
}

// The scan of an image that comes in one strip: `strip` itself, before the first stage runs
// (the same sums as scan_input's, so one strip and many give the same result).
std::shared_ptr<const InputScan> scan_single(const Pipeline& pipeline, const StripPlan& plan,
                                             const HostStrip& strip) {
  if (plan.strips() != 1) return nullptr;
  const std::shared_ptr<InputScan> scan =
      first_scan(pipeline, strip.pixels.width, plan.input_height(), strip.pixels.type);
  if (scan) scan_rows(*scan, strip, plan.input_height());
  return scan;
}

// One strip on the device: upload, the stages, download; with verification, each stage's
// device input read back and its reference run on the same rows.
class DeviceLane {
 public:
  DeviceLane(Device& device, const Pipeline& pipeline, const StripPlan& plan, PixelType type,
             const StreamOptions& options, const Scans& scans)
      : device_(device),
        recycling_(device),
        pipeline_(pipeline),
        plan_(plan),
        type_(type),
        options_(options),
        runs_(pipeline.stages().size()),
        reference_runs_(pipeline.stages().size()),
        checks_(pipeline) {
    for (auto& run : runs_) run.keep_flags = options.keep_flags || options.verify;
    for (auto& run : reference_runs_) run.keep_flags = true;
    for (std::size_t i = 0; i < scans.size(); ++i)
      runs_[i].scan = reference_runs_[i].scan = scans[i];
  }

  OutputStrip run(int k, const HostStrip& strip) {
    const Span own = plan_.output(k);
    if (auto scan = scan_single(pipeline_, plan_, strip))
      runs_[0].scan = reference_runs_[0].scan = scan;
    const Span own_input = plan_.own_rows(k, -1);
    DeviceImage current = upload_strip(strip);
    std::vector<DeviceGuides> guides;
    for (const auto& g : strip.guides) guides.push_back(upload_guides(device_, &g));
    Image seen;  // with verification: the device's input to the next stage, read back
    if (options_.verify) {
      device_.set_stage("verify");
      seen = download_image(device_, current);
      checks_.add_rows(0, seen, to_image(strip.pixels, strip.rows, plan_.input_height()), 0.0,
                       own_input, own_input);
    }
    const auto& stages = pipeline_.stages();
    for (std::size_t i = 0; i < stages.size(); ++i) {
      const Span rows = plan_.stage_rows(k, i);
      const Span stage_own = plan_.own_rows(k, int(i));
      const int set = pipeline_.guide_set(i);
      for (StageRun* run : {&runs_[i], &reference_runs_[i]}) {
        run->own = stage_own;
        run->strip_rows = plan_.full_stage_rows(i);
        run->guides = set >= 0 ? &strip.guides[set] : nullptr;
        run->device_guides = set >= 0 ? &guides[set] : nullptr;
      }
      device_.set_stage(stages[i]->spec());
      current.scratch = true;  // dropped below: the stage may put its result there
      current = stages[i]->enqueue_rows(device_, current, rows, runs_[i]);
      if (options_.verify) {
        device_.set_stage("verify");
        Image got = download_image(device_, current);
        const Image expected = stages[i]->reference_rows(seen, rows, reference_runs_[i]);
        checks_.add_rows(i + 1, got, expected,
                         verify_tolerance(*stages[i], device_, options_.tolerance), stage_own,
                         rows);
        seen = std::move(got);
      }
    }
    OutputStrip out{own, options_.measure_only ? PixelBuffer() : download_strip(current, own)};
    if (options_.verify && !options_.measure_only) {
      checks_.add_rows(stages.size() + 1, to_image(out.pixels, own, plan_.height()),
                       to_image(to_pixels(seen, type_, own), own, plan_.height()), 0.0, own, own);
    }
    add_timings(timings_, device_.take_timings());  // waits: the strip's buffers are free
    recycling_.next_strip();
    return out;
  }

  // After the last strip: results kept on the device, and side results against the reference.
  void finish(StreamResult& result) {
    const auto& stages = pipeline_.stages();
    for (std::size_t i = 0; i < stages.size(); ++i) {
      device_.set_stage(stages[i]->spec());
      runs_[i].finish(device_);
      if (options_.verify)
        checks_.problem(i + 1, side_results_mismatch(runs_[i], reference_runs_[i]));
    }
    add_timings(timings_, device_.take_timings());
    result.timings = std::move(timings_);
    result.runs = std::move(runs_);
    if (options_.verify) result.checks = checks_.take();
  }
  void finish_early() { device_.finish(); }  // another thread failed: nothing left queued

 private:
  DeviceImage upload_strip(const HostStrip& strip) {
    device_.set_stage("upload");
    DeviceImage image = device_.image(strip.pixels.width, strip.pixels.height,
                                      strip.pixels.channels, strip.pixels.alpha);
    image.y0 = strip.rows.first;
    image.full_height = plan_.input_height();
    image.source = strip.pixels.type;
    fill_planar(device_, strip.pixels, image, staging_in_);
    return image;
  }

  PixelBuffer download_strip(const DeviceImage& image, Span rows) {
    device_.set_stage("download");
    PixelBuffer pixels = PixelBuffer::uninitialized(image.width, rows.count(), image.channels,
                                                    type_, image.alpha, options_.host_memory);
    read_planar(device_, image, rows, pixels, staging_out_);
    return pixels;
  }

  Device& device_;
  Device::Recycling recycling_;
  const Pipeline& pipeline_;
  const StripPlan& plan_;
  const PixelType type_;
  const StreamOptions& options_;
  std::vector<StageRun> runs_, reference_runs_;
  Checks checks_;
  std::vector<Device::Timing> timings_;
  Staging staging_in_, staging_out_;
};

// One strip on the reference.
class ReferenceLane {
 public:
  ReferenceLane(const Pipeline& pipeline, const StripPlan& plan, PixelType type,
                const StreamOptions& options, const Scans& scans)
      : pipeline_(pipeline),
        plan_(plan),
        type_(type),
        measure_only_(options.measure_only),
        runs_(pipeline.stages().size()) {
    for (auto& run : runs_) run.keep_flags = options.keep_flags;
    for (std::size_t i = 0; i < scans.size(); ++i) runs_[i].scan = scans[i];
  }

  OutputStrip run(int k, const HostStrip& strip) {
    const Span own = plan_.output(k);
    const auto& stages = pipeline_.stages();
    // Without filters and with the input's sample type the strip is the output (its rows are
    // its own: the reach is 0): no round trip through floats.
    if (stages.empty() && strip.pixels.type == type_) return {own, strip.pixels};
    if (auto scan = scan_single(pipeline_, plan_, strip)) runs_[0].scan = scan;
    Image image = to_image(strip.pixels, strip.rows, plan_.input_height());
    for (std::size_t i = 0; i < stages.size(); ++i) {
      const int set = pipeline_.guide_set(i);
      runs_[i].own = plan_.own_rows(k, int(i));
      runs_[i].guides = set >= 0 ? &strip.guides[set] : nullptr;
      const Span rows = plan_.stage_rows(k, i);
      if (!stages[i]->reference_in_place(image, rows, runs_[i]))
        image = stages[i]->reference_rows(image, rows, runs_[i]);
    }
    return {own, measure_only_ ? PixelBuffer() : to_pixels(image, type_, own)};
  }

  void finish(StreamResult& result) { result.runs = std::move(runs_); }
  void finish_early() {}

 private:
  const Pipeline& pipeline_;
  const StripPlan& plan_;
  const PixelType type_;
  const bool measure_only_;
  std::vector<StageRun> runs_;
};

// One lane's side results and checks into another's: the lanes ran on different strips.
void merge(StreamResult& into, StreamResult part) {
  add_timings(into.timings, part.timings);
  Checks::merge(into.checks, std::move(part.checks));
  if (into.runs.empty()) {
    into.runs = std::move(part.runs);
    return;
  }
  for (std::size_t i = 0; i < part.runs.size(); ++i) merge_runs(into.runs[i], part.runs[i]);
}

// A reader thread, a thread per lane, and a writer thread; strips go to whichever lane is
// free and come out in order.
template <class Lane>
StreamResult stream(std::vector<std::unique_ptr<Lane>>& lanes, const StripPlan& plan,
                    const StreamInput& input, const StreamOutput& output,
                    const StreamOptions& options) {
  const auto start = Clock::now();
  Channel<std::pair<int, std::shared_ptr<const HostStrip>>> inputs(options.in_flight);
  // Finished strips waiting for the writer: in_flight, one more for each other lane (lanes
  // finish out of order); a lane with a strip beyond that waits.
  Reorder<OutputStrip> outputs(options.in_flight + int(lanes.size()) - 1);
  FirstFailure failure;
  StreamPhases phases;
  std::mutex device_time;
  const auto guarded = [&](auto&& body) {
    try {
      body();
    } catch (...) {
      failure.set(std::current_exception());
      inputs.close();
      outputs.close();
    }
  };
  std::thread reader([&] {
    guarded([&] {
      StripReader strips(input, plan, options.host_memory);
      for (int k = 0; k < plan.strips(); ++k) {
        // The next strip is made once the queue has room for it: in_flight strips queued or
        // being read, not one more (Altai gaussian on PoCL: 0.8 MiB less, ~3% slower).
        if (!inputs.wait_for_room()) return;
        const auto t = Clock::now();
        auto strip = strips.read(k);
        phases.read_s += seconds_since(t);
        if (!inputs.push({k, std::move(strip)})) return;
      }
    });
    inputs.close();
  });
  std::thread writer([&] {
    guarded([&] {
      while (auto strip = outputs.pop()) {
        const auto t = Clock::now();
        output(strip->rows, strip->pixels);
        phases.write_s += seconds_since(t);
      }
    });
  });
  std::vector<StreamResult> parts(lanes.size());
  std::vector<std::thread> workers;
  for (std::size_t l = 0; l < lanes.size(); ++l)
    workers.emplace_back([&, l] {
      guarded([&] {
        double busy = 0;
        while (auto next = inputs.pop()) {
          const auto t = Clock::now();
          OutputStrip out = lanes[l]->run(next->first, *next->second);
          busy += seconds_since(t);
          if (!outputs.push(next->first, std::move(out))) {
            lanes[l]->finish_early();
            return;
          }
        }
        lanes[l]->finish(parts[l]);
        std::lock_guard lock(device_time);
        phases.device_s += busy;
      });
    });
  for (auto& w : workers) w.join();
  outputs.finish();
  inputs.close();
  reader.join();
  writer.join();
  failure.rethrow();
  StreamResult result;
  for (auto& part : parts) merge(result, std::move(part));
  phases.wall_s = seconds_since(start);
  result.phases = phases;
  result.strips = plan.strips();
  return result;
}

int strip_rows_for(const Pipeline& pipeline, const StreamInput& input,
                   const StreamOptions& options) {
  return pipeline.whole_image_reason(input.type).empty() ? options.strip_rows : 0;
}

// Whether strips may read only the input rows the strip before did not (StripPlan's carried
// form): one lane (each strip follows the last on the same StageRun), a first stage that
// carries its rows, and nothing else that reads the input's rows again: alpha (passed through
// from the input's rows), guides (read with the input's rows), --verify (the reference needs
// them).
bool carries_input(const Device& device, const Pipeline& pipeline, const StreamInput& input,
                   const StreamOptions& options, int lanes) {
  if (lanes != 1 || options.verify || input.alpha || !pipeline.guide_sets().empty() ||
      pipeline.stages().empty())
    return false;
  const CarriesRows* carries = facet<CarriesRows>(*pipeline.stages()[0]);
  return carries && carries->carries_rows(device);
}

}  // namespace

void copy_rows(const Image& from, Image& to, Span rows) {
  if (from.width() == 0) return;
  for (int c = 0; c < from.channels(); ++c)
    for (int y = rows.first; y < rows.last; ++y)
      std::memcpy(to.row(c, y - to.y0()), from.row(c, y - from.y0()),
                  sizeof(float) * std::size_t(from.width()));
}

void copy_rows(const Guides& from, Guides& to, Span rows) {
  copy_rows(from.normal, to.normal, rows);
  copy_rows(from.depth, to.depth, rows);
  copy_rows(from.albedo, to.albedo, rows);
  copy_rows(from.motion, to.motion, rows);
}

void copy_rows(const HostStrip& from, HostStrip& to, Span rows) {
  const std::size_t row_bytes = from.pixels.bytes.size() / std::max(1, from.pixels.height);
  std::memcpy(to.pixels.bytes.data() + (rows.first - to.rows.first) * row_bytes,
              from.pixels.bytes.data() + (rows.first - from.rows.first) * row_bytes,
              rows.count() * row_bytes);
  for (std::size_t s = 0; s < from.guides.size(); ++s)
    copy_rows(from.guides[s], to.guides[s], rows);
}

bool StreamResult::ok() const {
  for (const auto& check : checks)
    if (!check.ok()) return false;
  return true;
}

StreamResult stream_device(Device& device, const Pipeline& pipeline, const StreamInput& input,
                           PixelType type, const StreamOutput& output, const StreamOptions& given) {
  HeapPool heap;  // strips of host memory, recycled, unless the caller gives some
  StreamOptions options = given;
  if (!options.host_memory) options.host_memory = &heap;
  const int strip_rows = strip_rows_for(pipeline, input, options);
  // More lanes than strips would idle; each lane is a queue on the device's context.
  const int count = std::clamp(
      options.lanes, 1, StripPlan(pipeline, {input.width, input.height}, strip_rows).strips());
  const StripPlan plan(pipeline, {input.width, input.height}, strip_rows,
                       carries_input(device, pipeline, input, options, count));
  const Scans scans = scan_input(pipeline, input, plan, options.host_memory);
  std::vector<std::unique_ptr<Device>> queues;
  std::vector<std::unique_ptr<DeviceLane>> lanes;
  for (int l = 0; l < count; ++l) {
    Device* queue = &device;
    if (l > 0) queue = queues.emplace_back(std::make_unique<Device>(device.shared())).get();
    lanes.push_back(std::make_unique<DeviceLane>(*queue, pipeline, plan, type, options, scans));
  }
  return stream(lanes, plan, input, output, options);
}

StreamResult stream_reference(const Pipeline& pipeline, const StreamInput& input, PixelType type,
                              const StreamOutput& output, const StreamOptions& given) {
  HeapPool heap;
  StreamOptions options = given;
  if (!options.host_memory) options.host_memory = &heap;
  const StripPlan plan(pipeline, {input.width, input.height},
                       strip_rows_for(pipeline, input, options));
  const int count = std::clamp(options.lanes, 1, plan.strips());
  const Scans scans = scan_input(pipeline, input, plan, options.host_memory);
  std::vector<std::unique_ptr<ReferenceLane>> lanes;
  for (int l = 0; l < count; ++l)
    lanes.push_back(std::make_unique<ReferenceLane>(pipeline, plan, type, options, scans));
  return stream(lanes, plan, input, output, options);
}

}  // namespace halo
