// A memory resource that keeps the blocks it frees for the next request of the same size, up
// to a cap. Streams and batches ask for the same sizes over and over (strips, images of one
// size): reuse saves the allocation and, above all, the page faults of fresh memory. Sizes are
// rounded up to a grain so that nearly equal requests share blocks. Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <memory_resource>
#include <mutex>
#include <unordered_map>

namespace halo {

class BlockPool : public std::pmr::memory_resource {
 public:
  BlockPool(std::size_t keep_bytes, std::size_t grain);
  ~BlockPool() override;
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  std::size_t held_bytes() const;  // in blocks, used or kept
  std::size_t fallbacks() const;   // requests that got ordinary heap memory instead

 protected:
  // A new block of `size` bytes, page-aligned, or nullptr to fall back to the heap. Derived
  // classes must release every block they made (release_all) before they go.
  virtual void* make_block(std::size_t size) = 0;
  virtual void free_block(void* block, std::size_t size) = 0;
  void release_all();

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  const std::size_t keep_bytes_, grain_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, void*> free_;       // by block size
  std::unordered_map<void*, std::size_t> used_;  // block -> size
  std::size_t free_bytes_ = 0, used_bytes_ = 0, fallbacks_ = 0;
};

// allocate_large's memory (blocks of 2 MiB and more on huge pages of their own), recycled.
class HeapPool : public BlockPool {
 public:
  explicit HeapPool(std::size_t keep_bytes = std::size_t(256) << 20,
                    std::size_t grain = std::size_t(64) << 10)
      : BlockPool(keep_bytes, grain) {}
  ~HeapPool() override { release_all(); }

 private:
  void* make_block(std::size_t size) override;
  void free_block(void* block, std::size_t size) override;
};

}  // namespace halo
