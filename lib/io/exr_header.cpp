#include "io/exr_header.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>

#include "core/error.hpp"
#include "core/limits.hpp"

namespace halo {

namespace {

// The version field's multi-part flag (OpenEXR's file layout document).
constexpr std::uint32_t multipart = 0x1000;
// Names are at most 31 characters, or 255 with the long-names flag; 255 is allowed always, as
// only sizes matter here.
constexpr std::size_t max_name = 255;

// The type of each attribute the OpenEXR format defines for every part, or null.
const char* standard_type(const std::string& attribute) {
  static const std::map<std::string, const char*> types = {{"channels", "chlist"},
                                                           {"compression", "compression"},
                                                           {"dataWindow", "box2i"},
                                                           {"displayWindow", "box2i"},
                                                           {"lineOrder", "lineOrder"},
                                                           {"pixelAspectRatio", "float"},
                                                           {"screenWindowCenter", "v2f"},
                                                           {"screenWindowWidth", "float"},
                                                           {"tiles", "tiledesc"},
                                                           {"type", "string"},
                                                           {"name", "string"},
                                                           {"chunkCount", "int"},
                                                           {"version", "int"}};
  const auto found = types.find(attribute);
  return found == types.end() ? nullptr : found->second;
}

// The bytes OpenEXR reads for a value of a fixed-size type whatever the declared size says;
// 0 for the types it reads by their declared size or by their content.
std::size_t fixed_size(const std::string& type) {
  static const std::map<std::string, std::size_t> sizes = {
      {"box2i", 16},      {"box2f", 16},   {"chromaticities", 32},
      {"compression", 1}, {"double", 8},   {"envmap", 1},
      {"float", 4},       {"int", 4},      {"keycode", 28},
      {"lineOrder", 1},   {"m33f", 36},    {"m33d", 72},
      {"m44f", 64},       {"m44d", 128},   {"rational", 8},
      {"tiledesc", 9},    {"timecode", 8}, {"v2i", 8},
      {"v2f", 8},         {"v2d", 16},     {"v3i", 12},
      {"v3f", 12},        {"v3d", 24},     {"deepImageState", 1}};
  const auto found = sizes.find(type);
  return found == sizes.end() ? 0 : found->second;
}

// OpenEXR stores integers little-endian.
std::uint32_t u32_at(const void* bytes) {
  const auto* b = static_cast<const unsigned char*>(bytes);
  return std::uint32_t(b[0]) | std::uint32_t(b[1]) << 8 | std::uint32_t(b[2]) << 16 |
         std::uint32_t(b[3]) << 24;
}
std::int32_t i32_at(const void* bytes) {
  return std::int32_t(u32_at(bytes));
}

class HeaderWalk {
 public:
  explicit HeaderWalk(const std::shared_ptr<const CheckedFile>& file)
      : path_(file->path()), in_(file), size_(file->size()) {}

  void run() {
    std::array<unsigned char, 8> start{};
    read(start.data(), start.size(), "its version field");
    const std::uint32_t flags = u32_at(&start[4]);
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
    std::size_t channels = 0;
    std::uint64_t tile_pixels = 0;
    std::string tiles;
    for (std::string attribute; !(attribute = name("an attribute name")).empty();) {
      const std::string type = name("the type of attribute '" + attribute + "'");
      std::array<unsigned char, 4> b{};
      read(b.data(), b.size(), "the size of attribute '" + attribute + "'");
      const std::int64_t bytes = i32_at(b.data());
      if (bytes < 0 || std::uint64_t(bytes) > size_ - offset())
        fail("attribute '" + attribute + "' declares " + std::to_string(bytes) +
             " bytes where the file has " + std::to_string(size_ - offset()) + " left");
      // A standard attribute of another type is damage OpenEXR's C++ reader refuses, where
      // its C core reads on as if the attribute were absent (a compression not read is none).
      if (const char* want = standard_type(attribute); want && type != want)
        fail("attribute '" + attribute + "' has type " + type + ", not " + want);
      if (const std::size_t fixed = fixed_size(type); fixed && std::size_t(bytes) != fixed)
        fail("attribute '" + attribute + "' of type " + type + " declares " +
             std::to_string(bytes) + " bytes, not the type's " + std::to_string(fixed));
      if (attribute == "dataWindow" && type == "box2i") {
        data_window = true;
        check_window(n);
      } else if (attribute == "tiles" && type == "tiledesc") {
        std::array<unsigned char, 9> t{};
        read(t.data(), t.size(), "the tile description");
        tile_pixels = std::uint64_t(u32_at(&t[0])) * u32_at(&t[4]);
        tiles = std::to_string(u32_at(&t[0])) + "x" + std::to_string(u32_at(&t[4]));
      } else if (type == "chlist" || type == "preview" || type == "stringvector") {
        if (bytes > (16 << 20))
          fail("attribute '" + attribute + "' declares " + std::to_string(bytes) + " bytes of " +
               type);
        std::string value(std::size_t(bytes), '\0');
        read(value.data(), value.size(), "attribute '" + attribute + "'");
        const std::size_t count = check_structured(attribute, type, value);
        if (attribute == "channels") channels = count;
      } else {
        in_.seekg(bytes, std::ios::cur);
      }
    }
    if (!data_window) fail("part " + std::to_string(n) + " has no dataWindow");
    // OpenEXR sizes its tile buffers from the tile size when it opens the file: two tiles of
    // every channel at 4 bytes a sample, as open_reader counts a row of tiles for the rest.
    if (tile_pixels)
      check_memory(part_name(n), 2.0 * double(tile_pixels) * double(channels) * 4,
                   "a tile buffer of " + tiles + " pixels");
  }

