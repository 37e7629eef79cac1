// The tuning table. Rows match on device type and a vendor substring; the first match wins.
#include "cl/tuning.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "cl/device.hpp"
#include "core/error.hpp"
#include "core/record.hpp"
#include "core/settings.hpp"
#include "core/text.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

struct Row {
  std::string_view type;    // "gpu", "cpu" or "" for any
  std::string_view vendor;  // substring of CL_DEVICE_VENDOR, "" for any
  Tuning tuning;
};

// Why each row's values are what they are (the A/B measurements behind them, with devices,
// dates and commands): docs/performance.md, "Why the tuning table holds these values".
constexpr Row kTable[] = {
    {"gpu",
     "NVIDIA",
     {.rows_w = 32,
      .rows_h = 8,
      .rows_steps = 8,
      .cols_w = 32,
      .cols_h = 4,
      .cols_steps = 16,
      .rows_slide = 8,
      .cols_slide = 16,
      .fused_radius = 12,
      .direct_radius = 2,
      .inline_weights = 48,
      .conv_vec = 4,
      .box_rows = 16,
      .box_walk = 128,
      .box_walk_steps = 4,
      .hist_group = 1024,
      .hist_subhists = 32,
      .hist_in_flight = 2,
      .vec_w = 32,
      .vec_h = 4,
      .vec_conv = 4}},
    {"cpu",
     "",
     {.rows_w = 16,
      .rows_h = 4,
      .rows_steps = 4,
      .cols_w = 16,
      .cols_h = 8,
      .cols_steps = 4,
      .box_seg = 128,
      .vec = 16}},
    {"", "", {}},
};

// The first row matching the device.
const Row& table_row(const DeviceInfo& device) {
  for (const auto& row : kTable)
    if ((row.type.empty() || row.type == device.type) &&
        device.vendor.find(row.vendor) != std::string::npos)
      return row;
  return kTable[std::size(kTable) - 1];
}

std::string row_name(const Row& row) {
  if (row.type.empty() && row.vendor.empty()) return "table row default";
  std::string name = "table row ";  // appended piece by piece: GCC 12's -Wrestrict
  name.append(row.type.empty() ? "any" : row.type);
  if (!row.vendor.empty()) name.append("/").append(row.vendor);
  return name;
}

// The settings of a tuned file, or nullopt with the reason at -v: a file from another halo
// (a field it does not know), a truncated or hand-edited one is ignored, never fatal.
std::optional<std::pair<Tuning, std::string>> read_tuned(const fs::path& path, Tuning base) {
  const std::optional<nlohmann::json> record = read_record(path);
  if (!record) return std::nullopt;
  try {
    const nlohmann::json& doc = *record;
    for (const auto& [name, value] : doc.at("settings").items()) {
      const TuningField* field = find_tuning_field(name);
      if (!field || !value.is_number_integer() || value.get<int>() < field->min)
        throw Error(ErrorKind::BadData, "setting '" + name + "' is not one halo uses");
      base.*(field->member) = value.get<int>();
    }
    return std::pair{
        base, "tuned " + doc.value("tuned_at", std::string("?")) + " (" + path.string() + ")"};
  } catch (const std::exception& e) {
    spdlog::info("tuned launch shapes {} left out: {}", path.string(), e.what());
    return std::nullopt;
  }
}

}  // namespace

