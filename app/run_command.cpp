// `halo run`: read images, run the filter pipeline on the device (or the reference), verify,
// write the results atomically. One file, or a batch: folders, globs, frame sequences, with
// outputs named by a template, on a pool of workers.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "app/commands.hpp"
#include "app/device_pool.hpp"
#include "app/histogram_report.hpp"
#include "batch/batch.hpp"
#include "batch/output_template.hpp"
#include "cl/cl_error.hpp"
#include "cl/program_cache.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"
#include "filters/registry.hpp"
#include "io/image_io.hpp"
#include "io/standard_streams.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/stream.hpp"
#include "run/file.hpp"
#include "spec/preset.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

struct RunOptionsCli {
  std::vector<std::string> inputs;
  std::string output;
  std::string format;  // of standard output (-o -)
  std::string type;
  bool verify = false;
  double tolerance = 1e-4;
  bool timings = false;
  bool overwrite_input = false;
  std::string write_flags;
  int strip_rows = 0;  // 0: chosen from the budget
  WriteOptions encoding;
  bool strip_metadata = false;
  bool auto_orient = false;
  bool drop_layers = false;          // --drop-layers
  bool linear = false;               // --linear
  bool straight_alpha = false;       // --straight-alpha
  std::string background = "0";      // --background
  std::vector<std::string> attribs;  // --attrib NAME=VALUE
  // Batch
  bool recursive = false;
  std::string frames;
  bool mkdir = false;
  int jobs = 0;  // 0: the number of cores
  bool progress = false;
  bool fail_fast = false;
  bool skip_existing = false;
  std::string summary;
  std::string shard;
};

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

// The verify lines of one file, and the error its first mismatch gives (none when all agree).
std::string checks_report(const StreamResult& result) {
  std::string text;
  for (const auto& check : result.checks)
    text += fmt::format("verify {:<28} {} {}{}\n", check.stage, check.result.summary(),
                        check.ok() ? "ok" : "MISMATCH",
                        check.problem.empty() ? "" : ": " + check.problem);
  return text;
}

std::optional<Error> first_mismatch(const StreamResult& result) {
  for (const auto& check : result.checks)
    if (!check.problem.empty())
      return Error(ErrorKind::Mismatch, "verify: stage '" + check.stage + "': " + check.problem);
  for (const auto& check : result.checks)
    if (!check.result.ok())
      return Error(
          ErrorKind::Mismatch,
          fmt::format("verify: stage '{}' differs from the reference: {} of {} samples "
                      "above tolerance {:g} (worst at ({},{}) channel {}: {} vs {})",
                      check.stage, check.result.failures, check.result.samples, check.tolerance,
                      check.result.worst_x, check.result.worst_y, check.result.worst_c,
                      check.result.worst_actual, check.result.worst_expected));
  return std::nullopt;
}

// Wall-clock time of decoding, device work and encoding, each summed over the strips, against
// the whole run's: with overlap they add up to more than the wall time.
std::string phases_report(const StreamResult& result, const std::string& device) {
  const StreamPhases& p = result.phases;
  const double sum = p.read_s + p.device_s + p.write_s;
  return fmt::format(
      "time decode {:.3f} s, {} {:.3f} s, encode {:.3f} s over {} strip{}; wall {:.3f} s "
      "({:.2f}x overlap)\n",
      p.read_s, device, p.device_s, p.write_s, result.strips, result.strips == 1 ? "" : "s",
      p.wall_s, p.wall_s > 0 ? sum / p.wall_s : 0.0);
}

// Device time per stage and kernel (summed over strips), with the bandwidth each kernel
// reached counting its minimum traffic (read once + write once); verification read-backs are
// listed apart. On CPU devices the conversions are host code, labelled "(host)".
std::string timings_report(const StreamResult& result) {
  std::string text;
  double total = 0, verify = 0;
  for (const auto& t : result.timings) {
    (t.stage == "verify" ? verify : total) += t.ms;
    if (t.stage == "verify") continue;
    const std::string rate = t.bytes ? fmt::format("{:8.1f} GB/s", t.bytes / t.ms * 1e-6) : "";
    text += fmt::format("time {:<24} {:<26} {:9.3f} ms {}\n", t.stage, t.label, t.ms, rate);
  }
  text += fmt::format("time {:<51} {:9.3f} ms\n", "device total", total);
  if (verify > 0)
    text += fmt::format("time {:<51} {:9.3f} ms\n", "verification read-backs", verify);
  return text;
}

