// `halo compare A B`: idiff-style image comparison for CI, on two files or two folders of
// same-named files, with a JSON report and a difference image written only on failure.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "batch/inputs.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "io/image_io.hpp"
#include "io/standard_streams.hpp"
#include "verify/compare.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

// Where the text report goes: stdout, or stderr when --json writes to standard output (-).
std::FILE* text_out = stdout;

struct CompareOptions {
  std::string a, b;
  Thresholds thresholds;
  std::string diff_out;
  float diff_scale = 1.0f;
  std::string json;
  bool recursive = false;
};

struct Pair {
  std::string a, b;          // as reports name them
  std::string read_a, read_b;  // the files read, when not a and b (standard input's spool)
  std::string diff_out;  // where its difference image goes if it fails; empty: nowhere
};

struct PairResult {
  std::string verdict;  // PASS, WARNING, FAILURE, NOT_COMPARABLE
  std::string error;    // why it could not be compared
  int exit_code = 0;
  ImageDiff diff;
  std::vector<std::string> channel_names;
  bool diff_written = false;
};

std::string channel_name(const std::vector<std::string>& names, int c) {
  return c < int(names.size()) ? names[c] : std::to_string(c);
}

PairResult compare_pair(const Pair& pair, const CompareOptions& o) {
  PairResult r;
  try {
    const LoadedImage a = read_image(parse_input_ref(pair.read_a.empty() ? pair.a : pair.read_a));
    const LoadedImage b = read_image(parse_input_ref(pair.read_b.empty() ? pair.b : pair.read_b));
    const Image ia = to_image(a.pixels), ib = to_image(b.pixels);
    if (ia.width() != ib.width() || ia.height() != ib.height() || ia.channels() != ib.channels())
      throw Error(
          ErrorKind::NotComparable,
          fmt::format("not comparable: {} is {}x{}x{}, {} is {}x{}x{}", pair.a, ia.width(),
                      ia.height(), ia.channels(), pair.b, ib.width(), ib.height(), ib.channels()));
    r.diff = diff_images(ia, ib, o.thresholds);
    r.channel_names = a.channel_names;
    r.verdict = to_string(r.diff.verdict);
    r.exit_code = r.diff.verdict == Verdict::fail ? int(ErrorKind::Mismatch) : 0;
    if (r.diff.verdict == Verdict::fail && !pair.diff_out.empty()) {
      const Image diff = difference_image(ia, ib, o.diff_scale);
      const SampleType type = storable_type(pair.diff_out, SampleType::f32);
      write_image(pair.diff_out, to_pixels(diff, pixel_type(type)), type);
      r.diff_written = true;
    }
  } catch (const Error& e) {
    r.verdict = "NOT_COMPARABLE";
    r.error = e.what();
    r.exit_code = e.exit_code();
  }
  return r;
}

std::string percent(std::size_t part, std::size_t whole) {
  return fmt::format("{:.3g}%", whole ? 100.0 * double(part) / double(whole) : 0.0);
}

void print_pair(const Pair& pair, const PairResult& r, const Thresholds& t) {
  fmt::print(text_out, "{} vs {}: {}\n", pair.a, pair.b, r.verdict);
  if (!r.error.empty()) {
    fmt::print(text_out, "  {}\n", r.error);
    spdlog::error("{}", r.error);
    return;
  }
  const Comparison& m = r.diff.metrics;
  fmt::print(text_out, "  mean error {:.6g}, RMS error {:.6g}, PSNR {:.2f} dB\n", m.mean_error,
             m.rms_error, m.psnr);
  fmt::print(text_out, "  max error {:.6g} at ({}, {}) channel {}: {} vs {}\n", m.max_error,
             m.worst_x, m.worst_y, channel_name(r.channel_names, m.worst_c), m.worst_actual,
             m.worst_expected);
  fmt::print(text_out, "  {} pixels ({}) over fail {:g}; {} pixels ({}) over warn {:g}\n",
             r.diff.failed_pixels, percent(r.diff.failed_pixels, r.diff.pixels), t.fail,
             r.diff.warned_pixels, percent(r.diff.warned_pixels, r.diff.pixels), t.warn);
  if (r.diff.metrics.max_error > t.hard_fail)
    fmt::print(text_out, "  max error above --hardfail {:g}\n", t.hard_fail);
  if (r.diff_written) fmt::print(text_out, "  difference image: {}\n", pair.diff_out);
}

