// `halo summary`: the --summary reports of several shards (halo run --shard K/N on a cluster or
// under GNU parallel) merged into one, with totals, the failed files, and any input that more
// than one shard processed.
#include <fmt/format.h>
#include <glob.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "batch/inputs.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/paths.hpp"
#include "core/record.hpp"

namespace halo {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct SummaryOptions {
  std::vector<std::string> reports;
  std::string json_out;
};

constexpr const char* kSchema = "halo-batch-summary/1";

// A report nests 3 levels; anything deeper is not one (and 400 KB of '[' would otherwise
// recurse through the parser's callers).
constexpr int kMaxDepth = 16;
// A report's file entry is about 250 bytes: 128 MiB holds half a million files. A larger file
// is refused at once (a 1 GB one was read whole before "not JSON").
constexpr std::size_t kMaxReportBytes = std::size_t(128) << 20;
// Parsed, a report takes about 11 bytes of memory per byte of text (a 114 MB report of 400,000
// entries: 1.2 GB), counted against --max-memory before parsing.
constexpr double kParsedPerByte = 11;

// The fields merge() reads, with their types: a report of another shape is refused here
// (65) instead of failing later as an internal error.
void check_report_types(const json& report, const std::string& path) {
  const auto wrong = [&](const std::string& field, const char* want) {
    return Error(ErrorKind::BadData,
                 path + ": not a halo run --summary report (" + field + " is not " + want + ")");
  };
  if (!report.contains("totals") || !report["totals"].is_object())
    throw wrong("totals", "an object");
  if (report["totals"].contains("seconds") && !report["totals"]["seconds"].is_number())
    throw wrong("totals.seconds", "a number");
  if (report.contains("exit_code") && !report["exit_code"].is_number_integer())
    throw wrong("exit_code", "an integer");
  for (const auto& file : report["files"]) {
    if (!file.is_object()) throw wrong("an entry of files", "an object");
    for (const char* field : {"input", "status"})
      if (file.contains(field) && !file[field].is_string())
        throw wrong(std::string("files[].") + field, "a string");
    if (file.contains("error") && !file["error"].is_string() && !file["error"].is_null())
      throw wrong("files[].error", "a string or null");
  }
}

json read_report(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ErrorKind::NoInput, path + ": no such file");
  const std::string text = read_small_file(path, kMaxReportBytes, "summary report");
  check_memory(path, double(text.size()) * kParsedPerByte, "the summary report, parsed");
  if (json_nesting(text) > kMaxDepth)
    throw Error(ErrorKind::BadData, path +
                                        ": not a halo run --summary report (nested deeper than " +
                                        std::to_string(kMaxDepth) + " levels)");
  json report = json::parse(text, nullptr, false);
  if (report.is_discarded())
    throw Error(ErrorKind::BadData, path + ": not JSON (a summary cut short by a killed run?)");
  if (!report.is_object() || report.value("schema", "") != kSchema || !report["files"].is_array())
    throw Error(ErrorKind::BadData,
                path + ": not a halo run --summary report (schema " + kSchema + ")");
  check_report_types(report, path);
  return report;
}

// Per status, how many files of the merged list ended in it.
std::map<std::string, std::size_t> count_statuses(const json& files) {
  std::map<std::string, std::size_t> counts;
  for (const auto& f : files) ++counts[f.value("status", "?")];
  return counts;
}

// Arguments as given, with quoted patterns ('out/shard-*.json') expanded here, in order.
std::vector<std::string> expand_reports(const std::vector<std::string>& arguments) {
  std::vector<std::string> paths;
  for (const auto& argument : arguments) {
    std::error_code ec;
    if (argument.find_first_of("*?[") == std::string::npos || fs::exists(argument, ec)) {
      paths.push_back(argument);
      continue;
    }
    glob_t found{};
    const int status = ::glob(argument.c_str(), 0, nullptr, &found);
    for (std::size_t i = 0; status == 0 && i < found.gl_pathc; ++i)
      paths.emplace_back(found.gl_pathv[i]);
    ::globfree(&found);
    if (status != 0) throw Error(ErrorKind::NoInput, argument + ": no summary matches");
  }
  return paths;
}

struct Merged {
  json summary;
  std::vector<std::string> duplicates;  // inputs more than one shard processed
  int exit_code = 0;
};

