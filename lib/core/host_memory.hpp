// Host memory for samples: large buffers (a file read whole, the strip pool's blocks) on
// transparent huge pages where the kernel offers them for the asking (its "madvise" mode,
// Debian's default), and allocators that leave new elements unset. Fresh memory costs a page fault
// per page on first touch; a 2 MiB page takes one fault where 4 KiB pages take 512: reading an 8
// MiB file into fresh memory took 41 ms on 4 KiB pages, zeroed first as std::string does, and 8 ms
// on huge pages (2-core AMD EPYC VM, 2026-11-28).
#pragma once

#include <cstddef>
#include <memory_resource>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace halo {

// Requests this large or larger get huge pages; smaller ones go to the ordinary heap.
inline constexpr std::size_t kLargeBytes = std::size_t(2) << 20;

// At least `bytes`, page-aligned (a huge-page boundary when large); throws std::bad_alloc.
void* allocate_large(std::size_t bytes);
// Frees what allocate_large(bytes) returned.
void release_large(void* p, std::size_t bytes) noexcept;

// allocate_large as a memory resource (alignments up to a page; larger ones from the heap).
std::pmr::memory_resource* large_page_resource();

// What a container's allocator does to make an element: without arguments nothing (the
// element is left unset, default-initialised), else the constructor with them.
template <class U, class... A>
void construct_unset(U* p, A&&... args) {
  if constexpr (sizeof...(A) == 0)
    ::new (static_cast<void*>(p)) U;
  else
    ::new (static_cast<void*>(p)) U(std::forward<A>(args)...);
}

// Allocates from a memory resource (page-locked memory for fast device transfers, see
// cl/pinned_pool.hpp), unlike std::pmr's allocator it moves with its storage on move
// assignment, so `buffer = make_pinned()` keeps the memory instead of copying it. Copies are
// ordinary heap memory.
template <class T>
struct HostAllocator {
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  std::pmr::memory_resource* resource = std::pmr::new_delete_resource();

  HostAllocator() = default;
  explicit HostAllocator(std::pmr::memory_resource* r) : resource(r) {}
  template <class U>
  HostAllocator(const HostAllocator<U>& other) : resource(other.resource) {}

  T* allocate(std::size_t n) { return static_cast<T*>(resource->allocate(n * sizeof(T), 64)); }
  void deallocate(T* p, std::size_t n) { resource->deallocate(p, n * sizeof(T), 64); }
  // resize() leaves new samples as they are: PixelBuffer zeroes them unless asked not to, so
  // strips that are about to be overwritten cost no pass over their memory.
  template <class U, class... A>
  void construct(U* p, A&&... args) {
    construct_unset(p, std::forward<A>(args)...);
  }
  HostAllocator select_on_container_copy_construction() const { return {}; }
  template <class U>
  bool operator==(const HostAllocator<U>& other) const {
    return resource == other.resource;
  }
};

using HostBytes = std::vector<std::byte, HostAllocator<std::byte>>;

// The heap, with resize() leaving new elements unset (see Image::uninitialized). Not huge
// pages: strips and images come and go many times a file, and the heap reuses their memory
// without faults; huge pages made a PNG blur's peak RSS 3-5x larger.
template <class T>
struct UnsetAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UnsetAllocator<U>;
  };
  UnsetAllocator() = default;
  template <class U>
  UnsetAllocator(const UnsetAllocator<U>&) {}
  template <class U, class... A>
  void construct(U* p, A&&... args) {
    construct_unset(p, std::forward<A>(args)...);
  }
};

}  // namespace halo
