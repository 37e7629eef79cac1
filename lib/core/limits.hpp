// The resource policy: how large an image halo agrees to read and how much host memory its
// pixels may take. Checked on a file's header, before any pixel is allocated, so that a small
// file declaring a huge image (a decompression bomb) is refused instead of taking the machine's
// memory. One policy per process, part of its settings (core/settings.hpp): `--max-pixels` /
// `--max-memory`, else HALO_MAX_PIXELS / HALO_MAX_MEMORY, else the defaults below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace halo {

struct ResourceLimits {
  std::uint64_t max_pixels = 0;  // width x height of any image read
  std::size_t max_memory = 0;    // host bytes for pixels: the strips in flight, whole images
  bool strict = false;           // --strict: what is over a limit fails (65), never dropped
};

// 1 gigapixel, and half of this machine's memory.
ResourceLimits default_limits();
// The process's policy: settings().limits.
const ResourceLimits& resource_limits();

// A pixel count as people write it: 1000000, 250M, 1.5G (powers of 1000: megapixels). Usage
// error naming `option` otherwise.
std::uint64_t parse_pixels(const std::string& text, const std::string& option);

// BadData naming the file, its declared size and the limit when width x height is over
// max_pixels or either side is not positive.
void check_image_size(const std::string& path, long long width, long long height);
// --max-memory is the whole process's: with N files at once (a batch's -j N) each file may
// take 1/N of it, and images read whole (compare's two, hist's) hold their bytes until freed.
void set_files_at_once(int files);
// The bytes one file may take now: its share, less what images read whole hold (the budget it
// reserved within, less that, while a MemoryReservation is held on this thread).
std::size_t memory_per_file();

// A batch's files draw on --max-memory as one pool. Each plans its strips within its 1/N share
// (or, when that is too little, within the whole budget) and reserves what the plan declares it
// holds (pipeline/stream.hpp's StripSizing): the reservation waits until that many bytes are free
// beside the other files' reservations, which are granted in the order they were asked for, so
// a large file runs beside small ones, and waits only for memory that is really taken.
class MemoryReservation {
 public:
  // budget: what the file planned within when more than its share (0: the share);
  // memory_per_file() on this thread is that budget (less images read whole) while the
  // reservation is held. bytes over --max-memory take it all.
  MemoryReservation(std::size_t bytes, std::size_t budget);
  ~MemoryReservation();
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;

  std::size_t bytes() const { return bytes_; }
  // Whether other files' reservations kept it waiting.
  bool waited() const { return waited_; }
  // Reservations waiting now.
  static int waiting();

 private:
  std::size_t bytes_;
  bool waited_ = false;
};

// Bytes taken from the budget until destroyed.
class MemoryHold {
 public:
  explicit MemoryHold(std::size_t bytes);
  ~MemoryHold();
  MemoryHold(const MemoryHold&) = delete;
  MemoryHold& operator=(const MemoryHold&) = delete;

 private:
  std::size_t bytes_;
};

// A hold of `bytes` for `what`, or the BadData error of check_memory when they do not fit
// beside what is held.
std::shared_ptr<MemoryHold> hold_memory(const std::string& path, std::size_t bytes,
                                        const std::string& what);

// BadData when holding `bytes` for `what` (e.g. "the whole image") is over memory_per_file().
void check_memory(const std::string& path, std::size_t bytes, const std::string& what);
// The same for a size computed in double from a header's declared numbers, whose product can
// pass 64 bits (it saturates instead of wrapping).
void check_memory(const std::string& path, double bytes, const std::string& what);

}  // namespace halo
