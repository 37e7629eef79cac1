// `halo tune`: measures launch shapes on this machine's device and stores the fastest exact
// ones in the cache folder, where every later run on the same device and driver uses them.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "tune/tuner.hpp"

namespace halo {

namespace {

struct TuneCli {
  std::vector<std::string> families;
  std::string size;
  int runs = 10;
  bool dry_run = false;
  bool forget = false;
};

void print_family(const TuneFamily& f) {
  fmt::print("{:<10} {}\n", f.name, fmt::join(f.work, ", "));
  for (const auto& c : f.candidates) {
    if (c.status.empty())
      fmt::print("  {:<56} {:>9.4f} ms\n", c.settings, c.ms);
    else
      fmt::print("  {:<56} left out: {}\n", c.settings, c.status);
  }
  if (!f.note.empty())
    fmt::print("  {}\n\n", f.note);
  else
    fmt::print("  timed again, alternately: start {:.4f} ms, tuned {:.4f} ms ({:.2f}x)\n\n",
               f.start_ms, f.tuned_ms, f.start_ms / f.tuned_ms);
}

std::pair<int, int> parse_size(const std::string& text) {
  int w = 0, h = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%dx%d%c", &w, &h, &tail) != 2 || w < 1 || h < 1)
    throw Error(ErrorKind::Usage, "--size wants WxH, e.g. 3840x2160, got '" + text + "'");
  return {w, h};
}

int run_tune(const GlobalOptions& global, const TuneCli& cli) {
  if (global.device == "ref")
    throw Error(ErrorKind::Usage, "halo tune needs an OpenCL device; --device ref has no kernels");
  const auto cache = default_cache_dir();
  Device device(select_device(global.device), cache);
  const auto file = cache ? std::optional(tuned_file(*cache, device.info())) : std::nullopt;
  if (cli.forget) {
    std::error_code ec;
    if (file && std::filesystem::remove(*file, ec))
      fmt::print("{}: tuned shapes removed ({}); the table's are used again\n", device.info().name,
                 file->string());
    else
      fmt::print("{}: nothing tuned to remove\n", device.info().name);
    return 0;
  }
  if (!file && !cli.dry_run)
    throw Error(ErrorKind::CantCreate,
                "no cache folder to store tuned shapes in (HALO_NO_CACHE or --no-cache is set, "
                "or no HOME): set HALO_CACHE_DIR, or use --dry-run");
  TuneOptions options;
  if (!cli.size.empty()) std::tie(options.width, options.height) = parse_size(cli.size);
  options.runs = cli.runs;
  options.families = cli.families;
  fmt::print("tuning {} ({}), starting from the {}\n\n", device.info().name,
             device.info().driver_version, device.tuning_source());
  std::fflush(stdout);
  const TuneResult result = tune(device, options, [](const TuneFamily& f) {
    print_family(f);
    std::fflush(stdout);
  });
  const Tuning table = table_tuning(device.info());
  const std::string changed = settings_text(result.tuned, &table);
  fmt::print(
      "image {}x{}, median of {} runs per candidate; candidates checked against the CPU "
      "reference on 517x263 first\n",
      result.width, result.height, result.runs);
  fmt::print("differs from the table: {}\n", changed.empty() ? "nothing" : changed);
  if (!cli.dry_run) {
    store_tuning(*file, device.info(), result);
    fmt::print(
        "stored in {}: runs on this device and driver use it (halo devices -v shows it; "
        "halo tune --forget removes it)\n",
        file->string());
  }
  if (result.mismatches > 0) {
    spdlog::error(
        "{} candidate shape(s) gave results that differ from the CPU reference and were "
        "left out: a kernel bug, please report it with this output",
        result.mismatches);
    return static_cast<int>(ErrorKind::Mismatch);
  }
  return 0;
}

}  // namespace

Command add_tune_command(CLI::App& app, const GlobalOptions& global) {
  auto cli = std::make_shared<TuneCli>();
  auto* cmd = app.add_subcommand(
      "tune",
      "time launch shapes of the kernels on this device, keep the fastest whose results equal "
      "the CPU reference, and store them for later runs (per device and driver)");
  cmd->add_option("--filters", cli->families,
                  "kernel families to tune (default: all): gaussian (the separable passes: "
                  "gaussian, box up to r=16, separable conv kernels, unsharp; on GPUs also the "
                  "fused kernel and compiled-in weights), conv (the other conv kernels: sharpen, "
                  "emboss, edge), box (running sums, r >= 17; on GPUs box_walk), histogram")
      ->delimiter(',')
      ->check(CLI::IsMember(tune_families()));
  cmd->add_option("--size", cli->size,
                  "timing image WxH (default 7680x4320 on GPUs, larger than their caches; "
                  "1920x1080 on CPUs)");
  cmd->add_option("--runs", cli->runs, "timed runs per candidate; the median counts")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--dry-run", cli->dry_run, "measure and print, store nothing");
  cmd->add_flag("--forget", cli->forget,
                "remove this device's tuned shapes (runs use the built-in table again)");
  cmd->footer(
      "One knob at a time: each value of a knob is timed with the others at their best so far,\n"
      "families in turn. Each candidate is first run on a 517x263 image and compared with the\n"
      "CPU reference bit for bit; a candidate the device refuses (too much local memory, a\n"
      "work-group too large) is left out with the reason. Stored in the cache folder\n"
      "(HALO_CACHE_DIR, else ~/.cache/halo) under tuning/, keyed by platform, device and\n"
      "driver: a driver update starts from the table again. HALO_TUNING=name=value,...\n"
      "still overrides single fields for experiments.\n"
      "Examples:\n"
      "  halo tune                            all families on the default device\n"
      "  halo tune --filters gaussian,box --size 3840x2160\n"
      "  halo --device cpu tune --dry-run     PoCL, print only\n"
      "Exit codes: 0 stored; 1 some candidate differed from the reference (left out, still\n"
      "stored); 64 bad option; 69 no device; 73 cannot store.");
  return [cli, &global] { return run_tune(global, *cli); };
}

}  // namespace halo