nlohmann::json number_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json();
}

nlohmann::json to_json(const Pair& pair, const PairResult& r) {
  nlohmann::json j = {
      {"a", pair.a}, {"b", pair.b}, {"verdict", r.verdict}, {"exit_code", r.exit_code}};
  if (!r.error.empty()) {
    j["error"] = r.error;
    return j;
  }
  const Comparison& m = r.diff.metrics;
  j["max_error"] = number_or_null(m.max_error);
  j["mean_error"] = number_or_null(m.mean_error);
  j["rms_error"] = number_or_null(m.rms_error);
  j["psnr"] = number_or_null(m.psnr);  // null when the images are identical (infinite)
  j["worst"] = {{"x", m.worst_x},
                {"y", m.worst_y},
                {"channel", channel_name(r.channel_names, m.worst_c)},
                {"a", number_or_null(m.worst_actual)},
                {"b", number_or_null(m.worst_expected)}};
  j["pixels"] = r.diff.pixels;
  j["failed_pixels"] = r.diff.failed_pixels;
  j["warned_pixels"] = r.diff.warned_pixels;
  j["diff_out"] = r.diff_written ? nlohmann::json(pair.diff_out) : nlohmann::json();
  return j;
}

void write_report(const std::string& path, const std::vector<Pair>& pairs,
                  const std::vector<PairResult>& results, const Thresholds& t, int exit_code) {
  nlohmann::json report = {{"schema", "halo-compare/1"},
                           {"thresholds",
                            {{"fail", t.fail},
                             {"failrelative", t.fail_relative},
                             {"failpercent", t.fail_percent},
                             {"hardfail", number_or_null(t.hard_fail)},
                             {"allowfailures", t.allow_failures},
                             {"warn", t.warn},
                             {"warnrelative", t.warn_relative},
                             {"warnpercent", t.warn_percent},
                             {"hardwarn", number_or_null(t.hard_warn)}}},
                           {"pairs", nlohmann::json::array()},
                           {"exit_code", exit_code}};
  for (std::size_t i = 0; i < pairs.size(); ++i)
    report["pairs"].push_back(to_json(pairs[i], results[i]));
  write_atomically(path, [&](std::ostream& out) { out << report.dump(2) << '\n'; });
}

// Relative image paths under a folder, sorted.
std::map<std::string, std::string> images_under(const std::string& folder, bool recursive) {
  std::map<std::string, std::string> found;
  for (const auto& file : expand_inputs({folder}, {.recursive = recursive}).files)
    found.emplace(fs::path(file.path).lexically_relative(folder).string(), file.path);
  return found;
}

// Two files, or every image of either folder matched by its relative path. A name on one side
// only becomes a pair with a missing file, which reports as not comparable.
std::vector<Pair> pairs_of(const CompareOptions& o) {
  std::error_code ec;
  const bool folder_a = fs::is_directory(o.a, ec), folder_b = fs::is_directory(o.b, ec);
  if (folder_a != folder_b)
    throw Error(ErrorKind::Usage, "compare: give two files or two folders (" + o.a + " is " +
                                      (folder_a ? "a folder" : "not a folder") + ", " + o.b +
                                      " is " + (folder_b ? "a folder" : "not a folder") + ")");
  if (!folder_a) return {{o.a, o.b, "", "", o.diff_out}};
  auto in_a = images_under(o.a, o.recursive), in_b = images_under(o.b, o.recursive);
  for (const auto& [rel, path] : in_b) in_a.emplace(rel, (fs::path(o.a) / rel).string());
  std::vector<Pair> pairs;
  for (const auto& [rel, path] : in_a)
    pairs.push_back({path, (fs::path(o.b) / rel).string(), "", "",
                     o.diff_out.empty() ? "" : (fs::path(o.diff_out) / rel).string()});
  if (!o.diff_out.empty()) fs::create_directories(o.diff_out, ec);
  return pairs;
}

