// The sequence measures of `halo compare --metrics temporal`: each pair's frames read once, in
// order (colour in display space, motion, depth and normals), the temporal error and flicker
// over consecutive frames both sequences hold, and the gates they miss.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compare/pair.hpp"
#include "compare/pairs.hpp"
#include "verify/temporal.hpp"

namespace halo {

// The sequence measures over consecutive frames (t - 1, t) that both sequences hold.
struct TemporalResult {
  std::vector<long> frames;  // t of each step
  std::vector<double> error;
  std::vector<Flicker> flicker_a, flicker_b;
  bool motion_a = false, motion_b = false;
  std::vector<std::string> failed;  // the gates missed
  double mean(const std::vector<double>& v) const {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0 : sum / double(v.size());
  }
  // Over the steps that saw any pixel in both frames (a cut sees none); NaN when none did.
  double mean_flicker(const std::vector<Flicker>& v) const {
    std::vector<double> means;
    for (const Flicker& f : v)
      if (f.pixels > 0) means.push_back(f.mean);
    return means.empty() ? std::numeric_limits<double>::quiet_NaN() : mean(means);
  }
};

struct SequenceOptions {
  std::vector<std::string> motion;                    // --motion X,Y; empty: Blender's found
  std::optional<double> fail_temporal, fail_flicker;  // the gates
};

// The measures over `pairs` (two sequences' frames, in order) compared as `results` (a pair
// that could not be compared, a missing or unreadable frame, is no step into or out of it).
TemporalResult measure_sequence(const std::vector<Pair>& pairs,
                                const std::vector<PairResult>& results,
                                const SequenceOptions& options);

}  // namespace halo
