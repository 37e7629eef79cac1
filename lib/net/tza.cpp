// Reading OIDN's Tensor Archives: every offset and size checked against the file's length, so a
// truncated or altered file is a one-line error, never a read past the end.
#include "net/tza.hpp"

#include <bit>
#include <cstdint>
#include <cstring>

#include "core/error.hpp"
#include "core/paths.hpp"

namespace halo {

namespace {

class Cursor {
 public:
  Cursor(std::span<const std::byte> bytes, std::string what)
      : bytes_(bytes), what_(std::move(what)) {}

  template <class T>
  T take() {
    need(sizeof(T), "a field");
    T value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;  // the archive is little-endian, as every machine halo runs on
  }
  std::string text(std::size_t n) {
    need(n, "a name");
    std::string s(reinterpret_cast<const char*>(bytes_.data() + at_), n);
    at_ += n;
    return s;
  }
  void seek(std::uint64_t offset) {
    if (offset > bytes_.size()) fail("its table offset is past the end of the file");
    at_ = std::size_t(offset);
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(ErrorKind::BadData, what_ + ": not a valid OIDN weights file: " + why);
  }

 private:
  void need(std::size_t n, const char* what) const {
    if (bytes_.size() - at_ < n)
      fail(std::string("truncated (") + what + " at byte " + std::to_string(at_) +
           " runs past the end)");
  }

  std::span<const std::byte> bytes_;
  std::string what_;
  std::size_t at_ = 0;
};

static_assert(std::endian::native == std::endian::little, "the .tza reader assumes little-endian");

Tensor read_tensor(Cursor& in, std::span<const std::byte> bytes, const std::string& name) {
  Tensor t;
  const int rank = in.take<std::uint8_t>();
  std::size_t count = 1;
  for (int i = 0; i < rank; ++i) {
    const std::uint32_t d = in.take<std::uint32_t>();
    if (d == 0 || d > (1u << 20))
      in.fail("tensor " + name + " has a dimension of " + std::to_string(d));
    t.dims.push_back(int(d));
    count *= d;
  }
  t.layout = in.text(std::size_t(rank));
  if (t.layout != "oihw" && t.layout != "x")
    in.fail("tensor " + name + " has the unknown layout '" + t.layout + "'");
  const char type = in.take<char>();
  const std::size_t size = type == 'h' ? 2 : type == 'f' ? 4 : 0;
  if (!size)
    in.fail("tensor " + name + " has the unknown data type '" + std::string(1, type) + "'");
  const std::uint64_t offset = in.take<std::uint64_t>();
  if (offset > bytes.size() || (bytes.size() - offset) / size < count)
    in.fail("the data of tensor " + name + " runs past the end of the file");
  t.values.resize(count);
  const std::byte* data = bytes.data() + offset;
  for (std::size_t i = 0; i < count; ++i) {
    if (size == 2) {
      std::uint16_t h;
      std::memcpy(&h, data + 2 * i, 2);
      t.values[i] = half_to_float(h);
    } else {
      std::memcpy(&t.values[i], data + 4 * i, 4);
    }
  }
  return t;
}

}  // namespace

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1f;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // infinity, NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // zero
  } else {        // subnormal: normalise
    int e = 113;
    while (!(mantissa & 0x400u)) mantissa <<= 1, --e;
    bits = sign | (std::uint32_t(e) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

TensorMap parse_tza(std::span<const std::byte> bytes, const std::string& what) {
  Cursor in(bytes, what);
  if (in.take<std::uint16_t>() != 0x41D7) in.fail("its magic number is not 0x41D7");
  const int major = in.take<std::uint8_t>();
  in.take<std::uint8_t>();  // minor: additions that readers of the major version ignore
  if (major != 2) in.fail("version " + std::to_string(major) + ", halo reads version 2");
  in.seek(in.take<std::uint64_t>());
  const std::uint32_t count = in.take<std::uint32_t>();
  TensorMap tensors;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::string name = in.text(in.take<std::uint16_t>());
    tensors[name] = read_tensor(in, bytes, name);
  }
  return tensors;
}

TensorMap read_tza(const std::filesystem::path& path) {
  const std::string bytes = read_small_file(path.string(), std::size_t(256) << 20, "weights file");
  const auto* data = reinterpret_cast<const std::byte*>(bytes.data());
  return parse_tza({data, bytes.size()}, path.string());
}

}  // namespace halo
