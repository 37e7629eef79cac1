// Outputs are written under a temporary name in the target folder and renamed over the target
// only when complete, so a failed or killed run never leaves a half-written file under the
// final name.
#pragma once

#include <filesystem>

namespace halo {

class AtomicOutput {
 public:
  // CantCreate error when the folder does not exist or is not writable.
  explicit AtomicOutput(const std::filesystem::path& target);
  ~AtomicOutput();  // removes the temporary file unless committed
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  // Same folder and extension as the target, so format writers chosen by name still work.
  const std::filesystem::path& temp_path() const { return temp_; }
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  bool committed_ = false;
};

}  // namespace halo
