// The reports of `halo compare`: each pair's name, its figures as text lines and as JSON, why
// a failed pair failed, and the sequence measures as text and JSON (the report file and
// JUnit's XML are the app's; they are made of these).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/pair.hpp"
#include "compare/pairs.hpp"
#include "compare/sequence.hpp"

namespace halo {

// "a vs b", and the part with -a: "a.exr vs b.exr (subimage 1)".
std::string pair_name(const Pair& pair);
// The figures of a compared pair, a line each, as the text report and JUnit's output show them.
std::string pair_details(const Pair& pair, const PairResult& r, const Thresholds& t);
// Why a failed pair failed, in one line: the metric thresholds it missed, else idiff's rule.
std::string failure_message(const PairResult& r, const Thresholds& t);
std::string temporal_text(const TemporalResult& t);
nlohmann::json temporal_json(const TemporalResult& t);
// A pair as the JSON report holds it.
nlohmann::json to_json(const Pair& pair, const PairResult& r);
// The sequence's gates, as the report states them.
struct SequenceGates {
  std::optional<double> fail_temporal, fail_flicker;
};
// The whole JSON report (schema halo-compare/1): thresholds, gates, metrics, each pair, the
// sequence measures, the exit code.
nlohmann::json report_json(const std::vector<Pair>& pairs, const std::vector<PairResult>& results,
                           const ComparisonOptions& options, const SequenceGates& gates,
                           int exit_code, const std::optional<TemporalResult>& temporal);
// A number, or null for NaN and infinities (JSON has neither).
nlohmann::json number_or_null(double value);

}  // namespace halo
