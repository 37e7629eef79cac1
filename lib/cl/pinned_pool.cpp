// The page-locked block pool.
#include "cl/pinned_pool.hpp"

#include <spdlog/spdlog.h>

#include "cl/cl_error.hpp"

namespace halo {

namespace {

// Sizes rounded up to 1 MiB, so images of nearly the same size share blocks.
std::size_t block_size(std::size_t bytes) {
  constexpr std::size_t kGrain = std::size_t(1) << 20;
  return (std::max<std::size_t>(bytes, 1) + kGrain - 1) / kGrain * kGrain;
}

}  // namespace

PinnedPool::PinnedPool(const Device& device, std::size_t keep_bytes)
    : queue_(device.another_queue()), keep_bytes_(keep_bytes) {}

PinnedPool::~PinnedPool() {
  if (!used_.empty())
    spdlog::warn("pinned memory pool: {} blocks still in use at exit", used_.size());
}

std::size_t PinnedPool::pinned_bytes() const {
  std::lock_guard lock(mutex_);
  return free_bytes_ + used_bytes_;
}

std::size_t PinnedPool::fallbacks() const {
  std::lock_guard lock(mutex_);
  return fallbacks_;
}

void* PinnedPool::do_allocate(std::size_t bytes, std::size_t alignment) {
  const std::size_t size = block_size(bytes);
  std::lock_guard lock(mutex_);
  std::unique_ptr<Device::Pinned> block;
  if (auto it = free_.find(size); it != free_.end()) {
    block = std::move(it->second);
    free_.erase(it);
    free_bytes_ -= size;
  } else {
    try {
      block = queue_->pinned(size);  // mapped memory is page-aligned: any alignment holds
    } catch (const Error& e) {
      // Page-locked memory is a speed-up, never a requirement.
      if (fallbacks_++ == 0) spdlog::warn("{}; using ordinary memory for transfers", e.what());
      return std::pmr::new_delete_resource()->allocate(bytes, alignment);
    }
  }
  void* data = block->data();
  used_bytes_ += size;
  used_.emplace(data, std::make_pair(size, std::move(block)));
  return data;
}

void PinnedPool::do_deallocate(void* p, std::size_t bytes, std::size_t alignment) {
  std::lock_guard lock(mutex_);
  const auto it = used_.find(p);
  if (it == used_.end()) {  // a fallback allocation
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
    return;
  }
  auto [size, block] = std::move(it->second);
  used_.erase(it);
  used_bytes_ -= size;
  // Keep the block for the next image unless that would exceed the cap; drop the largest
  // kept blocks first to make room.
  while (!free_.empty() && free_bytes_ + size > keep_bytes_) {
    auto largest = std::prev(free_.end());
    free_bytes_ -= largest->first;
    free_.erase(largest);
  }
  if (size <= keep_bytes_) {
    free_bytes_ += size;
    free_.emplace(size, std::move(block));
  }
}

}  // namespace halo
