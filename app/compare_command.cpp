// `halo compare A B`: idiff-style image comparison for CI, on two files or two folders of
// same-named files, with a JSON report and a difference image written only on failure.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "app/commands.hpp"
#include "app/device_pool.hpp"
#include "app/junit_report.hpp"
#include "batch/inputs.hpp"
#include "compare/pair.hpp"
#include "compare/pairs.hpp"
#include "compare/report.hpp"
#include "compare/sequence.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/record.hpp"
#include "io/codec.hpp"
#include "io/image_io.hpp"
#include "io/standard_streams.hpp"
#include "verify/compare.hpp"
#include "verify/flip.hpp"
#include "verify/ssim.hpp"
#include "verify/temporal.hpp"

namespace halo {

namespace {

// Where the text report goes: stdout, or stderr when --json writes to standard output (-).
std::FILE* text_out = stdout;

// The command line: what the comparison reads (ComparisonOptions) and what pairing, the
// sequence measures and the reports read.
struct CompareOptions : ComparisonOptions {
  std::string a, b;
  std::string diff_out;
  std::string exposure_map;  // --flip-exposure-map
  std::string idiff_o;       // -o
  bool idiff_od = false, idiff_abs = false;
  std::string json;
  bool recursive = false;
  std::string frames;                                 // --frames: the frames of two sequences
  std::optional<double> fail_temporal, fail_flicker;  // the sequence's gates
  std::vector<std::string> motion;                    // --motion X,Y: the motion's channels
  std::string flip_tonemapper = "aces";
  std::string flip_viewing;  // --flip-viewing DISTANCE,WIDTH,PIXELS
  std::string junit;         // --junit
  const GlobalOptions* global = nullptr;
};

bool wants(const CompareOptions& o, const std::string& metric) {
  return o.wants(metric);
}

void print_pair(const Pair& pair, const PairResult& r, const Thresholds& t) {
  fmt::print(text_out, "{}: {}\n{}", pair_name(pair), r.verdict, pair_details(pair, r, t));
  if (!r.error.empty()) spdlog::error("{}", r.error);
}

void write_junit_report(const std::string& path, const std::vector<Pair>& pairs,
                        const std::vector<PairResult>& results, const Thresholds& t,
                        const std::optional<TemporalResult>& temporal) {
  std::vector<JunitCase> cases;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const PairResult& r = results[i];
    JunitCase c{.name = pair_name(pairs[i]), .seconds = r.seconds};
    if (!r.error.empty())
      c.error = r.error;
    else
      c.details = pair_details(pairs[i], r, t);
    if (r.verdict == "FAILURE") c.failure = failure_message(r, t);
    cases.push_back(std::move(c));
  }
  if (temporal) {
    JunitCase c{.name = "temporal", .details = temporal_text(*temporal)};
    if (!temporal->failed.empty()) c.failure = temporal->failed.front();
    cases.push_back(std::move(c));
  }
  write_junit(path, "halo compare", cases);
}

void write_report(const std::string& path, const std::vector<Pair>& pairs,
                  const std::vector<PairResult>& results, const CompareOptions& o, int exit_code,
                  const std::optional<TemporalResult>& temporal) {
  const nlohmann::json report =
      report_json(pairs, results, o, {o.fail_temporal, o.fail_flicker}, exit_code, temporal);
  write_atomically(path, [&](std::ostream& out) { out << json_text(report, 2) << '\n'; });
}

int compare_command(const CompareOptions& o) {
  if (is_standard_output(o.json)) text_out = stderr;
  std::vector<Pair> pairs = pairs_of({.a = o.a,
                                      .b = o.b,
                                      .frames = o.frames,
                                      .diff_out = o.diff_out,
                                      .exposure_map = o.exposure_map,
                                      .recursive = o.recursive,
                                      .temporal = wants(o, "temporal")});
  std::vector<std::string> compared;
  for (const Pair& pair : pairs) compared.insert(compared.end(), {pair.a, pair.b});
  // The reports first, before standard input is spooled or any part counted; the files of
  // every pair and part below, once their names are known.
  refuse_clobbering({{"--json", o.json}, {"--junit", o.junit}}, compared);
  std::optional<StandardInput> piped;  // "-" is never a folder: one pair
  if (is_standard_input(o.a)) pairs.front().read_a = piped.emplace().path();
  if (is_standard_input(o.b)) pairs.front().read_b = piped.emplace().path();
  if (o.idiff_all) pairs = every_part(pairs);
  // Every file a pair or part may write (diff-mip1.exr), against every input and each other.
  std::vector<WrittenFile> written{{"--json", o.json}, {"--junit", o.junit}};
  for (const Pair& pair : pairs)
    written.insert(written.end(),
                   {{"--diff-out", pair.diff_out}, {"--flip-exposure-map", pair.exposure_map}});
  refuse_clobbering(written, compared);
  std::vector<PairResult> results;
  std::optional<DevicePool> devices;
  GlobalOptions choice = *o.global;
  choice.device = metrics_device(choice.device, o);
  if ((wants(o, "flip") || wants(o, "ssim")) &&
      (o.verify || (choice.device != "auto" && choice.device != "ref"))) {
    devices.emplace(choice, 1);
    devices->plan({.per_sample = StageCost{}, .needs_device = o.verify});
  }
  ComparisonOptions comparison = o;
  comparison.device_failed = [&](const std::exception& e, const std::string& metric) {
    fall_back_or_rethrow(*o.global, e, metric, "computing it on the CPU instead");
  };
  for (const auto& pair : pairs) {
    const auto start = std::chrono::steady_clock::now();
    std::optional<DevicePool::Lease> lease;
    if (devices) lease.emplace(devices->acquire(1e9));
    results.push_back(compare_pair(pair, comparison, lease ? lease->device() : nullptr));
    results.back().seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (piped) results.back().error = piped->named(results.back().error);
    print_pair(pair, results.back(), o.thresholds);
  }
  const Tally t = tally(results, o.idiff_exit);
  int exit_code = t.exit_code;
  if (pairs.size() > 1)
    fmt::print(text_out, "{} pairs: {} passed, {} warned, {} failed, {} not comparable\n",
               pairs.size(), pairs.size() - t.failed - t.warned - t.incomparable, t.warned,
               t.failed, t.incomparable);
  std::optional<TemporalResult> temporal;
  if (wants(o, "temporal")) {
    temporal = measure_sequence(
        pairs, results,
        {.motion = o.motion, .fail_temporal = o.fail_temporal, .fail_flicker = o.fail_flicker});
    fmt::print(text_out, "{}", temporal_text(*temporal));
    if (!temporal->failed.empty()) exit_code = std::max(exit_code, 1);
  }
  if (!o.json.empty()) write_report(o.json, pairs, results, o, exit_code, temporal);
  if (!o.junit.empty()) write_junit_report(o.junit, pairs, results, o.thresholds, temporal);
  if (t.mismatch) {
    spdlog::error("verify: a metric on the device differs from the reference");
    return std::max(exit_code, int(ErrorKind::Mismatch));
  }
  return exit_code;
}

}  // namespace

