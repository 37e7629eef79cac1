// Page-locked host memory for images and strips: decoded straight into it, uploaded and
// downloaded by DMA without the driver's staging copy (on an H200, 55 GB/s instead of 11-20
// for pageable memory: docs/performance.md). Blocks are kept for reuse
// (images of a batch, strips of a stream tend to share a size) up to a cap.
#pragma once

#include <memory>
#include <unordered_map>

#include "cl/device.hpp"
#include "core/block_pool.hpp"

namespace halo {

class PinnedPool : public BlockPool {
 public:
  // Maps its blocks through its own queue on `device`'s context. keep_bytes: the most that
  // freed blocks may hold before they are released.
  explicit PinnedPool(const Device& device, std::size_t keep_bytes = std::size_t(2) << 30);
  ~PinnedPool() override;

  std::size_t pinned_bytes() const { return held_bytes(); }

 private:
  void* make_block(std::size_t size) override;
  void free_block(void* block, std::size_t size) override;

  std::unique_ptr<Device> queue_;
  std::unordered_map<void*, std::unique_ptr<Device::Pinned>> blocks_;
  bool warned_ = false;
};

}  // namespace halo
