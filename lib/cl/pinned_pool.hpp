// Page-locked host memory for a batch's images: decoded straight into it, uploaded and
// downloaded by DMA without the driver's staging copy (on an H200, 55 GB/s instead of 11-20
// for pageable memory: scripts/results/h200-2026-11-21-batch). Blocks are kept for reuse
// (images of a batch tend to share a size) up to a cap, so memory stays bounded.
#pragma once

#include <map>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cl/device.hpp"

namespace halo {

class PinnedPool : public std::pmr::memory_resource {
 public:
  // Maps its blocks through its own queue on `device`'s context. keep_bytes: the most that
  // freed blocks may hold before they are released.
  explicit PinnedPool(const Device& device, std::size_t keep_bytes = std::size_t(2) << 30);
  ~PinnedPool() override;

  std::size_t pinned_bytes() const;  // in blocks, used or kept
  std::size_t fallbacks() const;     // allocations that got heap memory (pinning failed)

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  std::unique_ptr<Device> queue_;
  const std::size_t keep_bytes_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, std::unique_ptr<Device::Pinned>> free_;  // by block size
  std::unordered_map<void*, std::pair<std::size_t, std::unique_ptr<Device::Pinned>>> used_;
  std::size_t free_bytes_ = 0, used_bytes_ = 0, fallbacks_ = 0;
};

}  // namespace halo
