// halo tune: times candidate launch shapes of each kernel family on the current device (in the
// manner of CLBlast's tuners), keeps only candidates whose output equals the CPU reference, and
// stores the fastest in the cache folder, where Device picks them up (cl/tuning.hpp).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cl/device.hpp"

namespace halo {

// The families halo tune knows, by the filter that exercises them: gaussian (the separable
// passes, or the CPU vector kernels), conv, box, histogram.
const std::vector<std::string>& tune_families();

struct TuneOptions {
  int width = 0, height = 0;          // timing image; 0: 7680x4320 on GPUs, 1920x1080 on CPUs
  int runs = 10;                      // timed runs per candidate (median), after 2 warm-up runs
  std::vector<std::string> families;  // empty: all
};

struct TuneCandidate {
  std::string settings;  // the family's knobs, "name=value,..."
  double ms = 0;         // median device time of the family's work
  std::string status;    // "" when its output equals the reference, else why it was left out
};

struct TuneFamily {
  std::string name;
  std::vector<std::string> work;      // what is timed: filter specs, histograms
  double start_ms = 0, tuned_ms = 0;  // timed again, alternately, after the search
  std::vector<TuneCandidate> candidates;
  std::string note;
};

struct TuneResult {
  Tuning start, tuned;
  std::string start_source;
  int width = 0, height = 0, runs = 0;
  std::vector<TuneFamily> families;
  int mismatches = 0;  // candidates whose output differed from the reference: a kernel bug
};

// Tunes one knob at a time (each knob's values with the others at their best so far), family
// by family; `progress` hears each family as it finishes. Leaves the device on the tuned shapes.
TuneResult tune(Device& device, const TuneOptions& options,
                const std::function<void(const TuneFamily&)>& progress);

// Writes the result for this device as cl/tuning.hpp's tuned_file (atomically; folders made).
void store_tuning(const std::filesystem::path& file, const DeviceInfo& device,
                  const TuneResult& result);

}  // namespace halo
