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

}  // namespace halo
