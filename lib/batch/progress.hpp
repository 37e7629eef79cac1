// The batch's live status line on a terminal: done/total, images/s, ETA and the file being
// worked on, redrawn in place at most ten times a second. Debian packages no C++ progress-bar
// library (indicators, tqdm-cpp are not in the archive), so this is the small part we need.
// Lines printed through log() appear above the status line instead of tearing it.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>

namespace halo {

class Progress {
 public:
  enum class Mode { off, live, lines };  // lines: one plain line per second, for logs and pipes
  Progress(Mode mode, std::size_t total);
  ~Progress();

  void started(const std::string& file);
  void finished(bool ok);
  // Runs `print` (which writes whole lines to stderr or stdout) with the status line cleared.
  void log(const std::function<void()>& print);

 private:
  void draw(bool force);  // with mutex_ held
  void clear();

  Mode mode_;
  std::size_t total_;
  std::size_t done_ = 0, failed_ = 0;
  std::string current_;
  bool drawn_ = false;
  std::size_t drawn_done_ = 0;  // done_ when last drawn
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_draw_{};
  std::mutex mutex_;
};

}  // namespace halo
