// Image rows split into bands, one per core, each band's work on a thread of its own: for
// host computations whose rows are independent once each band has the rows around it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace halo {

// Calls work(first, last) for bands of [0, height) of at least `min_rows` rows, in parallel,
// and rethrows the first exception a band threw once all have ended.
template <class Work>
void in_bands(int height, int min_rows, const Work& work) {
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  const int bands = std::clamp(height / std::max(1, min_rows), 1, cores);
  if (bands == 1) {
    work(0, height);
    return;
  }
  std::vector<std::exception_ptr> errors(bands);
  std::vector<std::thread> threads;
  for (int b = 0; b < bands; ++b)
    threads.emplace_back([&, b] {
      try {
        work(int(std::int64_t(height) * b / bands), int(std::int64_t(height) * (b + 1) / bands));
      } catch (...) {
        errors[b] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace halo