const std::vector<TuningField>& tuning_fields() {
  // box r <= 16 runs the separable kernels (the gaussian family); from 17 on, running sums
  // (GPUs: box_walk, both passes in one kernel, or box_rows + box_cols). On GPUs gaussian's
  // r=32 and r=64 stand for the large radii, where the sliding windows (rows_slide,
  // cols_slide) and the weights compiled in (inline_weights) pay.
  // One knob a statement: in one long braced list GCC 12 warns of uninitialised vectors.
  static const std::vector<TuningField> fields = [] {
    std::vector<TuningField> all;
    const auto knob = [&all](const char* name, int Tuning::*member, const char* kernels,
                             int min = 1, KnobSearch tiled = {}, KnobSearch vector = {}) {
      all.push_back({name, member, kernels, min, std::move(tiled), std::move(vector)});
    };
    knob("rows_w", &Tuning::rows_w, "separable.cl", 1, {"gaussian", {16, 32, 64}});
    knob("rows_h", &Tuning::rows_h, "separable.cl", 1, {"gaussian", {1, 2, 4, 8}});
    knob("rows_steps", &Tuning::rows_steps, "separable.cl", 1, {"gaussian", {2, 4, 8, 16}});
    knob("rows_slide", &Tuning::rows_slide, "", 0, {"gaussian", {0, 8, 12, 16, 24}});
    knob("rows_slide_steps", &Tuning::rows_slide_steps, "", 1, {"gaussian", {3, 5, 7, 9}});
    knob("cols_w", &Tuning::cols_w, "separable.cl", 1, {"gaussian", {16, 32, 64}});
    knob("cols_h", &Tuning::cols_h, "separable.cl", 1, {"gaussian", {4, 8, 16}});
    knob("cols_steps", &Tuning::cols_steps, "separable.cl", 1, {"gaussian", {2, 4, 8, 16, 32}});
    knob("cols_slide", &Tuning::cols_slide, "", 0, {"gaussian", {0, 8, 12, 16, 24}});
    knob("cols_slide_steps", &Tuning::cols_slide_steps, "", 1, {"gaussian", {4, 8, 16, 32}});
    // 0: the two passes above
    knob("fused_radius", &Tuning::fused_radius, "", 0, {"gaussian", {0, 2, 4, 7, 12, 16}});
    knob("inline_weights", &Tuning::inline_weights, "", 0, {"gaussian", {0, 16, 32, 48, 64}});
    knob("fused_steps", &Tuning::fused_steps, "separable.cl", 1, {"gaussian", {3, 5, 7}});
    knob("fused_band", &Tuning::fused_band, "", 1, {"gaussian", {32, 64, 128, 256}});
    // 0: the fused kernel or the two passes
    knob("direct_radius", &Tuning::direct_radius, "", 0, {"gaussian", {0, 1, 2, 3}});
    knob("direct_rows", &Tuning::direct_rows, "separable.cl", 1, {"gaussian", {2, 4, 8}});
    // 0: the local tile; the knobs after it tune either
    knob("conv_vec", &Tuning::conv_vec, "", 0, {"conv", {0, 2, 4, 8}});
    // OpenCL C vectors end at 16; GPUs keep 0 (the tiled kernels)
    knob("vec", &Tuning::vec, "separable.cl conv.cl denoise.cl", 0, {}, {"gaussian", {4, 8, 16}});
    knob("vec_conv", &Tuning::vec_conv, "conv.cl", 1, {"conv", {1, 2, 4, 8}},
         {"conv", {1, 2, 4, 8}});
    knob("vec_w", &Tuning::vec_w, "", 1, {"conv", {16, 32, 64}}, {"gaussian", {4, 8, 16}});
    knob("vec_h", &Tuning::vec_h, "", 1, {"conv", {2, 4, 8, 16}}, {"gaussian", {1, 2, 4, 8}});
    knob("vec_cols", &Tuning::vec_cols, "separable.cl", 1, {}, {"gaussian", {4, 8, 16, 32}});
    knob("conv_w", &Tuning::conv_w, "conv.cl", 1, {"conv", {16, 32, 64}});
    knob("conv_h", &Tuning::conv_h, "conv.cl", 1, {"conv", {2, 4, 8, 16}});
    knob("conv_run", &Tuning::conv_run, "conv.cl", 1, {"conv", {1, 2, 4, 8, 16}});
    // 0: the two passes, box_seg and box_rows
    knob("box_walk", &Tuning::box_walk, "box.cl", 0, {"box", {0, 32, 64, 128}});
    knob("box_walk_steps", &Tuning::box_walk_steps, "box.cl", 1, {"box", {2, 4, 8}});
    knob("box_walk_band", &Tuning::box_walk_band, "", 1, {"box", {128, 256, 512, 1024}});
    knob("box_seg", &Tuning::box_seg, "box.cl", 1, {"box", {16, 32, 64, 128, 256}},
         {"box", {16, 32, 64, 128, 256}});
    knob("box_rows", &Tuning::box_rows, "box.cl", 1, {"box", {4, 8, 16, 32}},
         {"box", {4, 8, 16, 32}});
    knob("hist_group", &Tuning::hist_group, "histogram.cl", 1, {"histogram", {128, 256, 512, 1024}},
         {"histogram", {128, 256, 512, 1024}});
    knob("hist_subhists", &Tuning::hist_subhists, "histogram.cl", 1,
         {"histogram", {1, 2, 4, 8, 16, 32}}, {"histogram", {1, 2, 4, 8, 16, 32}});
    knob("hist_in_flight", &Tuning::hist_in_flight, "histogram.cl", 1, {"histogram", {1, 2, 4}},
         {"histogram", {1, 2, 4}});
    // The denoise network's shapes come from the table and HALO_TUNING; halo tune does not
    // time the network.
    knob("net_tile_x", &Tuning::net_tile_x, "denoise.cl");
    knob("net_tile_y", &Tuning::net_tile_y, "denoise.cl");
    knob("net_oc_tile", &Tuning::net_oc_tile, "denoise.cl");
    knob("net_oc_item", &Tuning::net_oc_item, "denoise.cl");
    knob("net_in_step", &Tuning::net_in_step, "denoise.cl");
    knob("net_mma_x", &Tuning::net_mma_x, "");
    knob("net_mma_y", &Tuning::net_mma_y, "");
    knob("net_mma_oc", &Tuning::net_mma_oc, "");
    return all;
  }();
  return fields;
}