// Stages that measure report what they found: a histogram's summary, any other measurement's
// own text.
std::string results_report(const Pipeline& pipeline, const std::vector<StageRun>& runs) {
  std::string text;
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (const SideOutput& out : runs[i].side_outputs()) {
      const std::string found = out.histogram ? histogram_summary(*out.histogram) : out.summary;
      if (!found.empty()) text += fmt::format("{}: {}", pipeline.stages()[i]->spec(), found);
    }
  return text;
}

// Wall-clock laps of one file, for -v and the summary: where the seconds go.
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

// What every file of a run shares.
struct RunContext {
  const RunOptionsCli& options;
  FileRunOptions file;  // what each file's output takes from the command line
  const GlobalOptions& global;
  // Parsed once: stages are plans, shared by every file and thread; the forms for images with
  // alpha add associated alpha around the filters.
  RunPipelines pipelines;
  DevicePool& devices;
};

// Filters one file with the device (falling back to the reference where allowed) and writes
// the result. Throws halo::Error; the caller decides whether that ends the run.
void filter_file(const FileJob& job, const RunContext& run, FileOutcome& outcome) {
  const RunOptionsCli& o = run.options;
  Phases phases;
  const FileNames names{job.input.path, job.input.channels, job.output, !job.flags_output.empty()};
  // Headers, channels and guides are checked before any device work.
  FilePlan plan(names, run.pipelines, run.file);
  const Pipeline& pipeline = plan.pipeline();
  // Once a batch: what happens to alpha a format cannot store.
  static std::once_flag flattening;
  if (plan.flattens())
    std::call_once(flattening, [&] {
      spdlog::warn(
          "{}: the format cannot store alpha; the colour is put over a background of "
          "{} (--background), here and in every such file of this run",
          names.output, o.background);
    });
  std::optional<StreamResult> result;
  // Without filters there is nothing for a device to do: samples are converted on the host.
  DevicePool::Lease lease = pipeline.stages().empty() ? DevicePool::Lease(nullptr, nullptr)
                                                      : run.devices.acquire(plan.samples());
  if (Device* device = lease.device()) {
    try {
      spdlog::info("{}: device {} ({})", job.input.path, device->info().name,
                   device->info().platform_name);
      result = run_file(names, plan, run.file, device);
      outcome.device = device->info().name;
      spdlog::debug("kernel cache: {} compiled, {} loaded from disk", device->programs().compiled(),
                    device->programs().loaded_from_disk());
      run.devices.record(false, "");
    } catch (const ClError& e) {
      run.devices.record(true, e.what());
      fall_back_or_rethrow(run.global, e, job.input.path, "running the CPU reference instead");
      if (const auto* build = dynamic_cast<const BuildError*>(&e)) spdlog::warn("{}", build->log());
    }
  }
  lease.give_back();
  if (!result) {
    if (o.verify && !pipeline.stages().empty())
      spdlog::warn("--verify: running the reference only, nothing to compare with");
    result = run_file(names, plan, run.file, nullptr);
    outcome.device = pipeline.stages().empty() ? "host" : "reference";
  }
  if (!job.flags_output.empty()) write_flags(pipeline, result->runs, job.flags_output);
  outcome.read_s = result->phases.read_s;
  outcome.device_s = result->phases.device_s;
  outcome.write_s = result->phases.write_s;
  outcome.total_s = phases.total();
  spdlog::info("{}: {}", job.input.path, phases_report(*result, outcome.device));
  outcome.report = results_report(pipeline, result->runs);
  if (o.timings) {
    outcome.report += phases_report(*result, outcome.device);
    if (!result->timings.empty()) outcome.report += timings_report(*result);
  }
  if (o.verify) outcome.report += checks_report(*result);
  if (auto mismatch = first_mismatch(*result)) throw *mismatch;
  outcome.status = FileStatus::ok;
}

// How outputs are encoded and published: --skip-existing, like --no-clobber, publishes only
// where no file exists at that moment (a no-replace rename), so concurrent runs over one
// folder never replace each other's outputs; the check before a file is read only saves its
// work.
WriteOptions publishing(const RunOptionsCli& o) {
  WriteOptions encoding = o.encoding;
  encoding.no_clobber = o.encoding.no_clobber || o.skip_existing;
  return encoding;
}

