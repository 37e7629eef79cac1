// An input is checked on the descriptor it was opened on and read only through it: every
// reader, halo's own and OpenImageIO's, reads the file that was checked even when its name
// points elsewhere by the time the pixels are read.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/checked_file.hpp"
#include "core/error.hpp"
#include "io/image_io.hpp"
#include "io/temp_dir.hpp"

using namespace halo;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

PixelBuffer noise(int width, int height, int channels, unsigned seed) {
  PixelBuffer pixels(width, height, channels, PixelType::f32);
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < pixels.sample_count(); ++i)
    pixels.samples<float>()[i] = float(rng() % 256) / 255.0f;
  return pixels;
}

std::vector<float> rows_of(ImageReader& reader) {
  const ImageHeader& h = reader.header();
  const int n = int(h.channels.size());
  std::vector<float> all(std::size_t(h.width) * h.height * n);
  reader.read_rows(h.height, 0, n, PixelType::f32, reinterpret_cast<std::byte*>(all.data()));
  return all;
}

ErrorKind kind_of_open(const std::string& path) {
  try {
    CheckedFile::open(path);
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::Internal;
}

}  // namespace

TEST_CASE("every reader reads the file that was checked, not what its name points to later") {
  TempDir dir;
  // PNG, JPEG, PFM and WebP: halo's readers; EXR, TIFF, HDR: OpenImageIO through a proxy;
  // SGI: an OpenImageIO reader without proxies, given the descriptor's /proc entry.
  for (const char* ext : {".png", ".jpg", ".pfm", ".webp", ".exr", ".tif", ".hdr", ".sgi"}) {
    INFO(std::string(ext));
    const std::string path = dir / (std::string("in") + ext);
    const std::string same = dir / (std::string("same") + ext);
    const std::string other = dir / (std::string("other") + ext);
    const SampleType type = storable_type(path, SampleType::u8);
    write_image(path, noise(13, 7, 3, 1), type);
    fs::copy_file(path, same);
    write_image(other, noise(5, 3, 3, 2), type);
    const auto file = CheckedFile::open(path);
    fs::rename(other, path);  // the name now points to another image
    auto reader = open_reader(file);
    CHECK(reader->header().width == 13);
    CHECK(reader->header().height == 7);
    auto expected = open_reader(same);
    CHECK(rows_of(*reader) == rows_of(*expected));
    // A second reader of the same file starts at its first byte (a rewind after a failed
    // device reads the input again this way).
    auto again = open_reader(file);
    CHECK(rows_of(*again) == rows_of(*open_reader(same)));
  }
}

TEST_CASE("an input that is not a regular, non-empty file is refused on its descriptor") {
  TempDir dir;
  CHECK(kind_of_open(dir / "missing.png") == ErrorKind::NoInput);
  CHECK(kind_of_open(dir.path.string()) == ErrorKind::NoInput);  // a folder
  std::ofstream(dir / "empty.png").close();
  CHECK(kind_of_open(dir / "empty.png") == ErrorKind::BadData);
  // A FIFO without a writer: refused at once, not waited on.
  REQUIRE(::mkfifo((dir / "fifo.png").c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(CheckedFile::open(dir / "fifo.png"), doctest::Contains("a FIFO"), Error);
  std::ofstream(dir / "unreadable.png") << "x";
  fs::permissions(dir / "unreadable.png", fs::perms::none);
  if (::geteuid() != 0)  // root reads it anyway
    CHECK_THROWS_WITH_AS(CheckedFile::open(dir / "unreadable.png"), doctest::Contains("permission"),
                         Error);
}

TEST_CASE("a checked file's streams keep positions of their own") {
  TempDir dir;
  std::string bytes(10000, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i * 7 % 251);
  std::ofstream(dir / "bytes", std::ios::binary) << bytes;
  const auto file = CheckedFile::open(dir / "bytes");
  CHECK(file->size() == bytes.size());
  const HostBytes whole = file->read_whole(bytes.size(), "the bytes");
  CHECK(std::string(reinterpret_cast<const char*>(whole.data()), whole.size()) == bytes);
  CHECK_THROWS_AS(file->read_whole(bytes.size() - 1, "the bytes"), Error);

  // Two istreams over one file: seeks past the buffer, back into it, from the end.
  CheckedFileStream a(file), b(file);
  char got[3] = {};
  a.seekg(5000);
  b.read(got, 3);
  CHECK(std::string(got, 3) == bytes.substr(0, 3));
  a.read(got, 3);
  CHECK(std::string(got, 3) == bytes.substr(5000, 3));
  CHECK(a.tellg() == std::streampos(5003));
  a.seekg(-2, std::ios::cur);
  CHECK(a.get() == static_cast<unsigned char>(bytes[5001]));
  a.seekg(-1, std::ios::end);
  CHECK(a.get() == static_cast<unsigned char>(bytes.back()));
  CHECK(a.get() == std::char_traits<char>::eof());

  // Two stdio streams: each from byte 0, seeks and reads apart.
  std::FILE* s = open_stream(file);
  std::FILE* t = open_stream(file);
  CHECK(std::fseek(s, 9000, SEEK_SET) == 0);
  CHECK(std::fgetc(t) == static_cast<unsigned char>(bytes[0]));
  CHECK(std::fgetc(s) == static_cast<unsigned char>(bytes[9000]));
  CHECK(std::ftell(s) == 9001);
  CHECK(std::fseek(t, -1, SEEK_END) == 0);
  CHECK(std::fgetc(t) == static_cast<unsigned char>(bytes.back()));
  CHECK(std::fgetc(t) == EOF);
  std::fclose(s);
  std::fclose(t);
}
