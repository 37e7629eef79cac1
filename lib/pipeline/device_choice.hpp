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

// A start cost on record counts until this many days pass without a new measurement (then it
// is measured anew); a new measurement replaces it only when lower. A single start measured on a
// busy machine (6 s to list the platforms, seen) once sent every file under 6 s of work to the
// reference, and the reference never lists the platforms to find out otherwise. What a device
// is assumed to cost otherwise: cl/device.hpp's device_costs.
constexpr double kStartRecordDays = 7;

DeviceChoice choose_device(const Workload& work,
                           const std::optional<std::filesystem::path>& cache_dir);

// Records what opening `info` cost (the context, queues and loading its programs from the
// cache; compiles excluded, they happen once) and what listing the platforms cost, for the
// next choice: the lower of it and a fresh record, dated. Nothing without a cache folder; a
// file that cannot be written is skipped.
void record_start_cost(const std::optional<std::filesystem::path>& cache_dir,
                       const DeviceInfo& info, double start_seconds, double list_seconds);

}  // namespace halo
