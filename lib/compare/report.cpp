// The reports of `halo compare` (compare/report.hpp).
#include "compare/report.hpp"

#include <cmath>

#include <fmt/format.h>

namespace halo {

namespace {

std::string percent(std::size_t part, std::size_t whole) {
  return fmt::format("{:.3g}%", whole ? 100.0 * double(part) / double(whole) : 0.0);
}

template <typename... Args>
void add_line(std::string& text, fmt::format_string<Args...> format, Args&&... args) {
  text += "  " + fmt::format(format, std::forward<Args>(args)...) + "\n";
}

}  // namespace

nlohmann::json number_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json();
}

std::string pair_name(const Pair& pair) {
  std::string name = pair.a + " vs " + pair.b;
  if (!pair.part_label.empty()) name += " (" + pair.part_label + ")";
  return name;
}

std::string pair_details(const Pair& pair, const PairResult& r, const Thresholds& t) {
  std::string text;
  if (!r.error.empty()) {
    add_line(text, "{}", r.error);
    return text;
  }
  const Comparison& m = r.diff.metrics;
  add_line(text, "mean error {:.6g}, RMS error {:.6g}, PSNR {:.2f} dB", m.mean_error, m.rms_error,
           m.psnr);
  add_line(text, "max error {:.6g} at ({}, {}) channel {}: {} vs {}", m.max_error, m.worst_x,
           m.worst_y, channel_name(r.channel_names, m.worst_c), m.worst_actual, m.worst_expected);
  add_line(text, "{} pixels ({}) over fail {:g}; {} pixels ({}) over warn {:g}",
           r.diff.failed_pixels, percent(r.diff.failed_pixels, r.diff.pixels), t.fail,
           r.diff.warned_pixels, percent(r.diff.warned_pixels, r.diff.pixels), t.warn);
  if (r.diff.metrics.max_error > t.hard_fail)
    add_line(text, "max error above --hardfail {:g}", t.hard_fail);
  if (r.subimages)
    add_line(text, "only the first subimage compared (of {} and {})", r.subimages->first,
             r.subimages->second);
  if (r.perceptual_failures)
    add_line(text, "{} pixels ({}) failed the perceptual test", *r.perceptual_failures,
             percent(*r.perceptual_failures, r.diff.pixels));
  if (r.ssim) {
    std::string channels;
    for (std::size_t c = 0; c < r.ssim->channels.size(); ++c)
      channels += fmt::format("{}{} {:.6f}", c ? ", " : "", channel_name(r.channel_names, int(c)),
                              r.ssim->channels[c]);
    add_line(text, "SSIM {:.6f} ({})", r.ssim->mean, channels);
  }
  if (r.flip) {
    add_line(text,
             "{}FLIP mean {:.6f}, weighted median {:.6f}, quartiles {:.6f} {:.6f}, max {:.6f}",
             r.flip->hdr ? "HDR-" : "", r.flip->mean, r.flip->weighted_median, r.flip->q1,
             r.flip->q3, r.flip->max);
    if (r.flip->hdr)
      add_line(text, "  {} exposures from {:.4f} to {:.4f} stops", r.flip->exposures, r.flip->start,
               r.flip->stop);
    if (!r.flip_channels.empty()) add_line(text, "  FLIP on {}", fmt::join(r.flip_channels, ","));
  }
  if (!r.metrics_device.empty() && r.verify.empty())
    add_line(text, "metrics computed on {}", r.metrics_device);
  for (const auto& line : r.verify) add_line(text, "{}", line);
  for (const auto& why : r.failed_metrics) add_line(text, "{}", why);
  if (r.diff_written) add_line(text, "difference image: {}", pair.diff_out);
  return text;
}

std::string failure_message(const PairResult& r, const Thresholds& t) {
  if (!r.failed_metrics.empty()) return r.failed_metrics.front();
  if (r.diff.metrics.max_error > t.hard_fail)
    return fmt::format("max error {:.6g} above --hardfail {:g}", r.diff.metrics.max_error,
                       t.hard_fail);
  return fmt::format("{} pixels ({}) over --fail {:g}", r.diff.failed_pixels,
                     percent(r.diff.failed_pixels, r.diff.pixels), t.fail);
}

std::string temporal_text(const TemporalResult& t) {
  if (t.frames.empty())
    return "temporal: no two consecutive frames compared" +
           (t.failed.empty() ? std::string() : ": FAILURE, " + t.failed.front()) + "\n";
  std::size_t worst = 0;
  for (std::size_t i = 0; i < t.error.size(); ++i)
    if (t.error[i] > t.error[worst]) worst = i;
  return fmt::format(
      "temporal: {} step{}, frames {}-{}: temporal error {:.6g} (largest {:.6g} into frame {}); "
      "flicker a {:.6g}, b {:.6g} (warping error over the pixels seen in both frames{}){}\n",
      t.frames.size(), t.frames.size() == 1 ? "" : "s", t.frames.front() - 1, t.frames.back(),
      t.mean(t.error), t.error[worst], t.frames[worst], t.mean_flicker(t.flicker_a),
      t.mean_flicker(t.flicker_b), t.motion_a ? "" : "; a has no motion vectors: taken as still",
      t.failed.empty() ? "" : ": FAILURE, " + t.failed.front());
}

