// --device auto: the CPU reference, an OpenCL CPU device or a GPU, whichever is expected to
// finish the work first. Decided before any device starts, from the chain's cost per sample
// (StageTraits::cost), the work's size, this machine's cores and what starting each device cost
// the last time (measured by the runs themselves and cached beside the tuned launch shapes).
// When the reference's estimate is below the cheapest start on record, no OpenCL platform is
// even loaded: a thumbnail costs milliseconds and megabytes, not a driver's start.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "cl/device.hpp"
#include "filters/filter.hpp"

namespace halo {

struct Workload {
  StageCost per_sample;       // the chain's, summed over its stages
  double samples = 0;         // colour samples (pixels x colour channels) of one file
  int files = 1;              // a batch starts the device once for all its files
  int cores = 1;              // this machine's, shared by the reference's lanes and PoCL's threads
  bool needs_device = false;  // --verify: the reference alone compares nothing
};

struct DeviceChoice {
  std::optional<DeviceInfo> device;  // empty: the CPU reference
  std::string reason;                // the estimates, for -v
  double list_seconds = 0;           // listing the platforms cost this time (0: not listed)
};

// What starting a device costs when none was measured yet (seconds): NVIDIA's OpenCL takes
// 0.2-0.4 s to create a context on an H100 machine, PoCL 0.03-0.05 s on the 2-core one with
// its kernels cached.
constexpr double kGpuStartSeconds = 0.3;
constexpr double kCpuDeviceStartSeconds = 0.05;
// A start cost on record counts until this many days pass without a new measurement (then it
// is measured anew); a new measurement replaces it only when lower. A single start measured on a
// busy machine (6 s to list the platforms, seen) once sent every file under 6 s of work to the
// reference, and the reference never lists the platforms to find out otherwise.
constexpr double kStartRecordDays = 7;
// A GPU's kernels as this many CPU cores (StageCost::device_ns): an H100 ran gaussian r=2 at
// 1800 and the denoise network at 740 cores' worth of PoCL. Transfers: ns a sample, both ways.
constexpr double kGpuCores = 1000;
constexpr double kGpuTransferNs = 0.2;
// What an OpenCL runtime on the CPU costs a run beyond the start measured (opening it, loading
// programs) and its listing: its threads' start and unloading it at exit, added to the start
// recorded. PoCL, 2 cores, 2026-11-28: a 512x512 gaussian took 0.16 s on it against the
// reference's 0.04 s, where listing and start measured 0.072 s.
constexpr double kCpuRuntimeSeconds = 0.05;

DeviceChoice choose_device(const Workload& work,
                           const std::optional<std::filesystem::path>& cache_dir);

// Records what opening `info` cost (the context, queues and loading its programs from the
// cache; compiles excluded, they happen once) and what listing the platforms cost, for the
// next choice: the lower of it and a fresh record, dated. Nothing without a cache folder; a
// file that cannot be written is skipped.
void record_start_cost(const std::optional<std::filesystem::path>& cache_dir,
                       const DeviceInfo& info, double start_seconds, double list_seconds);

}  // namespace halo
