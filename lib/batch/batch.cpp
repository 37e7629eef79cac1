// The batch driver.
#include "batch/batch.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/record.hpp"
#include "core/temporaries.hpp"
#include "core/text.hpp"

namespace halo {

namespace {

std::atomic<int> g_signal{0};

extern "C" void on_stop_signal(int signal) {
  if (g_signal != 0) remove_temporaries_and_die(signal);
  g_signal = signal;
}

// The first SIGINT/SIGTERM asks the batch to stop taking files; a second one ends the process
// at once, its temporaries removed (no partial file under a final name, none under another).
class StopSignals {
 public:
  StopSignals() {
    g_signal = 0;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  static bool raised() { return g_signal != 0; }

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

nlohmann::json to_json(const FileJob& job, const FileOutcome& o) {
  nlohmann::json file = {{"input", job.input.path},
                         {"output", job.output},
                         {"status", to_string(o.status)},
                         {"error", o.error.empty() ? nlohmann::json() : nlohmann::json(o.error)},
                         {"exit_code", o.exit_code},
                         {"device", o.device},
                         {"read_s", o.read_s},
                         {"device_s", o.device_s},
                         {"write_s", o.write_s},
                         {"total_s", o.total_s}};
  if (!job.flags_output.empty()) file["flags_output"] = job.flags_output;
  return file;
}

// How many files ended in each status.
struct Tally {
  std::size_t ok = 0, skipped = 0, failed = 0, mismatch = 0, not_run = 0;

  explicit Tally(const std::vector<FileOutcome>& outcomes) {
    for (const auto& o : outcomes) {
      ok += o.status == FileStatus::ok;
      skipped += o.status == FileStatus::skipped;
      failed += o.status == FileStatus::failed;
      mismatch += o.status == FileStatus::mismatch;
      not_run += o.status == FileStatus::not_run;
    }
  }
};

}  // namespace

void write_batch_summary(const std::string& path, const std::vector<FileJob>& jobs,
                         const std::vector<FileOutcome>& outcomes, const BatchSettings& settings,
                         double seconds, int exit_code) {
  const Tally tally(outcomes);
  nlohmann::json files = nlohmann::json::array();
  for (std::size_t i = 0; i < jobs.size(); ++i) files.push_back(to_json(jobs[i], outcomes[i]));
  const double processed = double(tally.ok + tally.mismatch);
  nlohmann::json summary = {{"schema", "halo-batch-summary/1"},
                            {"filters", settings.specs},
                            {"jobs", settings.jobs},
                            {"files", files},
                            {"totals",
                             {{"files", jobs.size()},
                              {"ok", tally.ok},
                              {"skipped", tally.skipped},
                              {"failed", tally.failed},
                              {"mismatch", tally.mismatch},
                              {"not_run", tally.not_run},
                              {"seconds", seconds},
                              {"images_per_s", seconds > 0 ? processed / seconds : 0.0}}},
                            {"exit_code", exit_code}};
  write_atomically(path, [&](std::ostream& out) { out << json_text(summary, 2) << '\n'; });
}

namespace {

// "renders/a.exr: cannot open" stays as it is; a reason without the file gets it in front.
std::string failure_line(const FileJob& job, const std::string& reason) {
  return reason.starts_with(job.input.path) ? reason : job.input.path + ": " + reason;
}

}  // namespace

const char* to_string(FileStatus status) {
  switch (status) {
    case FileStatus::ok:
      return "ok";
    case FileStatus::skipped:
      return "skipped";
    case FileStatus::failed:
      return "failed";
    case FileStatus::mismatch:
      return "mismatch";
    case FileStatus::not_run:
      return "not_run";
  }
  return "?";
}

int run_batch(const std::vector<FileJob>& jobs, const BatchSettings& settings,
              const std::function<FileOutcome(const FileJob&, int worker)>& process) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<FileOutcome> outcomes(jobs.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  StopSignals signals;
  {
    Progress progress(settings.progress, jobs.size());
    const auto work = [&](int worker) {
      for (;;) {
        if (stop || StopSignals::raised()) return;
        const std::size_t i = next++;
        if (i >= jobs.size()) return;
        progress.started(jobs[i].input.path);
        FileOutcome outcome = process(jobs[i], worker);
        const bool bad =
            outcome.status == FileStatus::failed || outcome.status == FileStatus::mismatch;
        if (bad && settings.fail_fast) stop = true;
        progress.log([&] {
          if (!outcome.report.empty())
            fmt::print(is_standard_output(settings.summary) ? stderr : stdout, "{} -> {}\n{}",
                       jobs[i].input.path, jobs[i].output, outcome.report);
          if (bad) spdlog::error("{}", failure_line(jobs[i], outcome.error));
          if (outcome.status == FileStatus::skipped) spdlog::info("{}", outcome.error);
        });
        progress.finished(!bad);
        outcomes[i] = std::move(outcome);
      }
    };
    const int workers = std::max(1, std::min<int>(settings.jobs, int(jobs.size())));
    std::vector<std::jthread> threads;
    for (int w = 1; w < workers; ++w) threads.emplace_back(work, w);
    work(0);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const Tally tally(outcomes);
  const int exit_code = StopSignals::raised() ? int(ErrorKind::Interrupted)
                        : tally.failed        ? int(ErrorKind::BatchFailed)
                        : tally.mismatch      ? int(ErrorKind::Mismatch)
                                              : 0;
  if (!settings.summary.empty())
    write_batch_summary(settings.summary, jobs, outcomes, settings, seconds, exit_code);
  // One line after every batch, on a terminal or not (a job log shows what a run did); a
  // warning when anything failed, mismatched or did not run; -q silences the rest.
  const std::string totals = fmt::format(
      "{} files: {} ok, {} skipped, {} failed, {} mismatched, {} not run ({:.2f} s)", jobs.size(),
      tally.ok, tally.skipped, tally.failed, tally.mismatch, tally.not_run, seconds);
  if (tally.failed || tally.mismatch || tally.not_run)
    spdlog::warn("{}", totals);
  else if (spdlog::default_logger()->should_log(spdlog::level::warn))
    print_to_stderr("halo: " + totals + "\n");
  if (StopSignals::raised())
    spdlog::error("interrupted: {} files not run; run again with --skip-existing to finish",
                  tally.not_run);
  return exit_code;
}

}  // namespace halo
