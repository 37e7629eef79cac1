// Host memory: large buffers aligned for huge pages and advised so, small ones from the heap,
// elements left unset by the allocators, and the pool handing large blocks back the same way.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/block_pool.hpp"
#include "core/host_memory.hpp"
#include "core/image.hpp"

using namespace halo;

namespace {

bool aligned_to(const void* p, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

// The VmFlags line of the mapping that holds `p` in /proc/self/smaps ("" if none found).
std::string vm_flags_of(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t from = 0, to = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> from >> dash >> to && dash == '-' && line.find(':') > 8) {
      inside = from <= at && at < to;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

}  // namespace

TEST_CASE("host memory: large requests are huge-page aligned and advised, small ones are not") {
  const std::size_t large = kLargeBytes + 12345;
  void* p = allocate_large(large);
  REQUIRE(p);
  CHECK(aligned_to(p, kLargeBytes));
  auto* bytes = static_cast<unsigned char*>(p);
  bytes[0] = 1;
  bytes[large - 1] = 2;  // the whole request is usable
  CHECK(bytes[0] + bytes[large - 1] == 3);
  // The kernel marks advised mappings "hg"; only where it has transparent huge pages at all.
  if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled"))
    CHECK(vm_flags_of(p).find(" hg") != std::string::npos);
  release_large(p, large);

  void* small = allocate_large(100);
  CHECK(aligned_to(small, 64));
  release_large(small, 100);
  release_large(nullptr, large);  // nothing to free
}

TEST_CASE("host memory: the resource serves large requests; strips stay on the heap") {
  std::pmr::memory_resource* resource = large_page_resource();
  void* p = resource->allocate(3 * kLargeBytes, 64);
  CHECK(aligned_to(p, kLargeBytes));
  resource->deallocate(p, 3 * kLargeBytes, 64);
  void* wide = resource->allocate(kLargeBytes, 256);  // alignments over 64: the heap's
  CHECK(aligned_to(wide, 256));
  resource->deallocate(wide, kLargeBytes, 256);

  HostBytes bytes(kLargeBytes + 1, HostAllocator<std::byte>(resource));
  CHECK(aligned_to(bytes.data(), kLargeBytes));
  bytes.back() = std::byte{3};
  HostBytes moved;
  moved = std::move(bytes);  // the storage moves with its resource
  CHECK(moved.get_allocator().resource == resource);
  CHECK(moved.back() == std::byte{3});

  // Strips and images stay on the heap (see UnsetAllocator); their elements are left unset
  // but values asked for are set.
  CHECK(HostBytes().get_allocator().resource == std::pmr::new_delete_resource());
  Samples samples(3, 1.5f);
  samples.resize(5, 7.0f);
  CHECK(samples[2] == 1.5f);
  CHECK(samples[4] == 7.0f);
}

TEST_CASE("host memory: the heap pool's large blocks come from allocate_large and are reused") {
  HeapPool pool(std::size_t(16) << 20, std::size_t(64) << 10);
  void* a = pool.allocate(3 * kLargeBytes, 64);
  CHECK(aligned_to(a, kLargeBytes));
  pool.deallocate(a, 3 * kLargeBytes, 64);
  void* b = pool.allocate(3 * kLargeBytes, 64);
  CHECK(b == a);
  void* c = pool.allocate(1000, 64);  // a small block: page-aligned heap memory
  CHECK(aligned_to(c, 4096));
  pool.deallocate(b, 3 * kLargeBytes, 64);
  pool.deallocate(c, 1000, 64);
  CHECK(pool.fallbacks() == 0);
}
