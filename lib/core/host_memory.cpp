// Large buffers on transparent huge pages.
#include "core/host_memory.hpp"

#include <cstdint>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace halo {
namespace {

constexpr std::size_t kPage = 4096;

// Below one huge page the advice cannot apply; the heap serves those.
bool is_large(std::size_t bytes) {
  return bytes >= kLargeBytes;
}

std::size_t whole_pages(std::size_t bytes) {
  return (bytes + kLargeBytes - 1) / kLargeBytes * kLargeBytes;
}

class LargePageResource : public std::pmr::memory_resource {
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (alignment > kPage) return std::pmr::new_delete_resource()->allocate(bytes, alignment);
    return allocate_large(bytes);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    if (alignment > kPage) return std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
    release_large(p, bytes);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
};

}  // namespace

void* allocate_large(std::size_t bytes) {
  if (!is_large(bytes)) return ::operator new(bytes, std::align_val_t(kPage));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // A mapping of its own, not the heap's: freed, it goes back to the system at once instead of
  // leaving huge pages in the heap. Mapped a huge page longer and trimmed to start on one, so
  // that every page of it can be huge.
  const std::size_t size = whole_pages(bytes);
  void* mapped =
      mmap(nullptr, size + kLargeBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  const auto at = reinterpret_cast<std::uintptr_t>(mapped);
  const std::uintptr_t start = (at + kLargeBytes - 1) / kLargeBytes * kLargeBytes;
  if (start > at) munmap(mapped, start - at);
  if (const std::size_t after = kLargeBytes - (start - at); after > 0)
    munmap(reinterpret_cast<void*>(start + size), after);
  void* p = reinterpret_cast<void*>(start);
  madvise(p, size, MADV_HUGEPAGE);  // advice: refused or unsupported changes nothing
  return p;
#else
  return ::operator new(bytes, std::align_val_t(kPage));
#endif
}

void release_large(void* p, std::size_t bytes) noexcept {
  if (!p) return;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (is_large(bytes)) {
    munmap(p, whole_pages(bytes));
    return;
  }
#endif
  ::operator delete(p, std::align_val_t(kPage));
}

std::pmr::memory_resource* large_page_resource() {
  static LargePageResource resource;
  return &resource;
}

}  // namespace halo