Merged merge(const std::vector<std::string>& paths) {
  Merged m;
  json files = json::array(), shards = json::array();
  json filters;
  double longest = 0, sum = 0;
  bool interrupted = false;
  std::map<std::string, std::vector<std::string>> shards_of;  // input -> its reports
  for (const auto& path : paths) {
    json report = read_report(path);
    if (filters.is_null()) filters = report["filters"];
    if (report["filters"] != filters)
      spdlog::warn("{}: ran other filters ({}) than {} ({})", path,
                   json_text(report["filters"], -1), paths.front(), json_text(filters, -1));
    const double seconds = report["totals"].value("seconds", 0.0);
    longest = std::max(longest, seconds);
    sum += seconds;
    interrupted |= report.value("exit_code", 0) == int(ErrorKind::Interrupted);
    for (auto& f : report["files"]) {
      f["summary"] = path;
      shards_of[f.value("input", "")].push_back(path);
      files.push_back(std::move(f));
    }
    shards.push_back({{"summary", path},
                      {"files", report["files"].size()},
                      {"seconds", seconds},
                      {"exit_code", report.value("exit_code", 0)}});
  }
  for (const auto& [input, reports] : shards_of)
    if (reports.size() > 1) m.duplicates.push_back(input);
  auto counts = count_statuses(files);
  const double processed = double(counts["ok"] + counts["mismatch"]);
  m.exit_code = interrupted ? int(ErrorKind::Interrupted)
                : counts["failed"] || counts["not_run"] || !m.duplicates.empty()
                    ? int(ErrorKind::BatchFailed)
                : counts["mismatch"] ? int(ErrorKind::Mismatch)
                                     : 0;
  m.summary = {{"schema", kSchema},
               {"filters", filters},
               {"shards", shards},
               {"files", files},
               {"duplicates", m.duplicates},
               {"totals",
                {{"files", files.size()},
                 {"ok", counts["ok"]},
                 {"skipped", counts["skipped"]},
                 {"failed", counts["failed"]},
                 {"mismatch", counts["mismatch"]},
                 {"not_run", counts["not_run"]},
                 {"seconds", longest},
                 {"shard_seconds", sum},
                 {"images_per_s", longest > 0 ? processed / longest : 0.0}}},
               {"exit_code", m.exit_code}};
  return m;
}

std::string report_text(const Merged& m) {
  const json& t = m.summary["totals"];
  std::string text = fmt::format(
      "{} shards, {} files: {} ok, {} skipped, {} failed, {} mismatched, {} not run; longest "
      "shard {:.2f} s, all shards {:.2f} s\n",
      m.summary["shards"].size(), t["files"].get<std::size_t>(), t["ok"].get<std::size_t>(),
      t["skipped"].get<std::size_t>(), t["failed"].get<std::size_t>(),
      t["mismatch"].get<std::size_t>(), t["not_run"].get<std::size_t>(), t["seconds"].get<double>(),
      t["shard_seconds"].get<double>());
  for (const auto& f : m.summary["files"]) {
    const std::string status = f.value("status", "?");
    if (status == "failed" || status == "mismatch" || status == "not_run")
      text += fmt::format("{}: {}{}\n", status, f.value("input", ""),
                          f["error"].is_string() ? ": " + f["error"].get<std::string>() : "");
  }
  for (const auto& input : m.duplicates)
    text += fmt::format("processed by more than one shard: {}\n", input);
  return text;
}

int summary_command(const SummaryOptions& o) {
  const std::vector<std::string> reports = expand_reports(o.reports);
  // A merged report named like a shard's ('out/*.json' --json out/all.json, run twice) would
  // replace the report it read.
  refuse_clobbering({{"--json", o.json_out}}, reports);
  const Merged merged = merge(reports);
  const bool json_to_stdout = is_standard_output(o.json_out);
  fmt::print(json_to_stdout ? stderr : stdout, "{}", report_text(merged));
  if (!o.json_out.empty())
    write_atomically(o.json_out,
                     [&](std::ostream& out) { out << json_text(merged.summary, 2) << '\n'; });
  return merged.exit_code;
}

}  // namespace

Command add_summary_command(CLI::App& app) {
  auto o = std::make_shared<SummaryOptions>();
  CLI::App* cmd = app.add_subcommand(
      "summary",
      "merge the --summary reports of shards (halo run --shard K/N) into one: totals, failed "
      "files, inputs processed twice");
  cmd->add_option("reports", o->reports,
                  "summary JSON files, or a quoted pattern halo expands: 'out/shard-*.json'")
      ->required();
  cmd->add_option("--json", o->json_out,
                  "write the merged report (schema halo-batch-summary/1, plus shards, "
                  "duplicates and shard_seconds); - for standard output");
  cmd->footer(
      R"(Exit codes as a batch's: 0 every file ok or skipped, 1 some only mismatched --verify,
2 any failed or not run, or an input processed by more than one shard, 130 a shard was
interrupted; 65 for a report that is not one, 66 for a missing one.
Example:
  sbatch --wait --array=1-32 job.sh && halo summary 'out/shard-*.json' --json out/all.json)");
  return [o] { return summary_command(*o); };
}

}  // namespace halo
