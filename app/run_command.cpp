// `halo run`: read an image, run the filter pipeline on the device (or the reference), verify,
// write the result atomically.
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <map>

#include "app/commands.hpp"
#include "app/histogram_report.hpp"
#include "cl/cl_error.hpp"
#include "cl/program_cache.hpp"
#include "core/error.hpp"
#include "io/guides.hpp"
#include "io/image_io.hpp"
#include "pipeline/pipeline.hpp"
#include "spec/preset.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

struct RunOptionsCli {
  std::string input;
  std::string output;
  std::string type;
  bool verify = false;
  double tolerance = 1e-4;
  bool timings = false;
  bool overwrite_input = false;
  std::string write_flags;
};

// Guided stages (bilateral, atrous) get their guides, read and checked before any GPU work.
// Returns the stage whose flags --write-flags writes (the first that has flags).
GuidedStage* attach_guides(const Pipeline& pipeline, const std::string& input_path,
                           const LoadedImage& loaded, bool keep_flags) {
  GuidedStage* flagged = nullptr;
  std::map<std::string, std::shared_ptr<const Guides>> read;  // stages with equal sources share
  for (const auto& stage : pipeline.stages()) {
    auto* guided = dynamic_cast<GuidedStage*>(stage.get());
    if (!guided) continue;
    const GuideSources& s = guided->sources();
    auto& guides = read[s.normal + '\n' + s.depth + '\n' + s.albedo];
    if (!guides) guides = std::make_shared<const Guides>(load_guides(s, input_path, loaded));
    if (!guides->any_geometry())
      spdlog::info("{}: no normal or depth guides in {}; self-guided", guided->spec(), input_path);
    guided->set_guides(guides);
    guided->keep_flags(keep_flags);
    if (!flagged && guided->guides()->any_geometry()) flagged = guided;
  }
  return flagged;
}

void write_flags(GuidedStage* stage, const std::string& path) {
  const Image* flags = stage ? stage->flags() : nullptr;
  if (!flags)
    throw Error(ErrorKind::Usage,
                "--write-flags: no stage computed discontinuity flags (bilateral with normal or "
                "depth guides does)");
  const SampleType type = storable_type(path, SampleType::u8);
  write_image(path, to_pixels(*flags, pixel_type(type)), type);
  spdlog::info("wrote discontinuity flags of '{}' to {}", stage->spec(), path);
}

// -f and --preset in the order given on the command line.
std::vector<StageSpec> stage_specs(const CLI::App& run) {
  std::vector<StageSpec> specs;
  std::size_t next_filter = 0, next_preset = 0;
  const auto filters = run.get_option("--filter")->as<std::vector<std::string>>();
  const auto presets = run.get_option("--preset")->as<std::vector<std::string>>();
  for (const CLI::Option* option : run.parse_order()) {
    if (option->get_name() == "--filter" && next_filter < filters.size()) {
      specs.push_back({filters[next_filter++], ""});
    } else if (option->get_name() == "--preset" && next_preset < presets.size()) {
      for (const auto& line : load_preset(presets[next_preset++]).lines)
        specs.push_back({line.spec, line.origin});
    }
  }
  return specs;
}

void check_not_input(const std::string& input, const std::string& output, bool allowed) {
  std::error_code ec;
  if (!allowed && fs::exists(output, ec) && fs::equivalent(input, output, ec))
    throw Error(ErrorKind::CantCreate,
                output + ": refusing to overwrite the input (use --overwrite-input)");
}

void print_checks(const RunResult& result, double tolerance) {
  for (const auto& check : result.checks)
    fmt::print("verify {:<28} {} {}{}\n", check.stage, check.result.summary(),
               check.ok() ? "ok" : "MISMATCH", check.problem.empty() ? "" : ": " + check.problem);
  for (const auto& check : result.checks)
    if (!check.problem.empty())
      throw Error(ErrorKind::Mismatch, "verify: stage '" + check.stage + "': " + check.problem);
  for (const auto& check : result.checks)
    if (!check.result.ok())
      throw Error(ErrorKind::Mismatch,
                  fmt::format("verify: stage '{}' differs from the reference: {} of {} samples "
                              "above tolerance {:g} (worst at ({},{}) channel {}: {} vs {})",
                              check.stage, check.result.failures, check.result.samples, tolerance,
                              check.result.worst_x, check.result.worst_y, check.result.worst_c,
                              check.result.worst_actual, check.result.worst_expected));
}

// Device time per stage and kernel, with the bandwidth each kernel reached counting its
// minimum traffic (read once + write once); verification read-backs are listed apart.
void print_timings(const RunResult& result) {
  double total = 0, verify = 0;
  for (const auto& t : result.timings) {
    (t.stage == "verify" ? verify : total) += t.ms;
    if (t.stage == "verify") continue;
    const std::string rate = t.bytes ? fmt::format("{:8.1f} GB/s", t.bytes / t.ms * 1e-6) : "";
    fmt::print("time {:<24} {:<20} {:9.3f} ms {}\n", t.stage, t.label, t.ms, rate);
  }
  fmt::print("time {:<45} {:9.3f} ms\n", "device total", total);
  if (verify > 0) fmt::print("time {:<45} {:9.3f} ms\n", "verification read-backs", verify);
}

// Stages that measure (histogram) print what they found.
void print_results(const Pipeline& pipeline) {
  for (const auto& stage : pipeline.stages())
    if (const Histogram* h = stage->result())
      fmt::print("{}: {}", stage->spec(), histogram_summary(*h));
}

// Wall-clock phases of one run, for -v: where the seconds go (decode, device, encode).
class Phases {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }
  double total() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

