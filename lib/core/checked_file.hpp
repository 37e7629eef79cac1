// An image file opened once: checked to be a regular, non-empty file on the descriptor that
// was opened, then read only through that descriptor. Its name is never opened again, so a
// file swapped in after the check (a symlink moved, a file renamed over it) is never read;
// each reader gets its own position on the same descriptor.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <istream>
#include <memory>
#include <streambuf>
#include <string>

#include "core/host_memory.hpp"

namespace halo {

class CheckedFile {
 public:
  // NoInput for a missing, unreadable or special file (a folder, FIFO, socket or device: "-"
  // reads standard input instead) and BadData for an empty one. The FIFO is refused without
  // waiting for a writer (opened non-blocking).
  static std::shared_ptr<const CheckedFile> open(const std::string& path);
  ~CheckedFile();
  CheckedFile(const CheckedFile&) = delete;
  CheckedFile& operator=(const CheckedFile&) = delete;

  const std::string& path() const { return path_; }  // as given, for messages
  std::uint64_t size() const { return size_; }       // at the check
  int descriptor() const { return fd_; }

  // Up to `n` bytes at `offset` (fewer at the end of the file); Io error when the read fails.
  std::size_t read_at(void* out, std::size_t n, std::uint64_t offset) const;
  // The same without throwing, for callers behind C interfaces (stdio cookies, OpenImageIO's
  // and OpenEXR's streams in the module, which calls nothing of halo's out of line): the bytes
  // read, or -1 with errno set when a read fails.
  long long pread_at(void* out, std::size_t n, std::uint64_t offset) const noexcept {
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd_, static_cast<char*>(out) + got, n - got, off_t(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return -1;
      if (r == 0) break;
      got += std::size_t(r);
    }
    bytes_read_.fetch_add(got, std::memory_order_relaxed);
    return static_cast<long long>(got);
  }
  // What readers have read of it so far: a file read part by part reads its headers once.
  std::uint64_t bytes_read() const { return bytes_read_.load(std::memory_order_relaxed); }
  // The whole file, for a decoder that takes it at once: BadData when over `max_bytes` or
  // --max-memory (naming `what`), before a byte is read.
  HostBytes read_whole(std::size_t max_bytes, const std::string& what) const;

 private:
  CheckedFile(std::string path, int fd, std::uint64_t size);
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  mutable std::atomic<std::uint64_t> bytes_read_{0};
};

// A stdio stream over the file from its first byte, with its own position (for libpng and
// libjpeg); it keeps the file open until fclose.
std::FILE* open_stream(std::shared_ptr<const CheckedFile> file);

// A std::istream over the file from its first byte, with its own position (for the PFM and
// OpenEXR header parsers).
class CheckedFileStream : public std::istream {
 public:
  explicit CheckedFileStream(std::shared_ptr<const CheckedFile> file);

 private:
  class Buffer : public std::streambuf {
   public:
    explicit Buffer(std::shared_ptr<const CheckedFile> file) : file_(std::move(file)) {}

   protected:
    int_type underflow() override;
    pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override;
    pos_type seekpos(pos_type pos, std::ios_base::openmode mode) override;

   private:
    std::shared_ptr<const CheckedFile> file_;
    std::uint64_t start_ = 0;  // the file offset of the buffer's first byte
    char bytes_[4096];
  };
  Buffer buffer_;
};

}  // namespace halo
