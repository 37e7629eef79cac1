// The recycling block pool.
#include "core/block_pool.hpp"

#include <spdlog/spdlog.h>

#include <iterator>
#include <new>

#include "core/host_memory.hpp"

namespace halo {

BlockPool::BlockPool(std::size_t keep_bytes, std::size_t grain)
    : keep_bytes_(keep_bytes), grain_(grain) {}

BlockPool::~BlockPool() {
  if (!used_.empty()) spdlog::warn("memory pool: {} blocks still in use at exit", used_.size());
}

void BlockPool::release_all() {
  std::lock_guard lock(mutex_);
  for (auto& [size, block] : free_) free_block(block, size);
  free_.clear();
  free_bytes_ = 0;
}

std::size_t BlockPool::held_bytes() const {
  std::lock_guard lock(mutex_);
  return free_bytes_ + used_bytes_;
}

std::size_t BlockPool::fallbacks() const {
  std::lock_guard lock(mutex_);
  return fallbacks_;
}

void* BlockPool::do_allocate(std::size_t bytes, std::size_t alignment) {
  const std::size_t size = (std::max<std::size_t>(bytes, 1) + grain_ - 1) / grain_ * grain_;
  std::lock_guard lock(mutex_);
  void* block = nullptr;
  if (auto it = free_.find(size); it != free_.end()) {
    block = it->second;
    free_.erase(it);
    free_bytes_ -= size;
  } else if (!(block = make_block(size))) {
    ++fallbacks_;
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  used_bytes_ += size;
  used_.emplace(block, size);
  return block;
}

void BlockPool::do_deallocate(void* p, std::size_t bytes, std::size_t alignment) {
  std::lock_guard lock(mutex_);
  const auto it = used_.find(p);
  if (it == used_.end()) {  // a fallback allocation
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
    return;
  }
  const std::size_t size = it->second;
  used_.erase(it);
  used_bytes_ -= size;
  // Keep the block for the next request unless that would exceed the cap; drop the largest
  // kept blocks first to make room.
  while (!free_.empty() && free_bytes_ + size > keep_bytes_) {
    auto largest = std::prev(free_.end());
    free_block(largest->second, largest->first);
    free_bytes_ -= largest->first;
    free_.erase(largest);
  }
  if (size <= keep_bytes_) {
    free_bytes_ += size;
    free_.emplace(size, p);
  } else {
    free_block(p, size);
  }
}

void* HeapPool::make_block(std::size_t size) {
  try {
    return allocate_large(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

void HeapPool::free_block(void* block, std::size_t size) {
  release_large(block, size);
}

}  // namespace halo
