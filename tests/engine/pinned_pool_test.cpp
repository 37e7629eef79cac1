// Page-locked host memory for batches: blocks reused, the cap respected, results unchanged.
#include <doctest/doctest.h>

#include "cl/pinned_pool.hpp"
#include "pipeline/pipeline.hpp"
#include "support.hpp"

using namespace halo;

TEST_CASE("pinned pool: blocks are reused by size and released beyond the cap") {
  PinnedPool pool(test::device(), std::size_t(3) << 20);
  {
    PixelBuffer a(1000, 500, 3, PixelType::u8, false, &pool);  // 1.5 MB: a 2 MiB block
    CHECK(a.bytes.get_allocator().resource == &pool);
    CHECK(pool.pinned_bytes() == (std::size_t(2) << 20));
    a.bytes[0] = std::byte{7};
    a.bytes.back() = std::byte{9};
    PixelBuffer moved;
    moved = std::move(a);  // move assignment keeps the pinned storage
    CHECK(moved.bytes.get_allocator().resource == &pool);
    CHECK(moved.bytes.back() == std::byte{9});
    const PixelBuffer copy = moved;  // copies are ordinary memory
    CHECK(copy.bytes.get_allocator().resource != &pool);
    CHECK(copy.bytes == moved.bytes);
  }
  CHECK(pool.pinned_bytes() == (std::size_t(2) << 20));  // kept for the next image
  {
    PixelBuffer b(999, 500, 3, PixelType::u8, false, &pool);  // same block size: reused
    CHECK(pool.pinned_bytes() == (std::size_t(2) << 20));
    PixelBuffer c(2000, 1000, 1, PixelType::u8, false, &pool);  // another 2 MiB block
    CHECK(pool.pinned_bytes() == (std::size_t(4) << 20));
  }
  CHECK(pool.pinned_bytes() <= (std::size_t(3) << 20));  // one block over the cap released
  CHECK(pool.fallbacks() == 0);
}

TEST_CASE("pipelines read from and download into pinned memory with the same results") {
  PinnedPool pool(test::device());
  const Pipeline pipeline(std::vector<StageSpec>{{"gaussian:r=4", ""}, {"emboss", ""}});
  PixelBuffer input(123, 77, 3, PixelType::u8, false, &pool);
  const PixelBuffer random = test::random_pixels(123, 77, 3, PixelType::u8);
  std::copy(random.bytes.begin(), random.bytes.end(), input.bytes.begin());
  const RunResult pinned = run_device(test::device(), pipeline, input, PixelType::u8,
                                      {.stream = {.verify = true}, .result_memory = &pool});
  CHECK(pinned.ok());
  CHECK(pinned.pixels.bytes.get_allocator().resource == &pool);
  const RunResult heap = run_device(test::device(), pipeline, random, PixelType::u8, {});
  CHECK(pinned.pixels.bytes == heap.pixels.bytes);
}
