// Image files read through the one descriptor that was checked.
#include "core/checked_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/paths.hpp"

namespace halo {

namespace {

Error special_file_error(const std::string& path, const char* kind) {
  return Error(ErrorKind::NoInput, path + ": " + kind +
                                       ", not a file; halo reads files (pipe an image into "
                                       "standard input instead: halo run - ... < " +
                                       path + ")");
}

Error open_error(const std::string& path, int error) {
  if (error == ENOENT) return Error(ErrorKind::NoInput, path + ": no such file");
  if (error == EACCES)
    return Error(ErrorKind::NoInput, path + ": cannot open for reading (permission?)");
  return Error(ErrorKind::NoInput, path + ": cannot open for reading: " + std::strerror(error));
}

}  // namespace

std::shared_ptr<const CheckedFile> CheckedFile::open(const std::string& path) {
  // A FIFO, socket or device is refused before it is opened (opening some devices acts on
  // them); what is opened is checked again on its descriptor, which is what counts.
  struct stat named {};
  if (::stat(path.c_str(), &named) == 0)
    if (const char* kind = special_file_kind(named.st_mode)) throw special_file_error(path, kind);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw open_error(path, errno);
  struct stat status {};
  try {
    if (::fstat(fd, &status) != 0) throw open_error(path, errno);
    if (S_ISDIR(status.st_mode)) throw Error(ErrorKind::NoInput, path + ": is a folder");
    if (!S_ISREG(status.st_mode))
      throw special_file_error(path, special_file_kind(status.st_mode)
                                         ? special_file_kind(status.st_mode)
                                         : "a special file");
    if (status.st_size == 0) throw Error(ErrorKind::BadData, path + ": file is empty");
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  } catch (...) {
    ::close(fd);
    throw;
  }
  return std::shared_ptr<const CheckedFile>(
      new CheckedFile(path, fd, std::uint64_t(status.st_size)));
}

CheckedFile::CheckedFile(std::string path, int fd, std::uint64_t size)
    : path_(std::move(path)), fd_(fd), size_(size) {}

CheckedFile::~CheckedFile() {
  ::close(fd_);
}

std::size_t CheckedFile::read_at(void* out, std::size_t n, std::uint64_t offset) const {
  const long long got = pread_at(out, n, offset);
  if (got < 0) throw Error(ErrorKind::Io, path_ + ": read error: " + std::strerror(errno));
  return std::size_t(got);
}

HostBytes CheckedFile::read_whole(std::size_t max_bytes, const std::string& what) const {
  if (size_ > max_bytes)
    throw Error(ErrorKind::BadData, path_ + ": " + std::to_string(size_) + " bytes, over the " +
                                        std::to_string(max_bytes) + " bytes allowed (" + what +
                                        ")");
  check_memory(path_, std::size_t(size_), what);
  // Unset (read over at once) and, when large, on huge pages: read once, where fresh 4 KiB
  // pages cost as much as the read.
  HostBytes bytes(static_cast<std::size_t>(size_), HostAllocator<std::byte>(large_page_resource()));
  bytes.resize(read_at(bytes.data(), bytes.size(), 0));  // what is there if it shrank
  return bytes;
}

namespace {

// fopencookie's functions: the file and this stream's own position.
struct Cookie {
  std::shared_ptr<const CheckedFile> file;
  std::uint64_t position = 0;
};

ssize_t cookie_read(void* cookie, char* out, std::size_t n) {
  auto* c = static_cast<Cookie*>(cookie);
  const long long got = c->file->pread_at(out, n, c->position);
  if (got > 0) c->position += std::uint64_t(got);
  return ssize_t(got);
}

int cookie_seek(void* cookie, off64_t* offset, int whence) {
  auto* c = static_cast<Cookie*>(cookie);
  const long long base = whence == SEEK_SET   ? 0
                         : whence == SEEK_CUR ? static_cast<long long>(c->position)
                                              : static_cast<long long>(c->file->size());
  if (base + *offset < 0) {
    errno = EINVAL;
    return -1;
  }
  c->position = std::uint64_t(base + *offset);
  *offset = off64_t(c->position);
  return 0;
}

int cookie_close(void* cookie) {
  delete static_cast<Cookie*>(cookie);
  return 0;
}

}  // namespace

std::FILE* open_stream(std::shared_ptr<const CheckedFile> file) {
  auto* cookie = new Cookie{std::move(file)};
  std::FILE* stream =
      ::fopencookie(cookie, "rb", {cookie_read, nullptr, cookie_seek, cookie_close});
  if (!stream) {
    const std::string path = cookie->file->path();
    delete cookie;
    throw Error(ErrorKind::Internal,
                path + ": cannot make a stream over it: " + std::strerror(errno));
  }
  return stream;
}

CheckedFileStream::CheckedFileStream(std::shared_ptr<const CheckedFile> file)
    : std::istream(nullptr), buffer_(std::move(file)) {
  rdbuf(&buffer_);
}

CheckedFileStream::Buffer::int_type CheckedFileStream::Buffer::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  const std::uint64_t at = start_ + std::uint64_t(egptr() - eback());
  const long long got = file_->pread_at(bytes_, sizeof bytes_, at);
  if (got <= 0) return traits_type::eof();
  start_ = at;
  setg(bytes_, bytes_, bytes_ + got);
  return traits_type::to_int_type(*gptr());
}

CheckedFileStream::Buffer::pos_type CheckedFileStream::Buffer::seekoff(off_type off,
                                                                       std::ios_base::seekdir dir,
                                                                       std::ios_base::openmode) {
  const long long base = dir == std::ios_base::beg ? 0
                         : dir == std::ios_base::cur
                             ? static_cast<long long>(start_ + std::uint64_t(gptr() - eback()))
                             : static_cast<long long>(file_->size());
  const long long target = base + off;
  if (target < 0) return pos_type(off_type(-1));
  const auto to = std::uint64_t(target);
  if (to >= start_ && to <= start_ + std::uint64_t(egptr() - eback())) {
    setg(eback(), eback() + (to - start_), egptr());
  } else {
    start_ = to;
    setg(bytes_, bytes_, bytes_);
  }
  return pos_type(off_type(to));
}

CheckedFileStream::Buffer::pos_type CheckedFileStream::Buffer::seekpos(
    pos_type pos, std::ios_base::openmode mode) {
  return seekoff(off_type(pos), std::ios_base::beg, mode);
}

}  // namespace halo
