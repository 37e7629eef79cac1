// The subcommands of the halo tool, each registering its options on a CLI11 app.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cl/device.hpp"

namespace halo {

// Options every subcommand shares.
struct GlobalOptions {
  std::string device = "auto";
  bool strict = false;
  bool no_cache = false;
};

// Called in a handler of a device's failure `e`: under --device auto without --strict the work
// goes on on the CPU reference, with a warning "CONTEXT: E; INSTEAD (--strict makes this an
// error)" (CONTEXT may be empty); otherwise the failure is rethrown.
void fall_back_or_rethrow(const GlobalOptions& options, const std::exception& e,
                          const std::string& context, const std::string& instead);

// Opens a device with the kernel cache and its launch shapes (said at -v).
std::unique_ptr<Device> make_device(const DeviceInfo& info);

using Command = std::function<int()>;

// `halo --version`: the version, the commit and build type, the OpenCL loader and platforms,
// the codec libraries and the denoise weights found: what a bug report needs.
std::string version_text();

Command add_run_command(CLI::App& app, const GlobalOptions& global);
Command add_hist_command(CLI::App& app, const GlobalOptions& global);
Command add_compare_command(CLI::App& app, const GlobalOptions& global);
// The command line with idiff's single-dash spellings after `compare` (-fail 1e-4, -o d.exr)
// turned into halo's, so a script written for idiff runs unchanged.
std::vector<std::string> with_idiff_spellings(std::vector<std::string> args);
Command add_devices_command(CLI::App& app);
Command add_filters_command(CLI::App& app);
Command add_presets_command(CLI::App& app);
Command add_summary_command(CLI::App& app);
Command add_tune_command(CLI::App& app, const GlobalOptions& global);

}  // namespace halo