nlohmann::json temporal_json(const TemporalResult& t) {
  nlohmann::json steps = nlohmann::json::array();
  for (std::size_t i = 0; i < t.frames.size(); ++i)
    steps.push_back({{"frame", t.frames[i]},
                     {"temporal_error", t.error[i]},
                     {"flicker_a", t.flicker_a[i].mean},
                     {"flicker_b", t.flicker_b[i].mean},
                     {"pixels_seen_a", t.flicker_a[i].pixels},
                     {"pixels_seen_b", t.flicker_b[i].pixels}});
  return {{"temporal_error", t.mean(t.error)},
          {"flicker_a", number_or_null(t.mean_flicker(t.flicker_a))},
          {"flicker_b", number_or_null(t.mean_flicker(t.flicker_b))},
          {"motion_a", t.motion_a},
          {"motion_b", t.motion_b},
          {"steps", steps},
          {"failed", t.failed}};
}

nlohmann::json to_json(const Pair& pair, const PairResult& r) {
  nlohmann::json j = {
      {"a", pair.a}, {"b", pair.b}, {"verdict", r.verdict}, {"exit_code", r.exit_code}};
  if (!pair.part_label.empty()) {
    j["subimage"] = pair.part.subimage;
    j["miplevel"] = pair.part.miplevel;
  }
  if (!r.error.empty()) {
    j["error"] = r.error;
    return j;
  }
  const Comparison& m = r.diff.metrics;
  j["max_error"] = number_or_null(m.max_error);
  j["mean_error"] = number_or_null(m.mean_error);
  j["rms_error"] = number_or_null(m.rms_error);
  j["psnr"] = number_or_null(m.psnr);  // null when the images are identical (infinite)
  j["worst"] = {{"x", m.worst_x},
                {"y", m.worst_y},
                {"channel", channel_name(r.channel_names, m.worst_c)},
                {"a", number_or_null(m.worst_actual)},
                {"b", number_or_null(m.worst_expected)}};
  j["channels"] = r.channel_names;
  j["pixels"] = r.diff.pixels;
  j["failed_pixels"] = r.diff.failed_pixels;
  j["warned_pixels"] = r.diff.warned_pixels;
  j["diff_out"] = r.diff_written ? nlohmann::json(pair.diff_out) : nlohmann::json();
  if (r.ssim) {
    nlohmann::json channels = nlohmann::json::object();
    for (std::size_t c = 0; c < r.ssim->channels.size(); ++c)
      channels[channel_name(r.channel_names, int(c))] = number_or_null(r.ssim->channels[c]);
    j["ssim"] = {{"mean", number_or_null(r.ssim->mean)}, {"channels", channels}};
  }
  if (r.flip) {
    const Flip& f = *r.flip;
    j["flip"] = {{"mean", f.mean}, {"weighted_median", f.weighted_median},
                 {"q1", f.q1},     {"q3", f.q3},
                 {"min", f.min},   {"max", f.max},
                 {"hdr", f.hdr}};
    if (f.hdr)
      j["flip"]["exposures"] = {{"start", f.start}, {"stop", f.stop}, {"count", f.exposures}};
    if (!r.flip_channels.empty()) j["flip"]["channels"] = r.flip_channels;
  }
  if (r.perceptual_failures) j["perceptual_failures"] = *r.perceptual_failures;
  if (r.subimages) j["subimages"] = {r.subimages->first, r.subimages->second};
  if (!r.metrics_device.empty()) j["device"] = r.metrics_device;
  if (!r.verify.empty()) j["verify"] = {{"ok", !r.verify_failed}, {"checks", r.verify}};
  j["failed_metrics"] = r.failed_metrics;
  return j;
}

nlohmann::json report_json(const std::vector<Pair>& pairs, const std::vector<PairResult>& results,
                           const ComparisonOptions& o, const SequenceGates& gates, int exit_code,
                           const std::optional<TemporalResult>& temporal) {
  const Thresholds& t = o.thresholds;
  nlohmann::json report = {
      {"schema", "halo-compare/1"},
      {"thresholds",
       {{"fail", t.fail},
        {"failrelative", t.fail_relative},
        {"failpercent", t.fail_percent},
        {"hardfail", number_or_null(t.hard_fail)},
        {"allowfailures", t.allow_failures},
        {"warn", t.warn},
        {"warnrelative", t.warn_relative},
        {"warnpercent", t.warn_percent},
        {"hardwarn", number_or_null(t.hard_warn)},
        {"idiff_rule", o.idiff_rule},
        {"fail_ssim", o.fail_ssim ? nlohmann::json(*o.fail_ssim) : nlohmann::json()},
        {"fail_flip", o.fail_flip ? nlohmann::json(*o.fail_flip) : nlohmann::json()},
        {"fail_temporal",
         gates.fail_temporal ? nlohmann::json(*gates.fail_temporal) : nlohmann::json()},
        {"fail_flicker",
         gates.fail_flicker ? nlohmann::json(*gates.fail_flicker) : nlohmann::json()}}},
      {"flip_ppd", o.flip.ppd},
      {"metrics", o.metrics},
      {"pairs", nlohmann::json::array()},
      {"exit_code", exit_code}};
  for (std::size_t i = 0; i < pairs.size(); ++i)
    report["pairs"].push_back(to_json(pairs[i], results[i]));
  if (temporal) report["temporal"] = temporal_json(*temporal);
  return report;
}

}  // namespace halo
