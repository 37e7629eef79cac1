// Batch progress line.
#include "batch/progress.hpp"

#include <fmt/format.h>

namespace halo {

namespace {

std::string duration(double seconds) {
  const long s = long(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s / 60 % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

// The tail of a long path, so the line fits an 80-column terminal.
std::string tail(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  return "..." + text.substr(text.size() - (width - 3));
}

}  // namespace

Progress::Progress(Mode mode, std::size_t total) : mode_(mode), total_(total) {}

Progress::~Progress() {
  std::lock_guard lock(mutex_);
  if (mode_ == Mode::off) return;
  if (mode_ == Mode::live || drawn_done_ != done_) draw(true);
  if (mode_ == Mode::live) std::fputc('\n', stderr);
}

void Progress::started(const std::string& file) {
  std::lock_guard lock(mutex_);
  current_ = file;
  draw(false);
}

void Progress::finished(bool ok) {
  std::lock_guard lock(mutex_);
  ++done_;
  failed_ += !ok;
  draw(false);
}

void Progress::log(const std::function<void()>& print) {
  std::lock_guard lock(mutex_);
  clear();
  print();
  std::fflush(stdout);
  std::fflush(stderr);
  if (drawn_ && mode_ == Mode::live) draw(true);
}

void Progress::clear() {
  if (mode_ == Mode::live && drawn_) std::fputs("\r\x1b[K", stderr);
}

void Progress::draw(bool force) {
  if (mode_ == Mode::off) return;
  const auto now = std::chrono::steady_clock::now();
  const auto every = mode_ == Mode::live ? std::chrono::milliseconds(100) : std::chrono::seconds(1);
  if (!force && drawn_ && now - last_draw_ < every && done_ != total_) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? double(done_) / elapsed : 0.0;
  const std::string eta =
      done_ && done_ < total_ ? " ETA " + duration(double(total_ - done_) / rate) : "";
  const std::string failed = failed_ ? fmt::format(", {} failed", failed_) : "";
  std::string line = fmt::format("halo: {}/{}{} {:.2f} images/s{} {}", done_, total_, failed, rate,
                                 eta, done_ == total_ ? duration(elapsed) : tail(current_, 32));
  if (mode_ == Mode::live) {
    std::fputs(("\r\x1b[K" + line).c_str(), stderr);
  } else {
    std::fputs((line + "\n").c_str(), stderr);
  }
  std::fflush(stderr);
  drawn_ = true;
  drawn_done_ = done_;
}

}  // namespace halo