FileOutcome process_file(const FileJob& job, const RunContext& run) {
  FileOutcome outcome;
  std::error_code ec;
  if (fs::exists(job.output, ec) &&
      (run.options.skip_existing || run.options.encoding.no_clobber)) {
    const bool skip = run.options.skip_existing;
    outcome.status = skip ? FileStatus::skipped : FileStatus::failed;
    outcome.error = job.output + (skip ? ": exists; skipped (--skip-existing)"
                                       : ": exists; not overwritten (--no-clobber)");
    outcome.exit_code = skip ? 0 : int(ErrorKind::CantCreate);
    if (!skip)
      outcome.exception = std::make_exception_ptr(Error(ErrorKind::CantCreate, outcome.error));
    return outcome;
  }
  try {
    filter_file(job, run, outcome);
  } catch (const OutputExists& e) {  // written meanwhile by another run: never replaced
    const bool skip = run.options.skip_existing;
    outcome = FileOutcome{};
    outcome.status = skip ? FileStatus::skipped : FileStatus::failed;
    outcome.error = job.output + (skip ? ": exists (written meanwhile); skipped (--skip-existing)"
                                       : ": exists (written meanwhile); not overwritten "
                                         "(--no-clobber)");
    outcome.exit_code = skip ? 0 : e.exit_code();
    if (!skip) outcome.exception = std::make_exception_ptr(Error(e.kind(), outcome.error));
  } catch (const Error& e) {
    outcome.status = e.kind() == ErrorKind::Mismatch ? FileStatus::mismatch : FileStatus::failed;
    outcome.error = e.what();
    outcome.exit_code = e.exit_code();
    outcome.exception = std::current_exception();
  } catch (const std::exception& e) {
    outcome.status = FileStatus::failed;
    outcome.error = std::string("internal error: ") + e.what();
    outcome.exit_code = int(ErrorKind::Internal);
    outcome.exception = std::current_exception();
  }
  return outcome;
}

