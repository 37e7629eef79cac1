// The page-locked block pool: blocks are mapped CL_MEM_ALLOC_HOST_PTR buffers.
#include "cl/pinned_pool.hpp"

#include <spdlog/spdlog.h>

#include "cl/cl_error.hpp"

namespace halo {

// Sizes rounded up to 1 MiB, so images of nearly the same size share blocks.
PinnedPool::PinnedPool(const Device& device, std::size_t keep_bytes)
    : BlockPool(keep_bytes, std::size_t(1) << 20),
      queue_(std::make_unique<Device>(device.shared())) {}

PinnedPool::~PinnedPool() {
  release_all();
}

void* PinnedPool::make_block(std::size_t size) {
  try {
    auto block = queue_->pinned(size);  // mapped memory is page-aligned: any alignment holds
    void* data = block->data();
    blocks_.emplace(data, std::move(block));
    return data;
  } catch (const Error& e) {
    // Page-locked memory is a speed-up, never a requirement.
    if (!warned_) spdlog::warn("{}; using ordinary memory for transfers", e.what());
    warned_ = true;
    return nullptr;
  }
}

void PinnedPool::free_block(void* block, std::size_t) {
  blocks_.erase(block);
}

}  // namespace halo