std::vector<std::string> with_idiff_spellings(std::vector<std::string> args) {
  // idiff's single-dash options; CLI11 takes single-dash names of one letter only.
  static const std::map<std::string, std::string> idiff_names = {
      {"-fail", "--fail"},
      {"-failrelative", "--failrelative"},
      {"-failpercent", "--failpercent"},
      {"-hardfail", "--hardfail"},
      {"-allowfailures", "--allowfailures"},
      {"-warn", "--warn"},
      {"-warnrelative", "--warnrelative"},
      {"-warnpercent", "--warnpercent"},
      {"-hardwarn", "--hardwarn"},
      {"-o", "--idiff-o"},
      {"-od", "--idiff-od"},
      {"-abs", "--idiff-abs"},
      {"-p", "--idiff-perceptual"},
      {"-scale", "--diff-scale"}};
  // The global options before the subcommand that take a value (which might read "compare").
  static const std::set<std::string> valued = {"--device", "--max-pixels", "--max-memory"};
  std::size_t i = 1;
  while (i < args.size() && args[i] != "compare") i += valued.count(args[i]) ? 2 : 1;
  for (++i; i < args.size() && args[i] != "--"; ++i)
    if (const auto it = idiff_names.find(args[i]); it != idiff_names.end()) args[i] = it->second;
  return args;
}

