// halo: filters images on the GPU through OpenCL and proves the results against CPU references.
// main() owns the process: it parses the command line, runs one subcommand and maps every
// error to its documented exit code. Nothing else calls exit().
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <cerrno>
#include <csignal>

#include <CLI/CLI.hpp>

#include "app/commands.hpp"
#include "cl/cl_error.hpp"
#include "cl/program_cache.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/settings.hpp"
#include "core/temporaries.hpp"
#include "core/text.hpp"

namespace {

constexpr const char* kFooter = R"(Examples:
  halo run photo.png -f emboss -o emboss.png --verify
  halo run photo.png -f sharpen:k=0.5 -f edge:mode=sobel:gray=1 -o edges.png
  halo run a.pfm -f conv:k=2,0,0,0,-1,0,0,0,-1:offset=0.5:gray=1 -o emboss.pfm
  halo run 'render.exr[ViewLayer.Combined.R,ViewLayer.Combined.G,ViewLayer.Combined.B]' -f sharpen -o out.exr
  halo run shots/ -f gaussian:r=8 -o out/{stem}.png --mkdir -j 4
  halo run 'plates/shot.####.exr' --frames 1001-1100 -f sharpen -o out/shot.{frame}.exr --mkdir
  halo hist photo.jpg --mode luma --bins 256 --json hist.json --plot hist.png
  halo compare expected.exr actual.exr --fail 1e-4 --diff-out diff.exr
  halo filters           every filter with its parameters
  halo devices           OpenCL platforms and devices
  halo tune              measure the fastest launch shapes on this device, once

Environment: HALO_DEVICE (as --device), HALO_CACHE_DIR (kernel cache and tuned shapes,
default ~/.cache/halo), HALO_NO_CACHE=1 (compile every time), HALO_PRESET_PATH (preset
folders), HALO_WEIGHTS_PATH (folders of OIDN's .tza weights, before ../share/halo/weights),
HALO_TUNING=name=value,... (override launch shapes, see halo tune), HALO_MAX_PIXELS and
HALO_MAX_MEMORY (as the options), NO_COLOR (no colour in messages).

Exit codes: 0 ok; 1 verify mismatch or compare failure; 2 some files of a batch failed;
3 images not comparable; 64 bad usage, spec or preset; 65 bad input data; 66 input missing or
unreadable; 69 no usable OpenCL device or an OpenCL call failed; 70 internal error; 73 cannot
create output; 74 I/O error; 130 batch interrupted (Ctrl-C).)";

// NO_COLOR (no-color.org): no colour on a terminal either.
void setup_logging(int verbosity, bool quiet, bool no_color) {
  auto logger = spdlog::stderr_color_mt(
      "halo", no_color ? spdlog::color_mode::never : spdlog::color_mode::automatic);
  logger->set_pattern("halo: %^%l%$: %v");
  logger->set_level(quiet            ? spdlog::level::err
                    : verbosity >= 2 ? spdlog::level::debug
                    : verbosity == 1 ? spdlog::level::info
                                     : spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

}  // namespace

namespace {

// Standard input, output and error opened on /dev/null where the caller closed them (`2>&-`),
// before anything else opens a file: otherwise the first file halo opens (an output's
// temporary) takes descriptor 2, and the log is written into the image.
void hold_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      const int held = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (held >= 0 && held != fd) ::close(held);  // a lower one was free: not ours to keep
    }
}

}  // namespace

