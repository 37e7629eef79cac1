// --device auto's estimates (see device_choice.hpp).
#include "pipeline/device_choice.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cl/tuning.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/record.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

fs::path costs_file(const fs::path& cache_dir) {
  return cache_dir / "device-start.json";
}

// The record, or an empty object when there is none or it is not one (it is only a hint).
nlohmann::json read_costs(const std::optional<fs::path>& cache_dir) {
  if (!cache_dir) return nlohmann::json::object();
  return read_record(costs_file(*cache_dir)).value_or(nlohmann::json::object());
}

double number_or(const nlohmann::json& doc, const char* key, double fallback) {
  const auto it = doc.find(key);
  return it != doc.end() && it->is_number() && it->get<double>() >= 0 ? it->get<double>()
                                                                      : fallback;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A measurement `key` of `doc` taken within kStartRecordDays (`key`_at says when), else
// nothing: a stale or undated one is measured again.
std::optional<double> fresh(const nlohmann::json& doc, const std::string& key) {
  if (!doc.is_object()) return std::nullopt;
  const double at = number_or(doc, (key + "_at").c_str(), -1);
  if (at < 0 || now_seconds() - at > kStartRecordDays * 86400) return std::nullopt;
  const double value = number_or(doc, key.c_str(), -1);
  return value >= 0 ? std::optional(value) : std::nullopt;
}

// The cheapest start on record (listing the platforms and opening the quickest device), or a
// CPU device's default when none is.
double cheapest_start(const nlohmann::json& costs) {
  std::optional<double> best;
  if (const auto devices = costs.find("devices"); devices != costs.end() && devices->is_object())
    for (const auto& [key, d] : devices->items())
      if (const auto start = fresh(d, "start_seconds"))
        best = std::min(best.value_or(*start), *start);
  return fresh(costs, "list_seconds").value_or(0) +
         best.value_or(device_costs("cpu", 1).start_seconds);
}

double start_of(const nlohmann::json& costs, const DeviceInfo& info) {
  const double fallback = device_costs(info).start_seconds;
  const auto devices = costs.find("devices");
  if (devices == costs.end() || !devices->is_object()) return fallback;
  const auto d = devices->find(device_identity(info));
  return d != devices->end() ? fresh(*d, "start_seconds").value_or(fallback) : fallback;
}

// `doc[key]` = what was just measured, or the fresh value on record when that is lower (a
// start measured while the machine was busy says little of the next one), dated now.
void record(nlohmann::json& doc, const std::string& key, double measured) {
  doc[key] = std::min(measured, fresh(doc, key).value_or(measured));
  doc[key + "_at"] = now_seconds();
}

double device_seconds(const Workload& work, const DeviceCosts& costs, double start) {
  const double samples = work.samples * work.files;
  return start + samples * work.per_sample.device_ns * 1e-9 / costs.parallel +
         samples * costs.transfer_ns * 1e-9;
}

// The estimate on the fastest device of the record (listing included), or nothing when the
// record has no fresh device.
std::optional<double> fastest_recorded(const Workload& work, const nlohmann::json& costs) {
  const auto devices = costs.find("devices");
  if (devices == costs.end() || !devices->is_object()) return std::nullopt;
  const double list = fresh(costs, "list_seconds").value_or(0);
  std::optional<double> best;
  for (const auto& [key, d] : devices->items()) {
    const auto start = fresh(d, "start_seconds");
    if (!start) continue;
    // A hint: records written before the kind was named say "gpu" (true or false).
    const std::string type = d.contains("type")     ? d.value("type", std::string("gpu"))
                             : d.value("gpu", true) ? "gpu"
                                                    : "cpu";
    const auto units = unsigned(std::max(1.0, number_or(d, "compute_units", 1)));
    const double seconds = list + device_seconds(work, device_costs(type, units), *start);
    best = std::min(best.value_or(seconds), seconds);
  }
  return best;
}

}  // namespace

DeviceChoice choose_device(const Workload& work, const std::optional<fs::path>& cache_dir) {
  const double reference =
      work.samples * work.files * work.per_sample.reference_ns * 1e-9 / std::max(1, work.cores);
  const nlohmann::json costs = read_costs(cache_dir);
  const double floor = cheapest_start(costs);
  if (!work.needs_device && reference <= floor)
    return {std::nullopt, fmt::format("the reference: {:.3f} s expected, less than starting any "
                                      "OpenCL device ({:.3f} s)",
                                      reference, floor)};

  // Every device on record slower than the reference: the reference, without listing the
  // platforms, since loading an OpenCL runtime costs memory as well as time (PoCL's LLVM: 60
  // MB of a 5K resize's 100 MB). The record lists the devices of the last listing; it expires
  // after kStartRecordDays, so a device installed since is found then.
  if (!work.needs_device)
    if (const auto recorded = fastest_recorded(work, costs); recorded && reference <= *recorded)
      return {std::nullopt, fmt::format("the reference: {:.3f} s expected, less than {:.3f} s on "
                                        "the fastest device on record",
                                        reference, *recorded)};

  const auto listing = std::chrono::steady_clock::now();
  const std::vector<DeviceInfo> devices = list_devices();
  const double listed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - listing).count();
  std::optional<DeviceInfo> best;
  double best_seconds = 0;
  std::string estimates = fmt::format("reference {:.3f} s", reference);
  for (const DeviceInfo& info : devices) {
    const double seconds = device_seconds(work, device_costs(info), start_of(costs, info));
    estimates += fmt::format(", {} {:.3f} s", info.name, seconds);
    if (!best || seconds < best_seconds) best = info, best_seconds = seconds;
  }
  spdlog::debug("listing the OpenCL platforms took {:.3f} s", listed);
  if (!best) select_device("auto");  // throws NoDevice saying what to install
  if (!work.needs_device && reference <= best_seconds)
    return {std::nullopt, "the reference, expected first (" + estimates + ")", listed};
  return {best, best->name + ", expected first (" + estimates + ")", listed};
}

void record_start_cost(const std::optional<fs::path>& cache_dir, const DeviceInfo& info,
                       double start_seconds, double list_seconds) {
  if (!cache_dir) return;
  nlohmann::json costs = read_costs(cache_dir);
  if (!costs.contains("devices") || !costs["devices"].is_object())
    costs["devices"] = nlohmann::json::object();
  if (list_seconds > 0) record(costs, "list_seconds", list_seconds);
  nlohmann::json& device = costs["devices"][device_identity(info)];
  if (!device.is_object()) device = nlohmann::json::object();
  device["name"] = info.name;
  device["platform"] = info.platform_name;
  device["type"] = info.type;
  device["compute_units"] = info.compute_units;
  record(device, "start_seconds", start_seconds + device_costs(info).runtime_seconds);
  try {
    fs::create_directories(*cache_dir);
    write_record(costs_file(*cache_dir), costs);
  } catch (const std::exception& e) {
    spdlog::debug("not recording the device's start cost: {}", e.what());
  }
}

}  // namespace halo
