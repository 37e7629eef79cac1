#include "io/exr_header.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/limits.hpp"

namespace halo {

namespace {

// The version field's multi-part flag (OpenEXR's file layout document).
constexpr std::uint32_t multipart = 0x1000;
// Names are at most 31 characters, or 255 with the long-names flag; 255 is allowed always, as
// only sizes matter here.
constexpr std::size_t max_name = 255;

class HeaderWalk {
 public:
  explicit HeaderWalk(const std::string& path)
      : path_(path), in_(path, std::ios::binary), size_(std::filesystem::file_size(path)) {}

  void run() {
    std::array<unsigned char, 8> start{};
    read(start.data(), start.size(), "its version field");
    const std::uint32_t flags = std::uint32_t(start[5]) << 8 | std::uint32_t(start[6]) << 16 |
                                std::uint32_t(start[7]) << 24;
    if (!(flags & multipart)) return part(1);
    int n = 1;
    do part(n++);
    while (!at_end_of_parts());
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(ErrorKind::BadData, path_ + ": not a valid OpenEXR header: " + why);
  }

  void read(void* out, std::size_t n, const std::string& what) {
    if (!in_.read(static_cast<char*>(out), std::streamsize(n))) fail("the file ends in " + what);
  }

  std::uint64_t offset() { return std::uint64_t(in_.tellg()); }

  // A null-terminated name; empty ends a header.
  std::string name(const std::string& what) {
    std::string text;
    for (char c; in_.get(c) && c;) {
      if (text.size() == max_name)
        fail(what + " '" + text + "...' is longer than " + std::to_string(max_name) +
             " characters");
      text += c;
    }
    if (!in_) fail("the file ends in " + what);
    return text;
  }

  // One part's attributes up to the empty name that ends them.
  void part(int n) {
    bool data_window = false;
    for (std::string attribute; !(attribute = name("an attribute name")).empty();) {
      const std::string type = name("the type of attribute '" + attribute + "'");
      std::array<unsigned char, 4> b{};
      read(b.data(), b.size(), "the size of attribute '" + attribute + "'");
      const std::int64_t bytes =
          std::int32_t(std::uint32_t(b[0]) | std::uint32_t(b[1]) << 8 |
                       std::uint32_t(b[2]) << 16 | std::uint32_t(b[3]) << 24);
      if (bytes < 0 || std::uint64_t(bytes) > size_ - offset())
        fail("attribute '" + attribute + "' declares " + std::to_string(bytes) +
             " bytes where the file has " + std::to_string(size_ - offset()) + " left");
      if (attribute == "dataWindow" && type == "box2i" && bytes == 16) {
        data_window = true;
        check_window(n);
      } else if (type == "chlist") {
        check_channels(attribute, std::size_t(bytes));
      } else {
        in_.seekg(bytes, std::ios::cur);
      }
    }
    if (!data_window) fail("part " + std::to_string(n) + " has no dataWindow");
  }

  // xmin, ymin, xmax, ymax: the part's size checked against --max-pixels before OpenEXR
  // sizes its line-offset table from it.
  void check_window(int n) {
    std::array<std::int32_t, 4> box{};
    std::array<unsigned char, 16> b{};
    read(b.data(), b.size(), "the dataWindow");
    for (int i = 0; i < 4; ++i)
      box[i] = std::int32_t(std::uint32_t(b[4 * i]) | std::uint32_t(b[4 * i + 1]) << 8 |
                            std::uint32_t(b[4 * i + 2]) << 16 | std::uint32_t(b[4 * i + 3]) << 24);
    const std::string where = n > 1 ? path_ + " (part " + std::to_string(n) + ")" : path_;
    check_image_size(where, std::int64_t(box[2]) - box[0] + 1, std::int64_t(box[3]) - box[1] + 1);
  }

  // Each channel: a name, its pixel type (0 uint, 1 half, 2 float), pLinear and 3 reserved
  // bytes, x and y sampling; a null name ends the list. OpenImageIO aborts the program (an
  // assertion Debian's build keeps) on any other pixel type.
  void check_channels(const std::string& attribute, std::size_t bytes) {
    std::string list(bytes, '\0');
    read(list.data(), bytes, "attribute '" + attribute + "'");
    std::size_t at = 0;
    while (at < bytes && list[at]) {
      const std::size_t end = list.find('\0', at);
      if (end == std::string::npos || end + 17 > bytes)
        fail("channel list '" + attribute + "' is cut short");
      const std::string channel = list.substr(at, end - at);
      const auto int_at = [&](std::size_t i) {
        return std::int32_t(std::uint32_t(std::uint8_t(list[i])) |
                            std::uint32_t(std::uint8_t(list[i + 1])) << 8 |
                            std::uint32_t(std::uint8_t(list[i + 2])) << 16 |
                            std::uint32_t(std::uint8_t(list[i + 3])) << 24);
      };
      const std::int32_t pixel_type = int_at(end + 1);
      if (pixel_type < 0 || pixel_type > 2)
        fail("channel '" + channel + "' has pixel type " + std::to_string(pixel_type) +
             " (0 uint, 1 half, 2 float)");
      if (int_at(end + 9) <= 0 || int_at(end + 13) <= 0)
        fail("channel '" + channel + "' has a sampling rate below 1");
      at = end + 17;
    }
    if (at >= bytes) fail("channel list '" + attribute + "' is cut short");
  }

  // A multi-part file's headers end with an empty one (a single null byte).
  bool at_end_of_parts() {
    const int next = in_.peek();
    if (next == std::char_traits<char>::eof()) fail("the file ends in its list of parts");
    if (next != 0) return false;
    in_.get();
    return true;
  }

  std::string path_;
  std::ifstream in_;
  std::uint64_t size_;
};

}  // namespace

void check_exr_header(const std::string& path) { HeaderWalk(path).run(); }

}  // namespace halo
