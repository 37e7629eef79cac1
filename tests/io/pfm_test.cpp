// PFM: values, orientation (bottom-to-top on disk), both endiannesses, and header validation.
#include <doctest/doctest.h>

#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "io/pfm.hpp"

using namespace halo;
namespace fs = std::filesystem;

namespace {

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("halo-pfm-" + std::to_string(::getpid()) + "-" + name);
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

std::string float_bytes(float v, bool big_endian) {
  char b[4];
  std::memcpy(b, &v, 4);
  if (big_endian) std::swap(b[0], b[3]), std::swap(b[1], b[2]);
  return std::string(b, 4);
}

ErrorKind failure(const fs::path& path, std::string& message) {
  try {
    read_pfm(path);
  } catch (const Error& e) {
    message = e.what();
    return e.kind();
  }
  return ErrorKind::Internal;
}

}  // namespace

TEST_CASE("PFM round trip keeps values, size and channels (1 and 3)") {
  for (int channels : {1, 3}) {
    PixelBuffer pixels(5, 3, channels, PixelType::f32);
    for (std::size_t i = 0; i < pixels.sample_count(); ++i)
      pixels.samples<float>()[i] = float(i) * 0.25f - 1.0f;
    const auto path = temp("rt.pfm");
    write_pfm(path, pixels);
    const PixelBuffer back = read_pfm(path);
    CHECK(back.width == 5);
    CHECK(back.height == 3);
    CHECK(back.channels == channels);
    CHECK(back.bytes == pixels.bytes);
    fs::remove(path);
  }
}

TEST_CASE("PFM stores the bottom row first") {
  PixelBuffer pixels(1, 2, 1, PixelType::f32);
  pixels.samples<float>()[0] = 1.0f;  // top
  pixels.samples<float>()[1] = 2.0f;  // bottom
  const auto path = temp("order.pfm");
  write_pfm(path, pixels);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  CHECK(bytes.starts_with("Pf\n1 2\n-1.0\n"));
  CHECK(bytes.substr(bytes.size() - 8) == float_bytes(2.0f, false) + float_bytes(1.0f, false));
  fs::remove(path);
}

TEST_CASE("PFM reads big-endian files (positive scale)") {
  const auto path = temp("be.pfm");
  write_bytes(path, "PF\n1 1\n1.0\n" + float_bytes(0.5f, true) + float_bytes(-2.0f, true) +
                        float_bytes(1e6f, true));
  const PixelBuffer pixels = read_pfm(path);
  CHECK(pixels.samples<float>()[0] == 0.5f);
  CHECK(pixels.samples<float>()[1] == -2.0f);
  CHECK(pixels.samples<float>()[2] == 1e6f);
  fs::remove(path);
}

TEST_CASE("PFM header comments are skipped, as vips writes them; a runaway one is refused") {
  const auto path = temp("comment.pfm");
  write_bytes(path, "PF\n#vips2ppm - 2026-11-23T22:04:13\n1 1\n# scale\n-1.0\n" +
                        float_bytes(0.25f, false) + float_bytes(0.5f, false) +
                        float_bytes(2.0f, false));
  const PixelBuffer pixels = read_pfm(path);
  CHECK(pixels.samples<float>()[0] == 0.25f);
  CHECK(pixels.samples<float>()[2] == 2.0f);
  write_bytes(path, "PF\n#" + std::string(5000, 'x') + "\n1 1\n-1.0\n" + std::string(12, '\0'));
  std::string message;
  CHECK(failure(path, message) == ErrorKind::BadData);
  CHECK(message.find("header comment over 4096 bytes") != std::string::npos);
  fs::remove(path);
}

TEST_CASE("PFM headers are validated before allocating") {
  std::string message;
  const auto path = temp("bad.pfm");
  write_bytes(path, "P6\n1 1\n255\nabc");
  CHECK(failure(path, message) == ErrorKind::BadData);
  CHECK(message.find("not a PFM file") != std::string::npos);

  write_bytes(path, "PF\n100000 100000\n-1.0\n" + std::string(64, '\0'));
  CHECK(failure(path, message) == ErrorKind::BadData);
  CHECK(message.find("truncated PFM") != std::string::npos);

  write_bytes(path, "PF\n9999999999 2\n-1.0\n");
  CHECK(failure(path, message) == ErrorKind::BadData);
  CHECK(message.find("bad PFM width") != std::string::npos);

  write_bytes(path, "Pf\n2 -3\n-1.0\n");
  CHECK(failure(path, message) == ErrorKind::BadData);
  CHECK(message.find("bad PFM height") != std::string::npos);

  write_bytes(path, "Pf\n1 1\n0\n" + float_bytes(1, false));
  CHECK(failure(path, message) == ErrorKind::BadData);
  CHECK(message.find("bad PFM scale") != std::string::npos);

  write_bytes(path, "");
  CHECK(failure(path, message) == ErrorKind::BadData);
  fs::remove(path);

  CHECK(failure(temp("missing.pfm"), message) == ErrorKind::NoInput);
  CHECK(message.find("no such file") != std::string::npos);
}

TEST_CASE("PFM refuses channel counts it cannot hold") {
  const PixelBuffer rgba(2, 2, 4, PixelType::f32, true);
  CHECK_THROWS_WITH_AS(write_pfm(temp("rgba.pfm"), rgba),
                       doctest::Contains("PFM holds 1 or 3 channels"), Error);
}