// Outputs named from the template, checked before any file is read: one output per input,
// no output twice, none over an input (unless --overwrite-input, and then only its own).
std::vector<FileJob> plan_jobs(const std::vector<InputFile>& files, const RunOptionsCli& o) {
  const OutputTemplate output(o.output);
  const std::optional<OutputTemplate> flags =
      o.write_flags.empty() ? std::nullopt : std::optional<OutputTemplate>(o.write_flags);
  if (files.size() > 1 && !output.has_fields())
    throw Error(ErrorKind::Usage,
                fmt::format("-o {} names one file but there are {} inputs; use a template such "
                            "as out/{{stem}}.png (see `halo run --help`)",
                            o.output, files.size()));
  if (files.size() > 1 && flags && !flags->has_fields())
    throw Error(ErrorKind::Usage, "--write-flags " + o.write_flags +
                                      " names one file for many inputs; use a template");
  std::map<std::string, std::string> input_of;  // canonical input -> as given
  for (const auto& f : files) input_of.emplace(same_file_key(f.path), f.path);
  std::map<std::string, std::string> written;  // canonical output -> the input that writes it
  std::vector<FileJob> jobs;
  const auto claim = [&](const std::string& out, const InputFile& in, const char* what) {
    const std::string key = same_file_key(out);
    if (auto [it, fresh] = written.emplace(key, in.path); !fresh)
      throw Error(ErrorKind::Usage,
                  fmt::format("{} {} would be written twice (for {} and {}); add {{dir}}, "
                              "{{reldir}} or {{ext}} to the template",
                              what, out, it->second, in.path));
    const auto input = input_of.find(key);
    const bool own = input != input_of.end() && input->second == in.path;
    if (input != input_of.end() && !(own && o.overwrite_input && what == std::string("output")))
      throw Error(ErrorKind::CantCreate, out + ": refusing to overwrite the input " +
                                             input->second +
                                             (own ? " (use --overwrite-input)" : ""));
  };
  for (const auto& in : files) {
    FileJob job{in, output.expand(in), flags ? flags->expand(in) : ""};
    claim(job.output, in, "output");
    if (!job.flags_output.empty()) claim(job.flags_output, in, "--write-flags");
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// Output folders exist before any work, or are made with --mkdir.
void prepare_folders(const std::vector<FileJob>& jobs, bool make) {
  std::set<fs::path> folders;
  for (const auto& job : jobs)
    for (const auto& path : {job.output, job.flags_output})
      if (!path.empty() && fs::path(path).has_parent_path())
        folders.insert(fs::path(path).parent_path());
  for (const auto& folder : folders) {
    std::error_code ec;
    if (fs::is_directory(folder, ec)) continue;
    if (!make)
      throw Error(ErrorKind::CantCreate,
                  folder.string() + ": output folder does not exist (--mkdir creates it)");
    fs::create_directories(folder, ec);
    if (ec)
      throw Error(ErrorKind::CantCreate,
                  folder.string() + ": cannot create the output folder: " + ec.message());
  }
}

int default_jobs() {
  return std::max(1u, std::thread::hardware_concurrency());
}

// Standard input and output stand for one file each: `-` is the only input, and an output on
// standard output takes a single input.
void check_standard_streams(const RunOptionsCli& o, bool to_stdout) {
  const auto from_stdin = std::count_if(o.inputs.begin(), o.inputs.end(), is_standard_input);
  if (from_stdin > 0 && o.inputs.size() > 1)
    throw Error(ErrorKind::Usage, "'-' (standard input) must be the only input");
  if (to_stdout && from_stdin == 0 && o.inputs.size() > 1)
    throw Error(ErrorKind::Usage, "-o " + o.output + " (standard output) takes one input, not " +
                                      std::to_string(o.inputs.size()));
  if (!o.write_flags.empty() &&
      (is_standard_output(o.write_flags) || o.write_flags.ends_with(":-")))
    throw Error(ErrorKind::Usage, "--write-flags cannot go to standard output; name a file");
}

int run(const RunOptionsCli& given, const CLI::App& cli, const GlobalOptions& global) {
  const std::vector<StageSpec> user_specs = stage_specs(cli);
  Pipeline{user_specs};  // the user's specs checked first, their errors naming preset lines
  const ColourChoices colour{.linear = given.linear, .straight_alpha = given.straight_alpha};
  const std::vector<StageSpec> specs = with_colour_stages(user_specs, colour, AlphaForm::none);
  const Pipeline pipeline(specs);  // every spec checked before any file is read
  const Pipeline straight_alpha(with_colour_stages(user_specs, colour, AlphaForm::straight));
  const Pipeline associated_alpha(with_colour_stages(user_specs, colour, AlphaForm::associated));
  const std::optional<std::string> stdout_format =
      standard_output_format(given.output, given.format);
  check_standard_streams(given, stdout_format.has_value());
  RunOptionsCli o = given;  // with standard input and output replaced by their files
  std::optional<StandardOutput> stdout_file;
  if (stdout_format) o.output = stdout_file.emplace(*stdout_format).path();
  std::optional<StandardInput> stdin_file;
  if (o.inputs.size() == 1 && is_standard_input(o.inputs.front()))
    o.inputs.front() = stdin_file.emplace().path();
  const InputList inputs = expand_inputs(o.inputs, {o.recursive, o.frames});
  const bool sharded = !o.shard.empty();
  const std::vector<InputFile> files =
      sharded ? take_shard(inputs.files, parse_shard(o.shard)) : inputs.files;
  const std::vector<FileJob> jobs = plan_jobs(files, o);
  if (!o.write_flags.empty() && o.write_flags == o.output)
    throw Error(ErrorKind::Usage, "--write-flags and -o name the same file: " + o.output);
  {
    std::vector<std::string> read;
    for (const auto& job : jobs) read.push_back(job.input.path);
    refuse_clobbering({{"--summary", o.summary}}, read);
    // -o over its input has its own rule (--overwrite-input); not over the other outputs:
    // the summary is no image a template names (--summary out/a.png beside -o out/{stem}.png).
    std::vector<WrittenFile> written{{"--summary", o.summary}};
    for (const auto& job : jobs)
      written.insert(written.end(), {{"-o", job.output}, {"--write-flags", job.flags_output}});
    refuse_clobbering(written, {});
  }
  prepare_folders(jobs, o.mkdir);
  if (jobs.empty()) {
    spdlog::warn("--shard {}: no inputs in this shard ({} in all)", o.shard, inputs.files.size());
    return 0;
  }

  const int workers = std::min<int>(o.jobs > 0 ? o.jobs : default_jobs(), int(jobs.size()));
  set_files_at_once(workers);  // each file's strips and whole images take 1/workers
  const bool single = inputs.single && !sharded;
  // A worker holds its device slot for the whole file (it streams: decode, device, encode at
  // once), so every worker has its own queue. Strips stay in ordinary memory: a strip of a
  // few MiB crosses the bus in under a millisecond either way, while page-locked blocks cost
  // milliseconds each to make. A run without filters opens no device (OpenCL's start costs
  // time and memory).
  GlobalOptions device_options = global;
  if (pipeline.stages().empty()) device_options.device = "ref";
  DevicePool devices(device_options, workers);
  devices.plan(
      {.per_sample = pipeline.cost(), .files = int(jobs.size()), .needs_device = o.verify});
  std::vector<std::string> spec_texts;
  for (const auto& spec : specs) spec_texts.push_back(spec.text);
  for (const auto& text : o.attribs) parse_attrib(text);  // checked before any file is read
  make_stage(implied::flatten(o.background));             // --background, likewise
  const RunContext context{
      o,
      {.specs = spec_texts,
       .software = "halo " HALO_VERSION,
       .strip_metadata = o.strip_metadata,
       .attribs = o.attribs,
       .auto_orient = o.auto_orient,
       .drop_layers = o.drop_layers,
       .background = o.background,
       .type = o.type.empty() ? std::nullopt : std::optional(parse_sample_type(o.type)),
       .stream = {.strip_rows = o.strip_rows, .verify = o.verify, .tolerance = o.tolerance},
       .encoding = publishing(o),
       .workers = workers},
      global,
      {pipeline, straight_alpha, associated_alpha},
      devices};

  if (!single && !pipeline.stages().empty()) devices.open_now();
  BatchSettings settings;
  settings.jobs = workers;
  settings.fail_fast = o.fail_fast;
  settings.summary = o.summary;
  settings.specs = spec_texts;
  if (single) {  // one file: its own error and exit code, output as is
    const auto start = std::chrono::steady_clock::now();
    FileOutcome outcome = process_file(jobs.front(), context);
    if (outcome.status == FileStatus::skipped) spdlog::info("{}", outcome.error);  // as a batch
    // A committed output goes out even when --verify found a mismatch, as a file would stay.
    std::error_code ec;
    if (stdout_file && fs::exists(stdout_file->path(), ec)) stdout_file->send();
    fmt::print(is_standard_output(o.summary) || stdout_file ? stderr : stdout, "{}",
               outcome.report);
    if (!o.summary.empty()) {
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      write_batch_summary(o.summary, jobs, {outcome}, settings, took.count(), outcome.exit_code);
    }
    if (outcome.exception && stdin_file) try {
        std::rethrow_exception(outcome.exception);
      } catch (const Error& e) {
        throw Error(e.kind(), stdin_file->named(e.what()));
      }
    if (outcome.exception) std::rethrow_exception(outcome.exception);
    return 0;
  }
  settings.progress = o.progress ? (::isatty(2) ? Progress::Mode::live : Progress::Mode::lines)
                      : ::isatty(2) && spdlog::get_level() == spdlog::level::warn
                          ? Progress::Mode::live
                          : Progress::Mode::off;
  spdlog::info("{} files on {} workers", jobs.size(), workers);
  return run_batch(jobs, settings,
                   [&](const FileJob& job, int) { return process_file(job, context); });
}

}  // namespace

void fall_back_or_rethrow(const GlobalOptions& options, const std::exception& e,
                          const std::string& context, const std::string& instead) {
  if (options.strict || options.device != "auto") throw;
  spdlog::warn("{}{}; {} (--strict makes this an error)", context.empty() ? "" : context + ": ",
               e.what(), instead);
}

Command add_run_command(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<RunOptionsCli>();
  CLI::App* run_app = app.add_subcommand(
      "run",
      "filter images: decode, run the -f stages in order on the device, encode, all at once "
      "in strips (memory does not grow with the image; results equal the whole image's); one "
      "file or a batch (folders, globs, frame sequences) with outputs named by a template");
  run_app
      ->add_option(
          "inputs", options->inputs,
          "input images (PNG, EXR, TIFF, JPEG, PFM, ...): files; - for standard input (the format "
          "from its content); folders (their images, "
          "sorted; --recursive for subfolders); globs ('shots/*.png', quoted so halo "
          "expands them); frame sequences shot.####.exr or shot.%04d.exr (the frames "
          "that exist, or --frames). FILE[ch,...] picks channels by name, e.g. "
          "'render.exr[ViewLayer.Combined.R,...]' (quoted: brackets are a shell glob)")
      ->required();
  run_app
      ->add_option("-o,--output", options->output,
                   "output image, or for many inputs a template: {stem} {ext} {name} {frame} "
                   "{dir} {reldir} (folder below a folder input), e.g. out/{stem}.exr or "
                   "out/{reldir}/{stem}{ext}; the format comes from the extension; written "
                   "atomically. FMT:- (png:-, exr:-, ...) or - with --format writes standard "
                   "output, once the image is complete")
      ->required();
  run_app->add_option("--format", options->format,
                      "format of standard output for -o -: png, jpg, pfm, exr, tif, ...");
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
                   "output samples u8|u16|half|float (default: as the input, an EXR's each "
                   "channel as it is, half beside float; the nearest the format can store)")
      ->check(CLI::IsMember({"u8", "u16", "half", "float"}));
  run_app->add_flag("--verify", options->verify,
                    "also run the CPU reference on each stage's input; report max/mean/RMS "
                    "error, PSNR and the worst pixel; exit 1 on mismatch (in a batch: every "
                    "file is checked and reported)");
  run_app
      ->add_option("--verify-tol", options->tolerance,
                   "a sample mismatches when |gpu - ref| > tol * max(1, |ref|)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  run_app->add_option("--write-flags", options->write_flags,
                      "write the discontinuity flags of the first guided stage as a 1-channel "
                      "image: 8-bit code = 17 x bits (1 left, 2 right, 4 top, 8 bottom); a "
                      "template like -o for many inputs");
  run_app->add_flag("--timings", options->timings,
                    "print decode/device/encode time (summed over strips, and how much they "
                    "overlapped) and device times of upload, each kernel and download");
  const std::string output = "Output encoding";
  run_app
      ->add_option("--compression", options->encoding.compression,
                   "PNG: zip:0..9 or 0..9 (default 6, compressed on all cores); EXR: none, rle, "
                   "zips, zip, piz, pxr24, b44, b44a, dwaa, dwab (default: the input EXR's, else "
                   "zip; zip:N and dwaa:N set a level; chunks on all cores); TIFF: none, lzw, "
                   "zip, packbits")
      ->group(output);
  run_app
      ->add_option("--png-filter", options->encoding.png_filter,
                   "PNG row filter: none (default, as vips; fast), sub, up, average, paeth, "
                   "adaptive (libpng's choice per row: a photo 6% smaller, 2.4x the time)")
      ->check(CLI::IsMember({"none", "sub", "up", "average", "paeth", "adaptive"}))
      ->group(output);
  run_app->add_option("--quality", options->encoding.quality, "JPEG quality 1..100 (default 95)")
      ->check(CLI::Range(1, 100))
      ->group(output);
  run_app
      ->add_flag("--drop-layers", options->drop_layers,
                 "write only the filtered channels; by default an EXR output keeps every other "
                 "channel of the input (depth, normals, AOVs of a multilayer EXR) under its "
                 "own name, with the filtered ones in their places")
      ->group("Output encoding");
  const std::string colour = "Colour and alpha";
  run_app
      ->add_flag("--linear", options->linear,
                 "filter in linear light: decode the sRGB curve of 8/16-bit inputs before the "
                 "filters and encode it after (float inputs are linear already); a blur of "
                 "sRGB data otherwise darkens edges")
      ->group(colour);
  run_app
      ->add_flag("--straight-alpha", options->straight_alpha,
                 "filter the stored colour of 8/16-bit images with alpha; by default colour "
                 "is premultiplied by alpha around the filters that mix neighbours and alpha "
                 "is filtered with it, so transparent pixels lend no colour (no dark or "
                 "coloured fringes); float images (EXR) hold premultiplied colour already, "
                 "and their alpha is filtered with it as stored")
      ->group(colour);
  run_app
      ->add_option("--background", options->background,
                   "for formats without alpha (JPEG): the colour is put over this background "
                   "and alpha dropped (flatten): one value, or one per colour channel, e.g. "
                   "1 for white; default 0 (black, as vips and sharp)")
      ->group(colour);
  const std::string metadata = "Metadata";
  run_app
      ->add_flag("--auto-orient", options->auto_orient,
                 "turn and mirror each image as its EXIF Orientation says, and write "
                 "Orientation 1 (off by default, as in oiiotool, vips and ImageMagick)")
      ->group(metadata);
  run_app
      ->add_flag("--strip-metadata", options->strip_metadata,
                 "write no metadata of the input (by default its text, EXIF, XMP, IPTC, ICC "
                 "profile and EXR/TIFF header attributes are carried to the output, as far as "
                 "the output format holds them)")
      ->group(metadata);
  run_app
      ->add_option("--attrib", options->attribs,
                   "set a text attribute of the output, NAME=VALUE (repeatable), e.g. "
                   "--attrib Artist='A. Name' --attrib Copyright='(c) 2026'; halo also records "
                   "Software and ImageHistory")
      ->group(metadata);
  const std::string memory = "Memory";
  run_app
      ->add_option("--strip-rows", options->strip_rows,
                   "output rows per strip instead of the size --max-memory and the device choose "
                   "(for tests and tuning)")
      ->check(CLI::Range(1, 1 << 30).description(""))
      ->group(memory);
  run_app->add_flag("--overwrite-input", options->overwrite_input,
                    "allow an output to replace its own input file");

  const std::string batch = "Batch";
  run_app->add_flag("-r,--recursive", options->recursive, "folder inputs include their subfolders")
      ->group(batch);
  run_app
      ->add_option("--frames", options->frames,
                   "frames of sequence inputs: 1-100, 1-100x5 (every 5th), 1,4,9-12; missing "
                   "ones are reported as failed files, more than 10,000 of them refused (66)")
      ->group(batch);
  run_app->add_flag("--mkdir", options->mkdir, "create missing output folders")->group(batch);
  run_app
      ->add_option("-j,--jobs", options->jobs,
                   "files streamed at once, each on a device queue of its own (default: the "
                   "number of cores)")
      ->check(CLI::Range(1, 1 << 30).description(""))
      ->group(batch);
  run_app
      ->add_flag("--progress", options->progress,
                 "show progress even when stderr is not a terminal (one line a second); on a "
                 "terminal it is shown unless -v or -q")
      ->group(batch);
  run_app
      ->add_flag("--fail-fast", options->fail_fast,
                 "stop at the first failed or mismatched file (files in flight finish)")
      ->group(batch);
  run_app
      ->add_flag("--skip-existing", options->skip_existing,
                 "leave outputs that already exist and skip their inputs (finish an "
                 "interrupted run)")
      ->group(batch);
  run_app
      ->add_flag("--no-clobber", options->encoding.no_clobber,
                 "never replace an existing output: such a file fails (exit 73 alone, 2 in a "
                 "batch)")
      ->group(batch);
  run_app
      ->add_option("--summary", options->summary,
                   "write a JSON report: per file input, output, status (ok, skipped, failed, "
                   "mismatch, not_run), error, device and timings; totals")
      ->group(batch);
  run_app
      ->add_option("--shard", options->shard,
                   "K/N: only every N-th input starting at the K-th (1-based) of the sorted "
                   "list; N jobs with K=1..N cover every input once")
      ->group(batch);
  run_app->footer(
      R"(A batch (more than one input, a folder, glob or sequence) goes on past failed files,
reports each on stderr, and exits 0 when all were written or skipped, 1 when some only
mismatched --verify, 2 when any failed, 130 when interrupted (Ctrl-C lets files in flight
finish; run again with --skip-existing). A single file keeps its own exit code.
Examples:
  halo run shots/ -f gaussian:r=8 -o out/{stem}.png --mkdir
  halo run 'plates/shot.####.exr' --frames 1001-1100 -f sharpen -o out/shot.{frame}.exr --mkdir
  halo run renders/ -r -f box:r=2 -o out/{reldir}/{stem}.exr --mkdir --skip-existing
  halo run frames/ -f edge -o edges/{stem}.png --mkdir --shard 3/8 --summary shard3.json
  curl -s https://example.com/a.jpg | halo run - -f sharpen -o png:- | display)");
  return [options, run_app, &global] { return run(*options, *run_app, global); };
}

}  // namespace halo