int compare_command(const CompareOptions& o) {
  if (is_standard_output(o.json)) text_out = stderr;
  if (is_standard_input(o.a) && is_standard_input(o.b))
    throw Error(ErrorKind::Usage, "compare: only one of the two images can be standard input");
  std::vector<Pair> pairs = pairs_of(o);
  std::optional<StandardInput> piped;  // "-" is never a folder: one pair
  if (is_standard_input(o.a)) pairs.front().read_a = piped.emplace().path();
  if (is_standard_input(o.b)) pairs.front().read_b = piped.emplace().path();
  std::vector<PairResult> results;
  for (const auto& pair : pairs) {
    results.push_back(compare_pair(pair, o));
    if (piped) results.back().error = piped->named(results.back().error);
    print_pair(pair, results.back(), o.thresholds);
  }
  int exit_code = 0;
  std::size_t failed = 0, warned = 0, incomparable = 0;
  for (const auto& r : results) {
    failed += r.verdict == "FAILURE";
    warned += r.verdict == "WARNING";
    incomparable += r.verdict == "NOT_COMPARABLE";
  }
  if (pairs.size() == 1)
    exit_code = results.front().exit_code;
  else
    exit_code = incomparable ? int(ErrorKind::NotComparable) : failed ? 1 : 0;
  if (pairs.size() > 1)
    fmt::print(text_out, "{} pairs: {} passed, {} warned, {} failed, {} not comparable\n",
               pairs.size(), pairs.size() - failed - warned - incomparable, warned, failed,
               incomparable);
  if (!o.json.empty()) write_report(o.json, pairs, results, o.thresholds, exit_code);
  return exit_code;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "compare two images (or two folders of same-named images) with idiff's thresholds; "
      "exit 0 pass or warning, 1 failure, 3 not comparable");
  cmd->add_option("a", o->a, "first image or folder (FILE[ch,...] picks channels; - for standard input)")->required();
  cmd->add_option("b", o->b, "second image or folder")->required();
  Thresholds& t = o->thresholds;
  cmd->add_option("--fail", t.fail, "a sample fails above this absolute error")
      ->capture_default_str();
  cmd->add_option("--failrelative", t.fail_relative,
                  "...and above this relative error |a-b|/mean(|a|,|b|) (0: off)")
      ->capture_default_str();
  cmd->add_option("--failpercent", t.fail_percent,
                  "pass while at most this percentage of pixels fail")
      ->capture_default_str();
  cmd->add_option("--hardfail", t.hard_fail, "fail when any error exceeds this (default: inf)");
  cmd->add_option("--allowfailures", t.allow_failures,
                  "pass while at most this many pixels fail, by any amount")
      ->capture_default_str();
  cmd->add_option("--warn", t.warn, "a sample warns above this absolute error")
      ->capture_default_str();
  cmd->add_option("--warnrelative", t.warn_relative, "...and above this relative error (0: off)")
      ->capture_default_str();
  cmd->add_option("--warnpercent", t.warn_percent, "allowed percentage of warned pixels")
      ->capture_default_str();
  cmd->add_option("--hardwarn", t.hard_warn, "warn when any error exceeds this (default: inf)");
  cmd->add_option("--diff-out", o->diff_out,
                  "on failure, write |a-b| as an image (for folders: a folder, one image per "
                  "failing pair)");
  cmd->add_option("--diff-scale", o->diff_scale, "multiply the difference image by this")
      ->capture_default_str();
  cmd->add_option("--json", o->json, "write the report as JSON (schema halo-compare/1)");
  cmd->add_flag("-r,--recursive", o->recursive, "for folders: include subfolders");
  cmd->footer(R"(A pixel fails when any channel's |a-b| exceeds --fail (and --failrelative, if set);
the pair fails when more pixels fail than --allowfailures and --failpercent allow, or when
any error exceeds --hardfail. Values are compared as read: 8/16-bit samples scaled to [0,1].
Folders: exit 3 if any name is missing on one side or unreadable, else 1 if any pair failed.
Examples:
  halo compare expected.exr actual.exr --fail 1e-4 --diff-out diff.exr
  halo compare golden/ out/ --fail 0.004 --failpercent 0.1 --json compare.json)");
  return [o] { return compare_command(*o); };
}

}  // namespace halo
