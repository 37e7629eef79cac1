// The subcommands of the halo tool, each registering its options on a CLI11 app.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "cl/device.hpp"

namespace halo {

// Options every subcommand shares.
struct GlobalOptions {
  std::string device = "auto";
  bool strict = false;
  bool no_cache = false;
};

// The device to run on: nullptr means the CPU reference (--device ref, or auto with no OpenCL
// device, unless --strict).
std::unique_ptr<Device> open_device(const GlobalOptions& options);
// Opens a device with the kernel cache and its launch shapes (said at -v).
std::unique_ptr<Device> make_device(const DeviceInfo& info);

using Command = std::function<int()>;

Command add_run_command(CLI::App& app, const GlobalOptions& global);
Command add_hist_command(CLI::App& app, const GlobalOptions& global);
Command add_compare_command(CLI::App& app);
Command add_devices_command(CLI::App& app);
Command add_filters_command(CLI::App& app);
Command add_presets_command(CLI::App& app);
Command add_summary_command(CLI::App& app);
Command add_tune_command(CLI::App& app, const GlobalOptions& global);

}  // namespace halo
