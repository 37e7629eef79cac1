// Running one command over many files: a pool of workers (decode, device, encode), per-file
// outcomes that never stop the others unless --fail-fast, a progress line, Ctrl-C that lets the
// files in flight finish, and the --summary JSON.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "batch/inputs.hpp"
#include "batch/progress.hpp"

namespace halo {

struct FileJob {
  InputFile input;
  std::string output;
  std::string flags_output;  // --write-flags, expanded like -o; empty when not asked
};

enum class FileStatus { ok, skipped, failed, mismatch, not_run };
const char* to_string(FileStatus status);

struct FileOutcome {
  FileStatus status = FileStatus::not_run;
  std::string error;   // one line: the reason a file failed, was skipped or mismatched
  int exit_code = 0;   // what a single run of this file would have returned
  std::string device;  // where the filters ran: a device name, or "reference"
  double read_s = 0, device_s = 0, write_s = 0, total_s = 0;
  std::string report;            // what the file prints on stdout (histograms, checks, timings)
  std::exception_ptr exception;  // the failure itself, rethrown when the run has one file
};

struct BatchSettings {
  int jobs = 1;
  Progress::Mode progress = Progress::Mode::off;
  bool fail_fast = false;
  std::string summary;             // --summary FILE.json; empty: none
  std::vector<std::string> specs;  // the stages, for the summary
};

// Runs process(job, worker) for every job on `settings.jobs` threads. Returns the exit code:
// 0 all ok or skipped; 1 some files mismatched their reference (and none failed otherwise);
// 2 some file failed; 130 interrupted (the files in flight finish, the others are "not_run").
int run_batch(const std::vector<FileJob>& jobs, const BatchSettings& settings,
              const std::function<FileOutcome(const FileJob&, int worker)>& process);

// The --summary report (schema halo-batch-summary/1) of finished files; also written for a
// single file when asked for.
void write_batch_summary(const std::string& path, const std::vector<FileJob>& jobs,
                         const std::vector<FileOutcome>& outcomes, const BatchSettings& settings,
                         double seconds, int exit_code);

}  // namespace halo
