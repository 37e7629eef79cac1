// Progressive JPEGs: halo keeps their coefficients in memory of its own (huge pages), which
// must decode exactly as libjpeg-turbo's own memory manager does.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <vector>

#include <jpeglib.h>  // after <cstdio> and <cstddef>, which it needs

#include "core/error.hpp"
#include "io/codec.hpp"
#include "io/temp_dir.hpp"

using namespace halo;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

// A smooth image with noise, written progressive (libjpeg's simple progression: DC, then AC
// bands with successive approximation) with 2x2 chroma subsampling.
void write_progressive(const fs::path& path, int width, int height) {
  std::vector<std::uint8_t> rgb(std::size_t(width) * height * 3);
  std::mt19937 rng(7);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c)
        rgb[(std::size_t(y) * width + x) * 3 + c] =
            std::uint8_t((x * (c + 1) + y * 2) % 200 + rng() % 40);
  jpeg_compress_struct info{};
  jpeg_error_mgr errors{};
  info.err = jpeg_std_error(&errors);
  jpeg_create_compress(&info);
  std::FILE* file = std::fopen(path.c_str(), "wb");
  REQUIRE(file);
  jpeg_stdio_dest(&info, file);
  info.image_width = JDIMENSION(width), info.image_height = JDIMENSION(height);
  info.input_components = 3, info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, 90, TRUE);
  jpeg_simple_progression(&info);
  jpeg_start_compress(&info, TRUE);
  for (int y = 0; y < height; ++y) {
    JSAMPROW row = rgb.data() + std::size_t(y) * width * 3;
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  std::fclose(file);
}

// libjpeg-turbo's decode with its own memory manager, at 1/scale.
std::vector<std::uint8_t> libjpeg_decode(const fs::path& path, int scale) {
  jpeg_decompress_struct info{};
  jpeg_error_mgr errors{};
  info.err = jpeg_std_error(&errors);
  jpeg_create_decompress(&info);
  std::FILE* file = std::fopen(path.c_str(), "rb");
  REQUIRE(file);
  jpeg_stdio_src(&info, file);
  jpeg_read_header(&info, TRUE);
  info.out_color_space = JCS_RGB;
  info.scale_num = 1, info.scale_denom = unsigned(scale);
  jpeg_start_decompress(&info);
  CHECK(info.progressive_mode);
  std::vector<std::uint8_t> rgb(std::size_t(info.output_width) * info.output_height * 3);
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = rgb.data() + std::size_t(info.output_scanline) * info.output_width * 3;
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  std::fclose(file);
  return rgb;
}

}  // namespace

TEST_CASE("a progressive JPEG decodes as libjpeg-turbo's own memory manager decodes it") {
  TempDir dir;
  for (const auto& [w, h] : {std::pair{1, 1}, {37, 21}, {1023, 517}, {16, 300}}) {
    write_progressive(dir / "p.jpg", w, h);
    for (const int shrink : {1, 2, 4, 8}) {
      INFO(w, "x", h, " at 1/", shrink);
      const std::vector<std::uint8_t> want = libjpeg_decode(dir / "p.jpg", shrink);
      auto reader = open_reader(dir / "p.jpg", shrink);
      const ImageHeader& header = reader->header();
      std::vector<std::uint8_t> got(std::size_t(header.width) * header.height * 3);
      for (int y = 0; y < header.height; y += 7)  // strips of 7 rows, the last shorter
        reader->read_rows(
            std::min(7, header.height - y), 0, 3, PixelType::u8,
            reinterpret_cast<std::byte*>(got.data()) + std::size_t(y) * header.width * 3);
      CHECK(got == want);
    }
  }
}

TEST_CASE("a progressive JPEG cut short is an error naming the file, its memory released") {
  TempDir dir;
  write_progressive(dir / "p.jpg", 300, 200);
  const auto size = fs::file_size(dir / "p.jpg");
  fs::resize_file(dir / "p.jpg", size / 2);
  auto reader = open_reader(dir / "p.jpg");
  std::vector<std::uint8_t> rows(std::size_t(300) * 200 * 3);
  CHECK_THROWS_WITH_AS(
      reader->read_rows(200, 0, 3, PixelType::u8, reinterpret_cast<std::byte*>(rows.data())),
      doctest::Contains("p.jpg"), Error);
}