  // xmin, ymin, xmax, ymax: the part's size checked against --max-pixels before OpenEXR
  // sizes its line-offset table from it.
  void check_window(int n) {
    std::array<std::int32_t, 4> box{};
    std::array<unsigned char, 16> b{};
    read(b.data(), b.size(), "the dataWindow");
    for (int i = 0; i < 4; ++i) box[i] = i32_at(&b[4 * i]);
    check_image_size(part_name(n), std::int64_t(box[2]) - box[0] + 1,
                     std::int64_t(box[3]) - box[1] + 1);
  }

  // Values OpenEXR parses by their content rather than their declared size: each must fill
  // exactly the bytes it declares, or OpenEXR reads the rest of the header from another place
  // than this walk (a fuzzed file went on to a 1.8 GB attribute that way).
  // Returns the number of channels of a chlist.
  std::size_t check_structured(const std::string& attribute, const std::string& type,
                               const std::string& v) {
    const auto int_at = [&](std::size_t i) { return i32_at(&v[i]); };
    const std::string what = "attribute '" + attribute + "' (" + type + ")";
    if (type == "preview") {  // width, height, then width x height RGBA bytes
      if (v.size() < 8) fail(what + " is cut short");
      const std::uint64_t pixels =
          std::uint64_t(std::uint32_t(int_at(0))) * std::uint32_t(int_at(4));
      if (8 + 4 * pixels != v.size())
        fail(what + " declares " + std::to_string(std::uint32_t(int_at(0))) + "x" +
             std::to_string(std::uint32_t(int_at(4))) + " pixels in " + std::to_string(v.size()) +
             " bytes");
      return 0;
    }
    if (type == "stringvector") {  // strings, each after its length
      for (std::size_t at = 0; at < v.size();) {
        if (at + 4 > v.size() || int_at(at) < 0 || at + 4 + std::size_t(int_at(at)) > v.size())
          fail(what + " holds a string longer than the attribute");
        at += 4 + std::size_t(int_at(at));
      }
      return 0;
    }
    // chlist: each channel a name, its pixel type (0 uint, 1 half, 2 float), pLinear and 3
    // reserved bytes, x and y sampling; a null name ends the list. OpenImageIO aborts the
    // program (an assertion Debian's build keeps) on any other pixel type.
    std::size_t at = 0, count = 0;
    while (at < v.size() && v[at]) {
      const std::size_t end = v.find('\0', at);
      if (end == std::string::npos || end + 17 > v.size()) fail(what + " is cut short");
      const std::string channel = v.substr(at, end - at);
      const std::int32_t pixel_type = int_at(end + 1);
      if (pixel_type < 0 || pixel_type > 2)
        fail("channel '" + channel + "' has pixel type " + std::to_string(pixel_type) +
             " (0 uint, 1 half, 2 float)");
      if (int_at(end + 9) <= 0 || int_at(end + 13) <= 0)
        fail("channel '" + channel + "' has a sampling rate below 1");
      at = end + 17;
      ++count;
    }
    if (at + 1 != v.size())
      fail(what + " holds " + std::to_string(at + 1) + " bytes of channels where it declares " +
           std::to_string(v.size()));
    return count;
  }

  std::string part_name(int n) const {
    return n > 1 ? path_ + " (part " + std::to_string(n) + ")" : path_;
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
  CheckedFileStream in_;
  std::uint64_t size_;
};

}  // namespace

void check_exr_header(const std::shared_ptr<const CheckedFile>& file) {
  // The files checked lately: a multi-part file read part by part (compare -a) walks its
  // headers once, not once a part. Held weakly, so a file closed is never taken for a new one
  // at its address.
  static std::mutex mutex;
  static std::deque<std::weak_ptr<const CheckedFile>> checked;
  constexpr std::size_t kRemembered = 8;
  {
    const std::lock_guard lock(mutex);
    for (const auto& seen : checked)
      if (seen.lock() == file) return;
  }
  HeaderWalk(file).run();
  const std::lock_guard lock(mutex);
  checked.push_back(file);
  if (checked.size() > kRemembered) checked.pop_front();
}

}  // namespace halo