// The whole of `text` as a number, or nothing.
std::optional<double> number_of(const std::string& text) {
  try {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// Thresholds are errors: finite and not negative (NaN would pass every pair, -1 fail identical
// images); the hard limits may also be inf, their default.
CLI::Validator threshold(bool may_be_infinite) {
  return CLI::Validator(
      [may_be_infinite](std::string& text) -> std::string {
        const std::optional<double> number = number_of(text);
        if (!number) return "'" + text + "' is not a number";
        const double value = *number;
        if (std::isnan(value) || value < 0 || (std::isinf(value) && !may_be_infinite))
          return "'" + text + "' must be a finite number >= 0" +
                 (may_be_infinite ? std::string(" or inf") : "");
        return "";
      },
      "");  // the help names the type; the error says the rule
}

// A finite number within [low, high] (above low when `above` is set): NaN, which CLI11's
// ranges let through, is refused with the rest.
CLI::Validator number_in(double low, double high, bool above, const std::string& rule) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::optional<double> number = number_of(text);
        if (!number) return "'" + text + "' is not a number";
        const double value = *number;
        if (!std::isfinite(value) || value < low || value > high || (above && value == low))
          return "'" + text + "' must be " + rule;
        return "";
      },
      "");
}

Command add_compare_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<CompareOptions>();
  o->global = &global;
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "compare two images (or two folders of same-named images) as idiff does, with its "
      "thresholds and verdicts; exit 0 pass or warning, 1 failure, 3 not comparable");
  cmd->add_option("a", o->a,
                  "first image or folder (FILE[ch,...] picks channels; - for standard input)")
      ->required();
  cmd->add_option("b", o->b, "second image or folder")->required();
  Thresholds& t = o->thresholds;
  cmd->add_option("--fail", t.fail, "a sample fails above this absolute error")
      ->check(threshold(false))
      ->capture_default_str();
  cmd->add_option("--failrelative", t.fail_relative,
                  "...and above this relative error |a-b|/mean(|a|,|b|) (0: off)")
      ->check(threshold(false))
      ->capture_default_str();
  cmd->add_option("--failpercent", t.fail_percent,
                  "pass while at most this percentage of pixels fail")
      ->check(threshold(false))
      ->capture_default_str();
  cmd->add_option("--hardfail", t.hard_fail, "fail when any error exceeds this (default: inf)")
      ->check(threshold(true));
  cmd->add_option("--allowfailures", t.allow_failures,
                  "pass while at most this many pixels fail, by any amount")
      ->check(CLI::Validator(CLI::NonNegativeNumber).description(""))
      ->capture_default_str();
  cmd->add_option("--warn", t.warn, "a sample warns above this absolute error")
      ->check(threshold(false))
      ->capture_default_str();
  cmd->add_option("--warnrelative", t.warn_relative, "...and above this relative error (0: off)")
      ->check(threshold(false))
      ->capture_default_str();
  cmd->add_option("--warnpercent", t.warn_percent, "allowed percentage of warned pixels")
      ->check(threshold(false))
      ->capture_default_str();
  cmd->add_option("--hardwarn", t.hard_warn, "warn when any error exceeds this (default: inf)")
      ->check(threshold(true));
  cmd->add_option("--diff-out", o->diff_out,
                  "on failure, write |a-b| as an image (for folders: a folder, one image per "
                  "failing pair)");
  cmd->add_option("--diff-scale", o->diff_scale, "multiply the difference image by this")
      ->capture_default_str();
  // idiff's -o, -od and -abs (renamed by with_idiff_spellings): its difference image, written
  // as idiff writes it.
  cmd->add_option("--idiff-o", o->idiff_o)->group("");
  cmd->add_flag("--idiff-od", o->idiff_od)->group("");
  cmd->add_flag("--idiff-abs", o->idiff_abs)->group("");
  cmd->add_flag("-a,--all-parts", o->idiff_all,
                "compare every subimage (part of a multi-part EXR) and every MIP level, each "
                "reported as a pair of its own (idiff's -a); without it a multi-part file's "
                "first part is compared and the report says so");
  cmd->add_flag("--idiff-perceptual", o->perceptual,
                "idiff's -p: count the pixels its perceptual test fails, as idiff 2.4 does (a "
                "chroma difference over 10 in CIELAB; the verdict is not changed); FLIP is the "
                "perceptual gate");
  cmd->add_option("--json", o->json, "write the report as JSON (schema halo-compare/1)");
  cmd->add_flag("-r,--recursive", o->recursive, "for folders: include subfolders");
  cmd->add_option("--ch", o->ch,
                  "compare only these channels, by name: --ch R,G,B or "
                  "--ch ViewLayer.Depth.Z (default: every channel of both files, which must "
                  "have the same names)");
  cmd->add_flag("--idiff-exit-codes", o->idiff_exit,
                "exit as idiff does: 0 pass, 1 warning, 2 failure (sizes or channels that "
                "differ too), 4 missing or unreadable (default: halo's codes, 0 pass or "
                "warning, 1 failure, 3 not comparable, 65/66 unreadable or missing)");
  cmd->add_option(
         "--metrics", o->metrics,
         "also compute these metrics, comma-separated: ssim (Wang et al. 2004: "
         "11x11 Gaussian window, sigma 1.5, K1 0.01, K2 0.03, as scikit-image's "
         "structural_similarity; per channel and their mean), flip (NVIDIA's FLIP: "
         "LDR-FLIP for 8/16-bit files, HDR-FLIP for float ones; a is the reference), temporal "
         "(two frame sequences: the temporal error mean |(a_t - a_t-1) - (b_t - "
         "b_t-1)| and each one's flicker, mean |c_t - warp(c_t-1)| over the pixels seen "
         "in both frames through Blender's motion vectors; in display space, "
         "clip(x, 0, 1)^(1/2.2) for float files)")
      ->delimiter(',')
      ->check(CLI::IsMember({"ssim", "flip", "temporal"}));
  cmd->add_option("--frames", o->frames,
                  "the frames of two sequences (shot.####.exr): 1-100, 1-100x5, 1,4,9-12 "
                  "(default: a's frames on disk)");
  cmd->add_option("--motion", o->motion,
                  "the two channels of the sequences' motion towards the previous frame in "
                  "pixels, in Blender's convention (the previous position of pixel (x, y) is "
                  "(x + X, y - Y)), for a renderer that names them otherwise (default: a "
                  "layer's Vector.X,Vector.Y)")
      ->delimiter(',')
      ->expected(2);
  cmd->add_option("--fail-temporal", o->fail_temporal,
                  "fail when the sequences' temporal error is above this (computes temporal)")
      ->check(threshold(false));
  cmd->add_option("--fail-flicker", o->fail_flicker,
                  "fail when a's flicker (warping error) is above this (computes temporal)")
      ->check(threshold(false));
  cmd->add_option("--ssim-range", o->ssim_range,
                  "the range of sample values SSIM's constants scale with (8/16-bit files are "
                  "read as [0,1]: 1; a float render: its white)")
      ->check(number_in(0, std::numeric_limits<double>::max(), true, "a finite number > 0"))
      ->capture_default_str();
  cmd->add_option("--fail-ssim", o->fail_ssim,
                  "fail a pair whose mean SSIM is below this (computes ssim; alone, it decides "
                  "the verdict instead of the sample thresholds)")
      ->check(number_in(-1, 1, false, "a number in [-1, 1], SSIM's range"));
  cmd->add_option("--fail-flip", o->fail_flip,
                  "fail a pair whose FLIP mean is above this (computes flip; alone, it decides "
                  "the verdict instead of the sample thresholds)")
      ->check(number_in(0, 1, false, "a number in [0, 1], FLIP's range"));
  cmd->add_option("--flip-ppd", o->flip.ppd,
                  "FLIP's viewing condition in pixels per degree (67.02: a 3840-pixel-wide "
                  "0.7 m monitor seen from 0.7 m)")
      ->check(number_in(kLeastFlipPpd, 1e4, false,
                        "a number in [2, 10000]: below 2, FLIP's feature filters give a pixel's "
                        "neighbours no weight"))
      ->capture_default_str();
  cmd->add_option("--flip-viewing", o->flip_viewing,
                  "FLIP's viewing condition as DISTANCE,WIDTH,PIXELS: the distance to the "
                  "screen and its width (same unit), and its width in pixels; pixels per degree "
                  "= DISTANCE * PIXELS / WIDTH * pi / 180 (0.7,0.7,3840 gives 67.02)")
      ->excludes("--flip-ppd");
  cmd->add_option("--flip-mode", o->flip_mode,
                  "auto: HDR-FLIP for float files, LDR-FLIP for 8/16-bit ones; ldr; hdr")
      ->check(CLI::IsMember({"auto", "ldr", "hdr"}))
      ->capture_default_str();
  cmd->add_option("--flip-start", o->flip.start,
                  "HDR-FLIP's first exposure in stops (default: from the reference's brightest "
                  "pixel)")
      ->check(number_in(-100, 100, false, "a number in [-100, 100]"));
  cmd->add_option("--flip-stop", o->flip.stop,
                  "HDR-FLIP's last exposure in stops (default: from the reference's median)")
      ->check(number_in(-100, 100, false, "a number in [-100, 100]"));
  cmd->add_option("--flip-exposure-map", o->exposure_map,
                  "write HDR-FLIP's exposure map (viridis: the exposure of each pixel's largest "
                  "error, first dark to last yellow) for every HDR pair (folders: a folder)");
  cmd->add_option("--flip-tonemapper", o->flip_tonemapper,
                  "HDR-FLIP's tone curve: aces, hable or reinhard")
      ->check(CLI::IsMember({"aces", "hable", "reinhard"}))
      ->capture_default_str();
  cmd->add_flag("--verify", o->verify,
                "compute the metrics on the device and on the CPU reference and fail (exit 1) "
                "when FLIP's error differs by more than 2e-3 at a pixel or SSIM by 1e-5");
  cmd->add_option("--junit", o->junit,
                  "write a JUnit XML report (one test case per pair) for CI's test results");
  cmd->footer(R"(A pixel fails when any channel's |a-b| exceeds --fail (and --failrelative, if set),
and warns likewise with --warn. Verdicts are idiff's (OpenImageIO 2.4): PASS while at most
--allowfailures pixels fail, whatever their errors; else FAILURE when more than --failpercent
of the pixels fail or any error exceeds --hardfail; else (failures --failpercent allows)
WARNING when more than --warnpercent warn or any error exceeds --hardwarn; else PASS.
idiff's spellings work too: -fail, -failrelative, -failpercent, -hardfail, -allowfailures,
-warn, -warnrelative, -warnpercent, -hardwarn, -scale (--diff-scale), and -o with -od and
-abs, which write the difference image as idiff does: a - b (|a - b| with -abs) whatever the
verdict, with -od only when the images differ; -p (--idiff-perceptual), which counts the
pixels idiff 2.4's perceptual test fails without changing the verdict, as idiff does; and -a
(--all-parts): every subimage and MIP level, each a pair in the report (a difference image
per part: diff-subimage1.exr, diff-mip2.exr); files whose counts differ are not comparable.
Values are compared as read: 8/16-bit samples scaled to [0,1]. Every channel is compared
(all layers of a multilayer EXR), matched by name. PSNR is idiff's: 20 log10(peak / RMS)
with peak the largest value in either image, at least 1.
Metrics: --metrics ssim adds SSIM to the report; --fail-ssim V fails a pair whose mean
SSIM is below V. --metrics flip adds FLIP (a the reference): its mean, weighted median and
quartiles, and --diff-out writes its heat map; --fail-flip V fails a mean above V. Given
alone, a metric threshold decides the verdict; with any sample threshold (--fail,
--failpercent, ...) both rules apply and either fails the pair. The metrics run on the CPU,
or on a GPU under --device auto when there is one, or on the device --device names; --verify
runs the device and the CPU and compares them.
Folders: exit 3 if any name is missing on one side or unreadable, else 1 if any pair failed;
with --idiff-exit-codes the largest of the pairs' codes.
Examples:
  halo compare expected.exr actual.exr --fail 1e-4 --diff-out diff.exr
  halo compare golden/ out/ --fail 0.004 --failpercent 0.1 --json compare.json
  halo compare -fail 0.004 -failpercent 0.1 --idiff-exit-codes a.exr b.exr
  halo compare golden/ out/ --fail-ssim 0.98 --junit report.xml
  halo compare golden/ out/ --metrics flip,ssim --fail-flip 0.05 --junit report.xml
  halo compare 'den/shot.####.exr' 'ref/shot.####.exr' --fail-temporal 0.01 --fail-flicker 0.05)");
  return [o, cmd] {
    if (o->verify && o->metrics.empty() && !o->fail_ssim && !o->fail_flip)
      throw Error(ErrorKind::Usage,
                  "compare: --verify checks the metrics a device computes; give --metrics "
                  "flip or ssim");
    if (o->fail_ssim && !wants(*o, "ssim")) o->metrics.push_back("ssim");
    if (o->fail_flip && !wants(*o, "flip")) o->metrics.push_back("flip");
    if ((o->fail_temporal || o->fail_flicker) && !wants(*o, "temporal"))
      o->metrics.push_back("temporal");
    o->flip.tonemapper = parse_flip_tonemapper(o->flip_tonemapper);
    if (!o->flip_viewing.empty()) o->flip.ppd = flip_pixels_per_degree(o->flip_viewing);
    if (!o->idiff_o.empty()) {
      if (!o->diff_out.empty())
        throw Error(ErrorKind::Usage, "compare: give --diff-out or idiff's -o, not both");
      o->diff_out = o->idiff_o;
      o->diff_when =
          o->idiff_od ? CompareOptions::DiffWhen::differ : CompareOptions::DiffWhen::always;
      o->diff_signed = !o->idiff_abs;
    }
    // A metric threshold alone gates on the metric: idiff's default --fail 1e-6 would fail
    // every pair a metric is for. Any sample threshold given keeps idiff's rule beside it.
    bool sample_thresholds = false;
    for (const char* name :
         {"--fail", "--failrelative", "--failpercent", "--hardfail", "--allowfailures", "--warn",
          "--warnrelative", "--warnpercent", "--hardwarn"})
      sample_thresholds |= cmd->count(name) > 0;
    o->idiff_rule =
        !(o->fail_ssim || o->fail_flip || o->fail_temporal || o->fail_flicker) || sample_thresholds;
    return compare_command(*o);
  };
}

}  // namespace halo
