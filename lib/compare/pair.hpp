// One pair of `halo compare`: its images read (the channels chosen, b's in a's order), compared
// idiff's way, with SSIM and FLIP on a device or the reference (and with --verify on both),
// the verdict and exit code, and the difference image or FLIP's maps written.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cl/device.hpp"
#include "compare/pairs.hpp"
#include "verify/compare.hpp"
#include "verify/flip.hpp"
#include "verify/ssim.hpp"

namespace halo {

// What the comparison of a pair reads of the command line.
struct ComparisonOptions {
  Thresholds thresholds;
  float diff_scale = 1.0f;
  // When the difference image is written: halo's --diff-out on failure; idiff's -o always, or
  // with -od when the images differ at all, and signed unless -abs.
  enum class DiffWhen { failure, always, differ } diff_when = DiffWhen::failure;
  bool diff_signed = false;
  bool perceptual = false;           // -p, --idiff-perceptual
  bool idiff_all = false;            // -a: every subimage and MIP level, each a pair of its own
  std::string ch;                    // --ch: channel names to compare; empty: every channel
  bool idiff_exit = false;           // --idiff-exit-codes
  std::vector<std::string> metrics;  // --metrics: ssim, flip
  double ssim_range = 1;             // --ssim-range
  std::optional<double> fail_ssim;   // --fail-ssim
  std::optional<double> fail_flip;   // --fail-flip
  FlipOptions flip;                  // --flip-ppd, --flip-start, --flip-stop
  std::string flip_mode = "auto";    // --flip-mode: auto (HDR for float files), ldr, hdr
  bool idiff_rule = true;            // idiff's thresholds decide (not only the metrics' own)
  bool verify = false;               // --verify: FLIP and SSIM on the device and on the reference
  // A metric's device failed (`e`): returns to go on on the CPU (--device auto), else
  // rethrows; unset, the failure is rethrown.
  std::function<void(const std::exception& e, const std::string& metric)> device_failed;

  bool wants(const std::string& metric) const {
    for (const auto& m : metrics)
      if (m == metric) return true;
    return false;
  }
};

struct PairResult {
  std::string verdict;  // PASS, WARNING, FAILURE, NOT_COMPARABLE
  std::string error;    // why it could not be compared
  int exit_code = 0;
  ImageDiff diff;
  std::optional<std::pair<int, int>> subimages;  // when either file has several
  std::optional<Ssim> ssim;
  std::optional<std::size_t> perceptual_failures;  // idiff's -p
  std::vector<std::string> flip_channels;          // what FLIP compared, when not every channel
  std::optional<Flip> flip;
  std::vector<std::string> failed_metrics;  // "SSIM 0.912 below --fail-ssim 0.95"
  std::string metrics_device;               // the device the metrics ran on; empty: the CPU
  std::vector<std::string> verify;          // --verify's lines; none without it
  bool verify_failed = false;
  std::vector<std::string> channel_names;
  bool diff_written = false;
  double seconds = 0;
};

// Channel c's name for reports, or its number when the file named none.
std::string channel_name(const std::vector<std::string>& names, int c);
// "a,b,c" as its names (empty ones left out).
std::vector<std::string> split_names(const std::string& list);

// Compares `pair` (its metrics on `device` when given); never throws for the pair's files:
// what cannot be compared is a NOT_COMPARABLE result with its reason and exit code.
PairResult compare_pair(const Pair& pair, const ComparisonOptions& options, Device* device);

// The verdicts of a run's pairs and its exit code: one pair's own; with idiff's codes the
// worst (4 unreadable, then 2 failed, then 1 warned); else 3 when any was not comparable, 1
// when any failed. `mismatch`: --verify found a metric's device result off the reference.
struct Tally {
  std::size_t failed = 0, warned = 0, incomparable = 0;
  bool mismatch = false;
  int exit_code = 0;
};
Tally tally(const std::vector<PairResult>& results, bool idiff_exit);

// Where FLIP and SSIM run: the device --device names; under auto a device whose kernels are
// worth many times the host's cores (DeviceCosts: a GPU) when there is one (on PoCL a 4K
// pair's FLIP took 9.5 s of kernels against 4.4 s for the whole host run), else "ref";
// --verify asks for a device whatever the choice (auto stays auto).
std::string metrics_device(const std::string& asked, const ComparisonOptions& options);

// --flip-viewing's "DISTANCE,WIDTH,PIXELS" (the distance to the screen and its width in one
// unit, its width in pixels) as FLIP's pixels per degree; Usage error outside 2..10000.
double flip_pixels_per_degree(const std::string& viewing);

}  // namespace halo
