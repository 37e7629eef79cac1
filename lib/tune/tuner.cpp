// halo tune's search. Each family names the filters whose kernels its knobs shape; a candidate
// is timed on a large random image (device time from profiling events, median of the runs)
// and first checked against the CPU reference on a small odd-sized one: launch shapes must
// never change a result, so a candidate that does is a kernel bug, reported and left out.
#include "tune/tuner.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>
#include <optional>

#include "core/atomic_file.hpp"
#include "core/record.hpp"
#include "filters/measure/histogram.hpp"
#include "filters/registry.hpp"
#include "pipeline/transfer.hpp"
#include "verify/compare.hpp"

namespace halo {

namespace {

// How a knob is searched on devices that run the vector kernels (CPUs) or the tiled ones.
const KnobSearch& search_of(const TuningField& field, bool vector_kernels) {
  return vector_kernels ? field.vector : field.tiled;
}

// A family: the work its knobs are timed on, and its knobs in cl/tuning.cpp's table order.
struct Family {
  const char* name;
  std::vector<std::string> work;  // filter specs, or "histogram:..." specs on 8-bit pixels
  std::vector<const TuningField*> knobs;
};

// GPUs run the tiled kernels (Tuning::vec == 0), CPUs the vector ones; each family times the
// filters whose kernels its knobs shape (box r=32: running sums; r <= 16 runs the separable
// kernels), and its knobs are the table's that search it on this kind of kernel.
std::vector<Family> families_for(bool vector_kernels) {
  std::vector<Family> families = {
      {"gaussian",
       vector_kernels ? std::vector<std::string>{"gaussian:r=8"}
                      : std::vector<std::string>{"gaussian:r=2", "gaussian:r=8", "gaussian:r=16",
                                                 "gaussian:r=32", "gaussian:r=64"},
       {}},
      {"conv", {"sharpen"}, {}},
      {"box", {"box:r=32"}, {}},
      {"histogram", {"histogram:mode=luma", "histogram:mode=gray"}, {}}};
  for (const TuningField& field : tuning_fields()) {
    const KnobSearch& search = search_of(field, vector_kernels);
    for (Family& family : families)
      if (search.family && family.name == std::string(search.family))
        family.knobs.push_back(&field);
  }
  return families;
}

bool is_histogram(const std::string& spec) {
  return spec.rfind("histogram", 0) == 0;
}

HistogramSpec histogram_spec(const std::string& text) {
  return HistogramSpec::from(Args(parse_spec(text), find_filter("histogram")->params));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// One piece of work: its inputs (large for timing, small and odd-sized for the check) and
// the reference result of the small one.
class Work {
 public:
  Work(Device& device, const std::string& spec, int width, int height) : spec_(spec) {
    const bool hist = is_histogram(spec);
    const PixelType type = hist ? PixelType::u8 : PixelType::f32;
    const int channels = hist && spec.find("luma") != std::string::npos ? 3 : 1;
    small_ = random_pixels(517, 263, channels, type, 22);
    if (hist) {
      histogram_ = histogram_spec(spec);
      large_ = random_pixels(width, height, channels, type, 21);  // uploaded by each count
      expected_counts_ = histogram_reference(small_, *histogram_);
    } else {
      stage_ = make_stage(spec);
      expected_ = stage_->reference(to_image(small_));
      large_input_ = upload(device, random_pixels(width, height, channels, type, 21));
    }
    device.take_timings();
  }

  // Whether the device's current shapes give the reference's result, bit for bit.
  bool exact(Device& device) const {
    bool same;
    if (stage_) {
      const Image got = download_image(device, stage_->enqueue(device, upload(device, small_)));
      same = compare(got, expected_, 0.0).max_error == 0.0;  // pixels, not the row padding
    } else {
      same = histogram_device(device, small_, *histogram_).same_counts(expected_counts_);
    }
    device.take_timings();
    return same;
  }

  const std::string& spec() const { return spec_; }

  // Median device time of `runs` calls after two untimed ones, uploads left out.
  double time(Device& device, int runs) const {
    std::vector<double> times;
    for (int i = 0; i < 2 + runs; ++i) {
      if (stage_)
        stage_->enqueue(device, large_input_);
      else
        histogram_device(device, large_, *histogram_, &totals_);
      double ms = 0;
      for (const auto& t : device.take_timings())
        if (t.label != "upload" && t.label != "alpha") ms += t.ms;
      if (i >= 2) times.push_back(ms);
    }
    return median(times);
  }

 private:
  std::string spec_;
  std::unique_ptr<Stage> stage_;            // a filter's work, or
  std::optional<HistogramSpec> histogram_;  // a histogram's
  PixelBuffer large_, small_;
  DeviceImage large_input_;
  Image expected_;
  Histogram expected_counts_;
  mutable HistogramTotals totals_;
};

// "rows_w=32,rows_h=4,..." of the family's knobs only.
std::string knob_text(const Tuning& t, const Family& family) {
  std::string text;
  for (const TuningField* knob : family.knobs) {
    if (!text.empty()) text += ',';
    text.append(knob->name).append("=").append(std::to_string(t.*(knob->member)));
  }
  return text;
}

double time_work(Device& device, const std::vector<Work>& work, int runs) {
  double ms = 0;
  for (const auto& w : work) ms += w.time(device, runs);
  return ms;
}

// Time of one candidate over the family's work, or the reason it is left out.
TuneCandidate measure(Device& device, const Tuning& candidate, const Family& family,
                      const std::vector<Work>& work, int runs, int& mismatches) {
  TuneCandidate result{knob_text(candidate, family), 0, ""};
  device.set_tuning(candidate, "halo tune candidate");
  try {
    for (const auto& w : work)
      if (!w.exact(device)) {
        ++mismatches;
        result.status = "differs from the reference";
        spdlog::warn(
            "tune: {} with {} differs from the CPU reference on {} (a kernel bug; "
            "shapes must not change results): left out",
            device.info().name, result.settings, w.spec());
        return result;
      }
    result.ms = time_work(device, work, runs);
  } catch (const Error& e) {  // too much local memory, a work-group the device refuses, ...
    result.status = e.what();
    device.take_timings();
  }
  return result;
}

// The best of many noisy medians is biased low, so the winner and the start are timed again,
// alternately, and the start is kept unless the winner is still faster.
void confirm(Device& device, const Tuning& start, Tuning& tuned, const std::vector<Work>& work,
             int runs, TuneFamily& report) {
  if (settings_text(tuned, &start).empty()) {
    device.set_tuning(start, "halo tune start");
    report.start_ms = report.tuned_ms = time_work(device, work, runs);
    report.note = "no candidate was faster: start kept";
    return;
  }
  std::vector<double> start_ms, tuned_ms;
  for (int round = 0; round < 3; ++round) {
    device.set_tuning(start, "halo tune start");
    start_ms.push_back(time_work(device, work, runs));
    device.set_tuning(tuned, "halo tune winner");
    tuned_ms.push_back(time_work(device, work, runs));
  }
  report.start_ms = median(start_ms);
  report.tuned_ms = median(tuned_ms);
  if (report.tuned_ms >= report.start_ms) {
    report.note = "the fastest candidate was not faster when timed again: start kept";
    tuned = start;
    report.tuned_ms = report.start_ms;
  }
}

std::string iso_time_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

}  // namespace

const std::vector<std::string>& tune_families() {
  static const std::vector<std::string> names = {"gaussian", "conv", "box", "histogram"};
  return names;
}

TuneResult tune(Device& device, const TuneOptions& options,
                const std::function<void(const TuneFamily&)>& progress) {
  TuneResult result;
  result.start = result.tuned = device.tuning();
  result.start_source = device.tuning_source();
  const DeviceProfile profile = device.profile();
  result.width = options.width > 0 ? options.width : profile.tune_width;
  result.height = options.height > 0 ? options.height : profile.tune_height;
  result.runs = options.runs;
  const bool vector_kernels = profile.vector_kernels;
  for (const Family& family : families_for(vector_kernels)) {
    if (!options.families.empty() && std::find(options.families.begin(), options.families.end(),
                                               family.name) == options.families.end())
      continue;
    std::vector<Work> work;
    for (const auto& spec : family.work)
      work.emplace_back(device, spec, result.width, result.height);
    TuneFamily report{family.name, family.work, 0, 0, {}, ""};
    const Tuning family_start = result.tuned;
    device.set_tuning(family_start, "halo tune start");
    time_work(device, work, 1);  // untimed: the first runs on fresh buffers are slower
    TuneCandidate best =
        measure(device, family_start, family, work, options.runs, result.mismatches);
    if (!best.status.empty())
      throw Error(ErrorKind::Internal, "tune: the starting shapes fail on " +
                                           std::string(family.name) + ": " + best.status);
    report.candidates.push_back(best);
    for (const TuningField* knob : family.knobs) {
      int Tuning::*member = knob->member;
      for (int value : search_of(*knob, vector_kernels).values) {
        if (result.tuned.*member == value) continue;
        Tuning candidate = result.tuned;
        candidate.*member = value;
        TuneCandidate c = measure(device, candidate, family, work, options.runs, result.mismatches);
        // 2% or more: a smaller gain is within the noise of one median and would only make
        // the choice depend on the order of the candidates.
        if (c.status.empty() && c.ms < 0.98 * best.ms) best = c, result.tuned = candidate;
        report.candidates.push_back(std::move(c));
      }
    }
    confirm(device, family_start, result.tuned, work, options.runs, report);
    result.families.push_back(std::move(report));
    progress(result.families.back());
  }
  device.set_tuning(result.tuned, "halo tune");
  return result;
}

void store_tuning(const std::filesystem::path& file, const DeviceInfo& device,
                  const TuneResult& result) {
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& field : tuning_fields()) settings[field.name] = result.tuned.*(field.member);
  nlohmann::json families = nlohmann::json::array();
  for (const auto& f : result.families) {
    nlohmann::json candidates = nlohmann::json::array();
    for (const auto& c : f.candidates)
      candidates.push_back({{"settings", c.settings}, {"ms", c.ms}, {"status", c.status}});
    families.push_back({{"family", f.name},
                        {"work", f.work},
                        {"start_ms", f.start_ms},
                        {"tuned_ms", f.tuned_ms},
                        {"note", f.note},
                        {"candidates", candidates}});
  }
  const nlohmann::json doc = {
      {"device", device.name},
      {"platform", device.platform_name},
      {"type", device.type},
      {"version", device.version},
      {"driver", device.driver_version},
      {"tuned_at", iso_time_now()},
      {"image", std::to_string(result.width) + "x" + std::to_string(result.height)},
      {"runs", result.runs},
      {"started_from", result.start_source},
      {"settings", settings},
      {"families", families}};
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec)
    throw Error(ErrorKind::CantCreate,
                file.parent_path().string() + ": cannot create folder: " + ec.message());
  write_record(file, doc);
}

}  // namespace halo
