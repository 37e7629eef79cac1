// Launch shapes per device, handed to kernels as -D defines (CLBlast's idea: a small table
// keyed by device, with a default row). Measured with halo_bench; see scripts/ and the notes.
#pragma once

#include "cl/device.hpp"

namespace halo {

struct Tuning {
  // separable.cl rows pass: work-group ROWS_W x ROWS_H, ROWS_STEPS outputs per work-item.
  int rows_w = 32, rows_h = 4, rows_steps = 4;
  // separable.cl cols pass: work-group COLS_W x COLS_H, COLS_STEPS outputs per work-item.
  int cols_w = 32, cols_h = 8, cols_steps = 4;
  // separable.cl fused pass (both directions at once): FUSED_W x FUSED_H outputs per
  // GROUP_W x GROUP_H work-group, runs of FUSED_RUN outputs per work-item; used up to
  // fused_max_radius when the tile fits in local memory.
  int fused_w = 64, fused_h = 64, group_w = 32, group_h = 8, fused_run = 8;
  int fused_max_radius = 32;
  // conv.cl: CONV_W x CONV_H work-groups, up to conv_run outputs down a column per work-item
  // (fewer when the tile of a large kernel would not fit in local memory).
  int conv_w = 32, conv_h = 8, conv_run = 8;
};

Tuning tuning_for(const DeviceInfo& device);

}  // namespace halo