int run(const RunOptionsCli& o, const CLI::App& cli, const GlobalOptions& global) {
  Phases phases;
  const Pipeline pipeline(stage_specs(cli));  // every spec checked before any file is read
  const InputRef input = parse_input_ref(o.input);
  check_not_input(input.path, o.output, o.overwrite_input);
  if (!o.write_flags.empty()) {
    check_not_input(input.path, o.write_flags, false);
    if (o.write_flags == o.output)
      throw Error(ErrorKind::Usage, "--write-flags and -o name the same file: " + o.output);
  }
  const SampleType wanted = o.type.empty() ? SampleType::f32 : parse_sample_type(o.type);

  LoadedImage loaded = read_image(input);
  GuidedStage* flagged =
      attach_guides(pipeline, input.path, loaded, o.verify || !o.write_flags.empty());
  const double read_s = phases.lap();
  const SampleType requested = o.type.empty() ? loaded.stored : wanted;
  const SampleType type = storable_type(o.output, requested);
  if (type != requested)
    spdlog::info("{}: writing {} samples (the format cannot store {})", o.output, to_string(type),
                 to_string(requested));

  PixelBuffer out;
  std::unique_ptr<Device> device = open_device(global);
  if (device) {
    try {
      spdlog::info("device: {} ({})", device->info().name, device->info().platform_name);
      for (const auto& stage : pipeline.stages())
        for (const auto& detail : stage->details()) spdlog::info("{}: {}", stage->spec(), detail);
      RunResult result = run_device(*device, pipeline, loaded.pixels, pixel_type(type),
                                    {.verify = o.verify, .tolerance = o.tolerance});
      spdlog::debug("kernel cache: {} compiled, {} loaded from disk", device->programs().compiled(),
                    device->programs().loaded_from_disk());
      const double device_s = phases.lap();
      write_image(o.output, result.pixels, type);
      if (!o.write_flags.empty()) write_flags(flagged, o.write_flags);
      spdlog::info(
          "read {:.3f} s, device {:.3f} s (open, compile or load kernels, run{}), write "
          "{:.3f} s",
          read_s, device_s, o.verify ? ", verify" : "", phases.lap());
      print_results(pipeline);
      if (o.timings) print_timings(result);
      if (o.verify) print_checks(result, o.tolerance);
      out = std::move(result.pixels);
    } catch (const ClError& e) {
      if (global.strict || global.device != "auto") throw;
      spdlog::warn("{}; running the CPU reference instead (--strict makes this an error)",
                   e.what());
      if (const auto* build = dynamic_cast<const BuildError*>(&e)) spdlog::warn("{}", build->log());
      device.reset();
    }
  }
  if (!device) {
    if (o.verify) spdlog::warn("--verify: running the reference only, nothing to compare with");
    out = run_reference(pipeline, loaded.pixels, pixel_type(type));
    const double reference_s = phases.lap();
    write_image(o.output, out, type);
    if (!o.write_flags.empty()) write_flags(flagged, o.write_flags);
    print_results(pipeline);
    spdlog::info("read {:.3f} s, reference {:.3f} s, write {:.3f} s", read_s, reference_s,
                 phases.lap());
  }
  spdlog::info("wrote {} ({}x{}, {} channels, {}) in {:.3f} s", o.output, loaded.pixels.width,
               loaded.pixels.height, out.channels, to_string(type), phases.total());
  return 0;
}

}  // namespace

std::unique_ptr<Device> open_device(const GlobalOptions& options) {
  if (options.device == "ref") return nullptr;
  try {
    return std::make_unique<Device>(select_device(options.device), default_cache_dir());
  } catch (const Error& e) {
    if (options.strict || options.device != "auto") throw;
    spdlog::warn("{}; running the CPU reference (--strict makes this an error)", e.what());
    return nullptr;
  }
}

Command add_run_command(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<RunOptionsCli>();
  CLI::App* run_app = app.add_subcommand(
      "run", "filter an image: read, run the -f stages in order on the device, write");
  run_app
      ->add_option("input", options->input,
                   "input image (PNG, EXR, TIFF, JPEG, PFM); FILE[ch,...] picks channels "
                   "by name, e.g. render.exr[ViewLayer.Combined.R,...]")
      ->required();
  run_app
      ->add_option("-o,--output", options->output,
                   "output image; format from the extension; written atomically")
      ->required();
  run_app
      ->add_option("-f,--filter",
                   "filter spec name[:key=value]... (repeatable, run in order; "
                   "see `halo filters`)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run_app
      ->add_option("--preset",
                   "preset name from `halo presets` or path to a .halo file "
                   "(repeatable, mixes with -f in order)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run_app
      ->add_option("--type", options->type,
                   "output samples u8|u16|half|float (default: as the input; the nearest "
                   "the format can store)")
      ->check(CLI::IsMember({"u8", "u16", "half", "float"}));
  run_app->add_flag("--verify", options->verify,
                    "also run the CPU reference on each stage's input; report max/mean/RMS "
                    "error, PSNR and the worst pixel; exit 1 on mismatch");
  run_app
      ->add_option("--verify-tol", options->tolerance,
                   "a sample mismatches when |gpu - ref| > tol * max(1, |ref|)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  run_app->add_option("--write-flags", options->write_flags,
                      "write the discontinuity flags of the first guided stage as a 1-channel "
                      "image: 8-bit code = 17 x bits (1 left, 2 right, 4 top, 8 bottom)");
  run_app->add_flag("--timings", options->timings,
                    "print device times of upload, each kernel and download");
  run_app->add_flag("--overwrite-input", options->overwrite_input,
                    "allow the output to replace the input file");
  return [options, run_app, &global] { return run(*options, *run_app, global); };
}

}  // namespace halo
