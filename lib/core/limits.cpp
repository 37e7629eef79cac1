// The resource policy (see limits.hpp).
#include "core/limits.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>

#include "core/error.hpp"
#include "core/settings.hpp"
#include "core/text.hpp"

namespace halo {

namespace {

std::atomic<int> files_at_once{1};
std::atomic<std::size_t> held{0};

// MemoryReservation's pool: bytes reserved, and tickets in the order reservations were asked
// for (the one being served may take its bytes once they are free).
std::mutex pool;
std::condition_variable pool_changed;
std::size_t reserved = 0;
std::uint64_t next_ticket = 0, serving = 0;
int waiting_now = 0;
thread_local std::size_t this_thread_budget = 0;  // 0: no reservation held

std::string pixels_text(std::uint64_t pixels) {
  if (pixels >= 1000000000) return fmt::format("{:.2f} gigapixels", pixels / 1e9);
  return fmt::format("{:.1f} megapixels", pixels / 1e6);
}

}  // namespace

ResourceLimits default_limits() {
  const std::size_t physical = std::size_t(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
  return {.max_pixels = 1000000000, .max_memory = physical / 2};
}

const ResourceLimits& resource_limits() {
  return settings().limits;
}

std::uint64_t parse_pixels(const std::string& text, const std::string& option) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const std::string unit = lower(end);
  const double scale = unit.empty()  ? 1
                       : unit == "k" ? 1e3
                       : unit == "m" ? 1e6
                       : unit == "g" ? 1e9
                                     : 0;
  const double pixels = value * scale;
  if (end == text.c_str() || scale == 0 || !std::isfinite(pixels) || pixels < 1 || pixels > 1e18)
    throw Error(ErrorKind::Usage,
                option + " '" + text + "': expected a pixel count such as 250M, 2G or 1000000");
  return std::uint64_t(pixels);
}

void check_image_size(const std::string& path, long long width, long long height) {
  if (width <= 0 || height <= 0)
    throw Error(ErrorKind::BadData, fmt::format("{}: declares {}x{} pixels", path, width, height));
  const std::uint64_t pixels = std::uint64_t(width) * std::uint64_t(height);
  const std::uint64_t limit = resource_limits().max_pixels;
  if (pixels > limit)
    throw Error(ErrorKind::BadData,
                fmt::format("{}: declares {}x{} = {}, over the limit of {} (--max-pixels or "
                            "HALO_MAX_PIXELS raise it)",
                            path, width, height, pixels_text(pixels), pixels_text(limit)));
}

void check_memory(const std::string& path, double bytes, const std::string& what) {
  check_memory(path, bytes < 1e18 ? std::size_t(bytes) : std::size_t(1e18), what);
}

void set_files_at_once(int files) {
  files_at_once = std::max(1, files);
}

MemoryReservation::MemoryReservation(std::size_t bytes, std::size_t budget)
    : bytes_(std::min(bytes, resource_limits().max_memory)) {
  std::unique_lock lock(pool);
  const std::uint64_t ticket = next_ticket++;
  const auto granted = [&] {
    return ticket == serving && reserved + bytes_ <= resource_limits().max_memory;
  };
  waited_ = !granted();
  ++waiting_now;
  pool_changed.wait(lock, granted);
  --waiting_now;
  reserved += bytes_;
  ++serving;
  pool_changed.notify_all();  // the next ticket may fit too
  this_thread_budget = budget;
}

int MemoryReservation::waiting() {
  std::lock_guard lock(pool);
  return waiting_now;
}

MemoryReservation::~MemoryReservation() {
  std::lock_guard lock(pool);
  reserved -= bytes_;
  this_thread_budget = 0;
  pool_changed.notify_all();
}

std::size_t memory_per_file() {
  const std::size_t share = this_thread_budget
                                ? this_thread_budget
                                : resource_limits().max_memory / std::size_t(files_at_once.load());
  const std::size_t taken = held.load();
  return share > taken ? share - taken : 0;
}

MemoryHold::MemoryHold(std::size_t bytes) : bytes_(bytes) {
  held += bytes;
}

MemoryHold::~MemoryHold() {
  held -= bytes_;
}

std::shared_ptr<MemoryHold> hold_memory(const std::string& path, std::size_t bytes,
                                        const std::string& what) {
  check_memory(path, bytes, what);
  return std::make_shared<MemoryHold>(bytes);
}

void check_memory(const std::string& path, std::size_t bytes, const std::string& what) {
  const std::size_t limit = memory_per_file();
  if (bytes <= limit) return;
  const std::size_t taken = held.load();
  const int files = files_at_once.load();
  std::string context;
  if (taken > 0) context += fmt::format(", {} already held by images read whole", size_text(taken));
  if (files > 1) context += fmt::format(", a share of {} files at once (-j)", files);
  throw Error(ErrorKind::BadData,
              fmt::format("{}: {} needs {} of memory, over the limit of {}{} (--max-memory or "
                          "HALO_MAX_MEMORY raise it)",
                          path, what, size_text(bytes), size_text(limit), context));
}

}  // namespace halo
