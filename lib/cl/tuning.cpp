// The tuning table. Rows match on device type and a vendor substring; the first match wins.
#include "cl/tuning.hpp"

#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace halo {

namespace {

struct Row {
  std::string_view type;    // "gpu", "cpu" or "" for any
  std::string_view vendor;  // substring of CL_DEVICE_VENDOR, "" for any
  Tuning tuning;
};

// NVIDIA: 8 outputs per work-item hide global latency behind more loads in flight; histograms
// in groups of 1024 with two 16-pixel blocks loaded before counting (H200: RGB8 luma 1.73x ->
// 1.44x the read floor, scripts/results/h200-2026-11-21-batch/hist-sweep.md).
// CPUs (PoCL): small groups; each work-group becomes a loop on one core. Rows per work-item
// measured on this project's 2-core EPYC (5120x2880 RGB float, PoCL 3.1): separable columns
// r=12 103 ms at 1 row, 42 at 8, 35 at 16; conv 3x3 21 ms at 1 row, 25 at 8 (tiled: 165).
constexpr Row kTable[] = {
    {"gpu",
     "NVIDIA",
     {.rows_w = 32,
      .rows_h = 4,
      .rows_steps = 8,
      .cols_w = 32,
      .cols_h = 8,
      .cols_steps = 16,
      .hist_group = 1024,
      .hist_in_flight = 2}},
    {"cpu",
     "",
     {.rows_w = 16,
      .rows_h = 4,
      .rows_steps = 4,
      .cols_w = 16,
      .cols_h = 8,
      .cols_steps = 4,
      .vec = 16}},
    {"", "", {}},
};

// HALO_TUNING="rows_steps=4,conv_h=4" overrides fields of the chosen row, for tuning sweeps.
void apply_overrides(Tuning& t, const char* text) {
  const std::pair<const char*, int Tuning::*> fields[] = {
      {"rows_w", &Tuning::rows_w},
      {"rows_h", &Tuning::rows_h},
      {"rows_steps", &Tuning::rows_steps},
      {"cols_w", &Tuning::cols_w},
      {"cols_h", &Tuning::cols_h},
      {"cols_steps", &Tuning::cols_steps},
      {"conv_w", &Tuning::conv_w},
      {"conv_h", &Tuning::conv_h},
      {"conv_run", &Tuning::conv_run},
      {"box_seg", &Tuning::box_seg},
      {"box_rows", &Tuning::box_rows},
      {"hist_group", &Tuning::hist_group},
      {"hist_subhists", &Tuning::hist_subhists},
      {"hist_in_flight", &Tuning::hist_in_flight},
      {"vec", &Tuning::vec},
      {"vec_w", &Tuning::vec_w},
      {"vec_h", &Tuning::vec_h},
      {"vec_cols", &Tuning::vec_cols},
      {"vec_conv", &Tuning::vec_conv}};
  std::string list = text;
  std::size_t start = 0;
  while (start < list.size()) {
    auto end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    const auto eq = item.find('=');
    bool known = false;
    for (const auto& [name, field] : fields)
      if (eq != std::string::npos && item.substr(0, eq) == name) {
        t.*field = std::stoi(item.substr(eq + 1));
        known = true;
      }
    if (!known) throw Error(ErrorKind::Usage, "HALO_TUNING: cannot use '" + item + "'");
    start = end + 1;
  }
}

}  // namespace

Tuning tuning_for(const DeviceInfo& device) {
  Tuning t;
  for (const auto& row : kTable)
    if ((row.type.empty() || row.type == device.type) &&
        device.vendor.find(row.vendor) != std::string::npos) {
      t = row.tuning;
      break;
    }
  if (const char* text = std::getenv("HALO_TUNING"); text && *text) apply_overrides(t, text);
  return t;
}

}  // namespace halo
