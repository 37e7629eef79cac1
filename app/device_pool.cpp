// Devices of a batch and their queues.
#include "app/device_pool.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "cl/program_cache.hpp"
#include "core/error.hpp"

namespace halo {

std::vector<DeviceInfo> select_devices(const std::string& choice) {
  if (choice == "all") {
    std::vector<DeviceInfo> all = list_devices(), gpus;
    for (const auto& d : all)
      if (d.gpu) gpus.push_back(d);
    if (all.empty()) return {select_device("auto")};  // its error says what to install
    return gpus.empty() ? all : gpus;
  }
  std::vector<DeviceInfo> chosen;
  std::size_t start = 0;
  while (start <= choice.size()) {
    const std::size_t comma = std::min(choice.find(',', start), choice.size());
    const std::string item = choice.substr(start, comma - start);
    if (item.empty()) throw Error(ErrorKind::Usage, "--device '" + choice + "': empty item");
    const DeviceInfo info = select_device(item);
    for (const auto& d : chosen)
      if (d.index == info.index)
        throw Error(ErrorKind::Usage,
                    "--device '" + choice + "': device " + std::to_string(d.index) + " twice");
    chosen.push_back(info);
    start = comma + 1;
  }
  return chosen;
}

std::unique_ptr<Device> make_device(const DeviceInfo& info) {
  check_compile_room(info);
  auto device = std::make_unique<Device>(info, default_cache_dir());
  spdlog::info("device {}: launch shapes from the {}", info.name, device->tuning_source());
  return device;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

DevicePool::DevicePool(const GlobalOptions& options, int slots)
    : options_(options), slot_count_(slots) {}

DevicePool::~DevicePool() {
  for (std::size_t d = 0; d < open_seconds_.size() && d < slots_.size(); ++d) {
    // The device's first slot is the last of slots_ for it (open() puts them last).
    Device& device = *slots_[slots_.size() - open_seconds_.size() + d];
    record_start_cost(default_cache_dir(), device.info(),
                      open_seconds_[d] + device.programs().load_seconds(), list_seconds_);
  }
}

std::vector<DeviceInfo> DevicePool::chosen_devices(double samples) {
  if (options_.device != "auto") {
    const auto listing = std::chrono::steady_clock::now();
    std::vector<DeviceInfo> devices = select_devices(options_.device);
    list_seconds_ = seconds_since(listing);
    return devices;
  }
  Workload work = work_;
  work.samples = samples;
  work.cores = int(std::max(1u, std::thread::hardware_concurrency()));
  DeviceChoice choice = choose_device(work, default_cache_dir());
  list_seconds_ = choice.list_seconds;
  spdlog::info("--device auto: {}", choice.reason);
  if (!choice.device) return {};
  return {*choice.device};
}

void DevicePool::open(double samples) {
  opened_ = true;
  if (options_.device == "ref") return;
  try {
    const std::vector<DeviceInfo> devices = chosen_devices(samples);
    // Slots alternate between devices, so the first free slots spread work across them. The
    // slots of one device share its context and compiled programs.
    std::vector<std::unique_ptr<Device>> first;
    for (const auto& info : devices) {
      const auto opening = std::chrono::steady_clock::now();
      first.push_back(make_device(info));
      open_seconds_.push_back(seconds_since(opening));
    }
    for (int slot = 1; slot < slot_count_; ++slot)
      for (const auto& device : first) slots_.push_back(std::make_unique<Device>(device->shared()));
    for (auto& device : first) slots_.push_back(std::move(device));
    device_count_ = devices.size();
  } catch (const Error& e) {
    fall_back_or_rethrow(options_, e, "", "running the CPU reference");
    slots_.clear();
    open_seconds_.clear();
    return;
  }
  for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) free_.push_back(it->get());
}

void DevicePool::open_now() {
  std::lock_guard lock(mutex_);
  if (!opened_ && options_.device != "auto") open(0);
}

DevicePool::Lease DevicePool::acquire(double samples) {
  std::unique_lock lock(mutex_);
  if (!opened_) open(samples);
  if (slots_.empty() || given_up_) return Lease(nullptr, nullptr);
  freed_.wait(lock, [&] { return !free_.empty(); });
  Device* device = free_.back();
  free_.pop_back();
  return Lease(this, device);
}

void DevicePool::record(bool device_failed, const std::string& why) {
  std::lock_guard lock(mutex_);
  failures_in_a_row_ = device_failed ? failures_in_a_row_ + 1 : 0;
  if (failures_in_a_row_ >= kFailuresInARow && !given_up_) {
    given_up_ = true;
    spdlog::warn(
        "OpenCL failed on {} files in a row (last: {}); the remaining files run on the "
        "CPU reference",
        failures_in_a_row_, why);
  }
}

void DevicePool::release(Device* device) {
  {
    std::lock_guard lock(mutex_);
    free_.push_back(device);
  }
  freed_.notify_one();
}

void DevicePool::Lease::give_back() {
  if (pool_ && device_) pool_->release(device_);
  pool_ = nullptr;
  device_ = nullptr;
}

}  // namespace halo
