// Launch shapes per device, handed to kernels as -D defines (CLBlast's idea: a small table
// keyed by device, with a default row), and what `halo tune` measured on this machine, stored
// in the cache folder and preferred to the table.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace halo {

struct Tuning {
  // separable.cl rows pass: work-group ROWS_W x ROWS_H, ROWS_STEPS outputs per work-item.
  int rows_w = 32, rows_h = 4, rows_steps = 4;
  // separable.cl cols pass: work-group COLS_W x COLS_H, COLS_STEPS outputs per work-item.
  int cols_w = 32, cols_h = 8, cols_steps = 4;
  // From this radius on (0: never), a pass gives each work-item *_slide_steps neighbouring
  // outputs whose shared taps it reads once into a sliding window (ROWS_SLIDING / COLS_SLIDING in
  // separable.cl) instead of *_steps outputs a group's width apart: fewer local-memory reads
  // per output, which is what limits large radii.
  int rows_slide = 0, rows_slide_steps = 5, cols_slide = 0, cols_slide_steps = 16;
  // separable.cl fused kernel (both passes at once: the image read once, written once) for
  // radii up to fused_radius (0: never): 32 x fused_steps work-groups of 32 * fused_steps
  // columns, fused_steps rows a step, fused_band output rows each.
  int fused_radius = 0, fused_steps = 5, fused_band = 128;
  // separable.cl direct kernel for radii up to direct_radius (0: never; before the fused
  // kernel): both passes in registers, 4 x direct_rows outputs per work-item in vec_w x vec_h
  // work-groups.
  int direct_radius = 0, direct_rows = 4;
  // From this radius on (0: never) the two passes have their weights compiled in (immediate
  // operands instead of loads from constant memory, one program per weight set); the fused
  // kernel always does.
  int inline_weights = 0;
  // conv.cl: CONV_W x CONV_H work-groups, up to conv_run outputs down a column per work-item
  // (fewer when the tile of a large kernel would not fit in local memory).
  int conv_w = 32, conv_h = 8, conv_run = 8;
  // conv.cl on GPUs: 0 for conv_tile, else conv_vec at this vector width (taps read straight
  // from global memory, through L1; vec_w x vec_h work-groups, vec_conv rows per work-item).
  int conv_vec = 0;
  // box.cl running sums: box_seg outputs per work-item, box_rows image rows per work-group of
  // the rows pass (fewer when the tile would not fit in local memory).
  int box_seg = 64, box_rows = 32;
  // box.cl box_walk (both passes at once, GPUs): box_walk columns per work-group (0: never;
  // halved while its local memory does not fit), box_walk_steps rows a step (dividing
  // box_walk), box_walk_band output rows per work-group.
  int box_walk = 0, box_walk_steps = 8, box_walk_band = 256;
  // histogram.cl local strategy: work-group size and local sub-histogram copies, interleaved
  // so that as many copies as a warp has lanes keep its atomics off each other's banks (fewer
  // where they would not fit in local memory).
  int hist_group = 256, hist_subhists = 4;
  int hist_in_flight = 1;  // 16-pixel blocks histogram_local loads before counting them
  // CPUs: 0 for the tiled kernels, else the vector width of the _vec kernels (outputs along a
  // row per work-item) and their work-group of vec_w x vec_h work-items; vec_cols and vec_conv
  // rows down a column per work-item of separable.cl's columns pass and conv.cl's conv_vec
  // (each row loaded once serves them all).
  int vec = 0, vec_w = 8, vec_h = 4, vec_cols = 16, vec_conv = 1;
  // denoise.cl's convolutions. GPUs: work-groups of net_tile_x x net_tile_y pixels and
  // net_oc_tile output channels, a 2x2 block of net_oc_item channels per work-item, net_in_step
  // input channels staged in local memory at a time. CPUs (vec > 0): vec pixels of a row and
  // net_oc_item channels per work-item.
  int net_tile_x = 32, net_tile_y = 8, net_oc_tile = 32, net_oc_item = 8, net_in_step = 8;
  // The same on tensor cores (precision=tf32, fp16): work-groups of net_mma_x x net_mma_y pixels
  // (multiples of 16 and 2) and net_mma_oc output channels (a multiple of 8).
  int net_mma_x = 32, net_mma_y = 8, net_mma_oc = 32;
};

struct DeviceInfo;

// Where a device's shapes came from, for `halo devices` and -v.
struct TuningChoice {
  Tuning tuning;
  std::string source;  // "table row gpu/NVIDIA", "tuned 2026-11-23T... (PATH)", "+ HALO_TUNING"
};

// The table's row for the device, then the tuned file for it in cache_dir when there is one
// (a file that cannot be read is reported once at -v and left out), then HALO_TUNING's
// overrides ("rows_steps=4,conv_h=4", for sweeps).
TuningChoice choose_tuning(const DeviceInfo& device,
                           const std::optional<std::filesystem::path>& cache_dir);

// The table alone (no tuned file, no HALO_TUNING), as committed.
Tuning table_tuning(const DeviceInfo& device);

// How `halo tune` searches a knob: the family whose work it times (lib/tune/tuner.cpp; nullptr:
// not searched) and the values it tries, in order.
struct KnobSearch {
  const char* family = nullptr;
  std::vector<int> values;
};

// Every knob by name, with its bounds and its search: the one table from which the settings
// text, tuned files, HALO_TUNING and halo tune's candidates derive. Its order is the order the
// tuner walks a family's knobs (each knob's values with the others at their best so far).
struct TuningField {
  const char* name;
  int Tuning::*member;
  // The kernel files that read the knob as a define, named as the knob in capitals (rows_w:
  // ROWS_W; knob_define), space-separated; "" for a knob only the host reads (a radius that
  // picks a kernel form, a kernel argument, a work-group the launch alone sets).
  const char* kernels = "";
  int min = 1;        // vec and the radii that switch a kernel on may be 0 (never)
  KnobSearch tiled;   // on devices that run the tiled kernels (GPUs: Tuning::vec == 0)
  KnobSearch vector;  // on those that run the vector kernels (CPUs)
};
const std::vector<TuningField>& tuning_fields();
const TuningField* find_tuning_field(const std::string& name);

// A knob as its kernels read it (CLBlast's per-family parameters, one name from HALO_TUNING and
// tuned files to the kernel source): the define named as the knob in capitals, with the value
// the launch runs: the tuning's, or what is left of it where the launch fitted it to local
// memory or a work-group limit, or took a knob that stands in for it on this form (the sliding
// windows' steps for rows_steps, conv_vec for vec on GPUs, the tensor cores' tile for
// net_tile_x). Error(Internal) for a knob no kernel reads.
std::pair<std::string, std::string> knob_define(int Tuning::*knob, int value);
// The tuning's own value.
std::pair<std::string, std::string> knob_define(const Tuning& t, int Tuning::*knob);

// "rows_w=32,rows_h=4,..." of every field, or of those that differ from `base`.
std::string settings_text(const Tuning& t, const Tuning* base = nullptr);
// Applies "name=value,..." to t; unknown names and values below 1 (0 for vec) throw
// Error(Usage) naming `what`.
void apply_settings(Tuning& t, const std::string& text, const std::string& what);

// A device and its driver, as a short hex name (a hash of platform, device, type, version and
// driver): what cached measurements of it are keyed by.
std::string device_identity(const DeviceInfo& device);
// The tuned file of a device in a cache folder: tuning/<device_identity>.json. A new driver
// starts from the table again.
std::filesystem::path tuned_file(const std::filesystem::path& cache_dir, const DeviceInfo& device);

}  // namespace halo