std::pair<std::string, std::string> knob_define(int Tuning::*knob, int value) {
  for (const auto& field : tuning_fields())
    if (field.member == knob) {
      if (*field.kernels == '\0')
        throw Error(ErrorKind::Internal,
                    std::string("tuning knob ") + field.name + " is read by no kernel");
      return {upper(field.name), std::to_string(value)};
    }
  throw Error(ErrorKind::Internal, "a tuning knob missing from tuning_fields()");
}

std::pair<std::string, std::string> knob_define(const Tuning& t, int Tuning::*knob) {
  return knob_define(knob, t.*knob);
}

const TuningField* find_tuning_field(const std::string& name) {
  for (const auto& field : tuning_fields())
    if (name == field.name) return &field;
  return nullptr;
}

std::string settings_text(const Tuning& t, const Tuning* base) {
  std::string text;
  for (const auto& field : tuning_fields())
    if (!base || t.*(field.member) != base->*(field.member)) {
      if (!text.empty()) text += ',';
      text.append(field.name).append("=").append(std::to_string(t.*(field.member)));
    }
  return text;
}

void apply_settings(Tuning& t, const std::string& text, const std::string& what) {
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const TuningField* field =
        eq == std::string::npos ? nullptr : find_tuning_field(item.substr(0, eq));
    int value = -1;
    if (field) {
      const std::string digits = item.substr(eq + 1);
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec != std::errc() || end != digits.data() + digits.size()) value = -1;
    }
    if (!field || value < field->min)
      throw Error(ErrorKind::Usage,
                  what + ": cannot use '" + item + "' (names: " + settings_text(Tuning{}) + ")");
    t.*(field->member) = value;
  }
}

std::string device_identity(const DeviceInfo& device) {
  return fnv1a_hex(device.platform_name + "|" + device.name + "|" + device.type + "|" +
                   device.version + "|" + device.driver_version);
}

fs::path tuned_file(const fs::path& cache_dir, const DeviceInfo& device) {
  return cache_dir / "tuning" / (device_identity(device) + ".json");
}

Tuning table_tuning(const DeviceInfo& device) {
  return table_row(device).tuning;
}

TuningChoice choose_tuning(const DeviceInfo& device, const std::optional<fs::path>& cache_dir) {
  const Row& row = table_row(device);
  TuningChoice choice{row.tuning, row_name(row)};
  if (cache_dir)
    if (auto tuned = read_tuned(tuned_file(*cache_dir, device), choice.tuning))
      std::tie(choice.tuning, choice.source) = *tuned;
  if (const std::string& text = settings().tuning; !text.empty()) {
    apply_settings(choice.tuning, text, "HALO_TUNING");
    choice.source += " + HALO_TUNING";
  }
  return choice;
}

}  // namespace halo