int main(int argc, char** argv) {
  hold_standard_descriptors();
  // A fixed threshold: glibc's default raises it to the size of each block it frees and then
  // keeps such blocks, so a streamed run's memory grew with its strips. At 1 MiB every strip
  // was mapped and unmapped, and each use paid its pages' faults again (a 5K resize on the host
  // spent 60% of its time there: 71,000 faults, 0.85 s; 16384x16384: 1.6 million, 16 s).
  // Blocks under 32 MiB now come from the arenas and are reused, which keep at most 64 MiB
  // unused at their top (5K resize: 7,800 faults, 0.30 s, peak RSS 37 -> 42 MB; 16384x16384:
  // 13,000, 3.7 s, 58 -> 63 MB).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  // Past a file size limit (ulimit -f) a write fails with EFBIG, which halo reports (exit 74,
  // temporary removed, old output kept), instead of the signal killing it mid-file.
  std::signal(SIGXFSZ, SIG_IGN);
  // Temporaries and spools go with the process on SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE.
  halo::install_temporary_cleanup();
  CLI::App app{"halo: GPU image filters through OpenCL, verified against CPU references", "halo"};
  app.footer(kFooter);
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", halo::version_text,
                       "print the version, commit, OpenCL platforms, codec libraries and the "
                       "denoise weights found, and exit");

  halo::GlobalOptions global;
  int verbosity = 0;
  bool quiet = false;
  app.add_option("--device", global.device,
                 "auto (whichever of the reference, the CPU through PoCL and a GPU is expected "
                 "to finish first: small images take the reference without starting OpenCL; "
                 "-v says why), gpu, cpu, ref (plain C++ reference, no OpenCL), an index from "
                 "`halo devices`, or part of a device name")
      ->envname("HALO_DEVICE")
      ->capture_default_str();
  app.add_flag("--strict", global.strict,
               "fail instead of degrading: exit 69 when OpenCL fails (not the reference), 65 "
               "when a file's metadata is past halo's limits (not dropped)");
  app.add_flag("--no-cache", global.no_cache, "compile kernels without the on-disk cache");
  app.add_flag("-v,--verbose", verbosity, "more detail on stderr (-vv: debug, kernel cache)");
  app.add_flag("-q,--quiet", quiet, "errors only");
  std::string max_pixels, max_memory;
  const std::string limits = "Limits (checked on each file's header, before its pixels)";
  app.add_option("--max-pixels", max_pixels,
                 "largest image read, width x height, e.g. 250M or 2G (default 1G, or "
                 "HALO_MAX_PIXELS); a file declaring more is refused (65)")
      ->group(limits);
  app.add_option("--max-memory", max_memory,
                 "host memory for pixels, e.g. 512M or 8G (default half of this machine's, or "
                 "HALO_MAX_MEMORY): sizes the strips in flight, and a batch's files (-j) "
                 "reserve what theirs hold from it, waiting while it is taken; an image that "
                 "must be held whole and needs more is refused (65)")
      ->group(limits);

  // In the order the subcommands are registered: main() finds the parsed one by position.
  const halo::Command commands[] = {
      halo::add_run_command(app, global),     halo::add_hist_command(app, global),
      halo::add_compare_command(app, global), halo::add_devices_command(app),
      halo::add_filters_command(app),         halo::add_presets_command(app),
      halo::add_summary_command(app),         halo::add_tune_command(app, global)};

  const std::vector<std::string> args = halo::with_idiff_spellings({argv, argv + argc});
  std::vector<char*> arg_pointers;
  for (const auto& arg : args) arg_pointers.push_back(const_cast<char*>(arg.c_str()));
  try {
    app.parse(argc, arg_pointers.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    halo::print_to_stderr(
        fmt::format("halo: error: {}\nRun 'halo --help' or 'halo SUBCOMMAND --help'.\n", e.what()));
    return static_cast<int>(halo::ErrorKind::Usage);
  }
  // The settings, read once: the environment's, then the options over them.
  halo::Settings settings;
  try {
    settings = halo::settings_from_environment();
  } catch (const halo::Error& e) {
    setup_logging(verbosity, quiet, false);
    spdlog::error("{}", e.what());
    return e.exit_code();
  }
  setup_logging(verbosity, quiet, settings.no_color);

  try {
    if (global.no_cache) settings.cache_dir.reset();
    if (!max_pixels.empty())
      settings.limits.max_pixels = halo::parse_pixels(max_pixels, "--max-pixels");
    if (!max_memory.empty())
      settings.limits.max_memory = halo::parse_bytes(max_memory, "--max-memory");
    settings.limits.strict = global.strict;
    halo::install_settings(std::move(settings));
    for (std::size_t i = 0; i < app.get_subcommands({}).size(); ++i)
      if (app.get_subcommands({})[i]->parsed()) return commands[i]();
    return static_cast<int>(halo::ErrorKind::Usage);
  } catch (const halo::BuildError& e) {
    spdlog::error("{}", e.what());
    halo::print_to_stderr(e.log() + "\n");
    return e.exit_code();
  } catch (const halo::Error& e) {
    spdlog::error("{}", e.what());
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    spdlog::error("out of memory");
    return static_cast<int>(halo::ErrorKind::Internal);
  } catch (const std::exception& e) {
    spdlog::error("internal error: {}", e.what());
    return static_cast<int>(halo::ErrorKind::Internal);
  }
}
