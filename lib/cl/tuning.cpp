// The tuning table. Rows match on device type and a vendor substring; the first match wins.
#include "cl/tuning.hpp"

#include <string_view>

namespace halo {

namespace {

struct Row {
  std::string_view type;    // "gpu", "cpu" or "" for any
  std::string_view vendor;  // substring of CL_DEVICE_VENDOR, "" for any
  Tuning tuning;
};

// NVIDIA: 8 outputs per work-item hide global latency behind more loads in flight.
// CPUs (PoCL): small groups; each work-group becomes a loop on one core.
constexpr Row kTable[] = {
    {"gpu", "NVIDIA", {.rows_w = 32, .rows_h = 4, .rows_steps = 8, .cols_w = 32, .cols_h = 8, .cols_steps = 4}},
    {"cpu", "", {.rows_w = 16, .rows_h = 4, .rows_steps = 4, .cols_w = 16, .cols_h = 8, .cols_steps = 4}},
    {"", "", {}},
};

}  // namespace

Tuning tuning_for(const DeviceInfo& device) {
  for (const auto& row : kTable)
    if ((row.type.empty() || row.type == device.type) &&
        device.vendor.find(row.vendor) != std::string::npos)
      return row.tuning;
  return {};
}

}  // namespace halo
