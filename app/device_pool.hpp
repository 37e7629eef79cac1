// The OpenCL devices a batch runs on, each opened with a queue per worker on one context
// ("slots": they share its compiled kernels), so one file's transfers overlap another's
// kernels; a worker holds a slot while it streams a file. No device means the CPU reference.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "app/commands.hpp"
#include "cl/device.hpp"
#include "pipeline/device_choice.hpp"

namespace halo {

// --device: what select_device takes, or "all" (every GPU; every device when there is no GPU),
// or a comma-separated list of those ("0,2", "gpu,cpu").
std::vector<DeviceInfo> select_devices(const std::string& choice);

class DevicePool {
 public:
  // `slots` queues on each chosen device, opened when the first file asks for one (after its
  // header passed: a refused file costs no OpenCL start). With --device auto (and no --strict)
  // a missing device gives an empty pool (the reference) and a warning, as a single run does.
  DevicePool(const GlobalOptions& options, int slots);
  // Records what starting each device cost, for --device auto's next choice.
  ~DevicePool();

  // --device auto: the work the pool will serve (the chain's cost, the files, whether --verify
  // needs a device); the first acquire() adds its file's size and chooses (device_choice.hpp).
  void plan(const Workload& work) { work_ = work; }

  // After a file: whether its device work failed with an OpenCL error. Three failures in a
  // row and the pool stops handing out devices (the rest runs on the reference), with a
  // warning: a device that fails every file would only slow the batch down.
  void record(bool device_failed, const std::string& why);
  static constexpr int kFailuresInARow = 3;

  class Lease {
   public:
    Lease(DevicePool* pool, Device* device) : pool_(pool), device_(device) {}
    Lease(Lease&& other) noexcept : pool_(other.pool_), device_(other.device_) {
      other.pool_ = nullptr;
    }
    Lease(const Lease&) = delete;
    ~Lease() { give_back(); }
    Device* device() const { return device_; }
    void give_back();  // early, so the slot serves another file while this one encodes

   private:
    DevicePool* pool_;
    Device* device_;
  };
  // Blocks until a slot is free; a null device when the pool is empty or given up. `samples`:
  // the file's colour samples, which --device auto's choice weighs on the first call.
  Lease acquire(double samples);
  // Opens the devices now: a batch does, so that a bad --device is one usage error (64)
  // before any file rather than a failure of every file. Under --device auto, which cannot be
  // a usage error, the first file's acquire() opens them, knowing its size.
  void open_now();

 private:
  void open(double samples);  // under mutex_
  std::vector<DeviceInfo> chosen_devices(double samples);
  void release(Device* device);

  GlobalOptions options_;
  Workload work_;
  double list_seconds_ = 0;           // listing the platforms, when this run did
  std::vector<double> open_seconds_;  // creating each device's first slot
  int slot_count_;
  bool opened_ = false;
  int failures_in_a_row_ = 0;
  bool given_up_ = false;
  std::vector<std::unique_ptr<Device>> slots_;
  std::vector<Device*> free_;
  std::size_t device_count_ = 0;
  std::mutex mutex_;
  std::condition_variable freed_;
};

}  // namespace halo
