// Streaming through the real binary: strips give the whole image's output in every format,
// halo's PNG encoder writes what any decoder reads back, an image larger than the device's
// largest buffer runs on the device in bounded memory, and the options that size strips and
// encode outputs are checked.
#include <doctest/doctest.h>
#include <zlib.h>

#include <OpenImageIO/imageio.h>

#include <sys/resource.h>
#include <sys/wait.h>

#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <vector>

#include "cli/sandbox.hpp"
#include "io/image_io.hpp"

using namespace halo;
using namespace halo::test;
namespace fs = std::filesystem;

namespace {

// Pixels of a file read by OpenImageIO (libpng for PNG), not by halo's decoder.
std::vector<std::uint8_t> read_with_oiio(const std::string& path, int& channels) {
  OIIO::ImageSpec config;
  config.attribute("oiio:UnassociatedAlpha", 1);  // the stored values, as halo keeps them
  auto in = OIIO::ImageInput::open(path, &config);
  REQUIRE(in);
  const OIIO::ImageSpec& spec = in->spec();
  channels = spec.nchannels;
  std::vector<std::uint8_t> bytes(spec.image_bytes());
  REQUIRE(in->read_image(0, 0, 0, spec.nchannels, spec.format, bytes.data()));
  return bytes;
}

// A PNG in the seven Adam7 passes, written by hand (filter 0 on every row), for the decoder's
// interlaced path.
void write_interlaced_png(const std::string& path, const PixelBuffer& rgb) {
  static const int pass[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                                 {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
  std::vector<std::uint8_t> raw;
  for (const auto& p : pass)
    for (int y = p[1]; y < rgb.height; y += p[3]) {
      if (p[0] >= rgb.width) break;
      raw.push_back(0);
      for (int x = p[0]; x < rgb.width; x += p[2])
        for (int c = 0; c < 3; ++c)
          raw.push_back(rgb.samples<std::uint8_t>()[(y * rgb.width + x) * 3 + c]);
    }
  uLongf size = compressBound(uLong(raw.size()));
  std::vector<std::uint8_t> z(size);
  REQUIRE(compress(z.data(), &size, raw.data(), uLong(raw.size())) == Z_OK);
  z.resize(size);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f);
  const auto put32 = [&](std::uint32_t v) {
    const std::uint8_t b[4] = {std::uint8_t(v >> 24), std::uint8_t(v >> 16), std::uint8_t(v >> 8),
                               std::uint8_t(v)};
    std::fwrite(b, 1, 4, f);
  };
  const auto chunk = [&](const char* type, const std::vector<std::uint8_t>& data) {
    put32(std::uint32_t(data.size()));
    std::fwrite(type, 1, 4, f);
    if (!data.empty()) std::fwrite(data.data(), 1, data.size(), f);  // IEND: no data pointer
    uLong crc = crc32(0, reinterpret_cast<const Bytef*>(type), 4);
    put32(std::uint32_t(crc32(crc, data.data(), uInt(data.size()))));
  };
  std::fwrite("\x89PNG\r\n\x1a\n", 1, 8, f);
  std::vector<std::uint8_t> ihdr(13, 0);
  for (int i = 0; i < 4; ++i) ihdr[i] = std::uint8_t(rgb.width >> (24 - 8 * i));
  for (int i = 0; i < 4; ++i) ihdr[4 + i] = std::uint8_t(rgb.height >> (24 - 8 * i));
  ihdr[8] = 8, ihdr[9] = 2, ihdr[12] = 1;  // 8-bit RGB, Adam7
  chunk("IHDR", ihdr);
  chunk("IDAT", z);
  chunk("IEND", {});
  std::fclose(f);
}

}  // namespace

TEST_CASE("strips give the whole image's output in every format, and verify strip by strip") {
  Sandbox box;
  struct Case {
    const char* name;
    PixelBuffer pixels;
    SampleType type;
  };
  const Case cases[] = {{"rgb.png", photo(61, 47, 3), SampleType::u8},
                        {"rgba.png", photo(61, 47, 4), SampleType::u8},
                        {"deep.png", photo(61, 47, 3, PixelType::u16), SampleType::u16},
                        {"grey.png", photo(61, 47, 1), SampleType::u8},
                        {"float.pfm", photo(61, 47, 3, PixelType::f32), SampleType::f32},
                        {"half.exr", photo(61, 47, 4, PixelType::f32), SampleType::half},
                        {"deep.tif", photo(61, 47, 3, PixelType::u16), SampleType::u16},
                        {"photo.jpg", photo(61, 47, 3), SampleType::u8}};
  for (const auto& c : cases) {
    INFO(c.name);
    write_image(box / c.name, c.pixels, c.type);
    const std::string out_ext = fs::path(c.name).extension().string();
    const std::string chain = " -f gaussian:r=3 -f sharpen:border=reflect -f box:r=1 ";
    const Result strips = box.halo("run " + box / c.name + chain + "-o " + box / ("s" + out_ext) +
                                   " --strip-rows 5 --verify -v");
    CHECK(strips.code == 0);
    CHECK(has(strips.err, "strips of 5 rows (reach 5)"));
    CHECK(has(strips.out, "verify decode"));
    const Result whole = box.halo("run " + box / c.name + chain + "-o " + box / ("w" + out_ext) +
                                  " --strip-rows 1000");
    CHECK(whole.code == 0);
    CHECK(read_image({box / ("s" + out_ext), {}}).pixels.bytes ==
          read_image({box / ("w" + out_ext), {}}).pixels.bytes);
  }
}

TEST_CASE("halo's PNG encoder: every level and filter reads back exactly, through libpng too") {
  Sandbox box;
  // Sizes from one pixel to several 512 KiB blocks; 16-bit and alpha.
  std::vector<PixelBuffer> images = {photo(1, 1, 3), photo(7, 5, 2, PixelType::u16),
                                     photo(333, 211, 3), photo(701, 900, 4)};
  images[1].alpha = true;
  for (const auto& pixels : images)
    for (const char* filter : {"none", "sub", "up", "average", "paeth", "adaptive"})
      for (const char* level : {"0", "1", "6", "9"}) {
        INFO(pixels.width, "x", pixels.height, "x", pixels.channels, " filter ",
             std::string(filter), " level ", std::string(level));
        const SampleType type = pixels.type == PixelType::u16 ? SampleType::u16 : SampleType::u8;
        const std::string path = box / "enc.png";
        write_image(path, pixels, type, {.compression = level, .png_filter = filter, .threads = 3});
        CHECK(read_image({path, {}}).pixels.bytes == pixels.bytes);
        int channels = 0;
        const auto via_libpng = read_with_oiio(path, channels);
        CHECK(channels == pixels.channels);
        if (type == SampleType::u8) {
          CHECK(std::memcmp(via_libpng.data(), pixels.bytes.data(), pixels.bytes.size()) == 0);
        } else {  // OpenImageIO hands 16-bit samples over in host order too
          CHECK(via_libpng.size() == pixels.bytes.size());
          CHECK(std::memcmp(via_libpng.data(), pixels.bytes.data(), pixels.bytes.size()) == 0);
        }
      }
}

TEST_CASE("interlaced PNG inputs are read whole, with the same pixels") {
  Sandbox box;
  const PixelBuffer rgb = photo(37, 29, 3);
  write_interlaced_png(box / "adam7.png", rgb);
  CHECK(read_image({box / "adam7.png", {}}).pixels.bytes == rgb.bytes);
  const Result r = box.halo("run " + box / "adam7.png" + " -f box:r=2 -o " + box / "out.png" +
                            " --strip-rows 4 --verify");
  CHECK(r.code == 0);
}

// A tiled file written by OpenImageIO: tiles of 16x16 (TIFF wants multiples of 16) that do not
// divide the image, and for EXR a data window that does not start at row 0.
void write_tiled(const std::string& path, const PixelBuffer& pixels, OIIO::TypeDesc stored,
                 int y_origin, int tile = 16) {
  OIIO::ImageSpec spec(pixels.width, pixels.height, pixels.channels, stored);
  spec.tile_width = tile;
  spec.tile_height = tile;
  spec.y = spec.full_y = y_origin;
  if (pixels.alpha) spec.alpha_channel = pixels.channels - 1;
  auto out = OIIO::ImageOutput::create(path);
  REQUIRE(out);
  REQUIRE(out->open(path, spec));
  REQUIRE(out->write_image(
      pixels.type == PixelType::u8 ? OIIO::TypeDesc::UINT8 : OIIO::TypeDesc::UINT16,
      pixels.bytes.data()));
  REQUIRE(out->close());
}

TEST_CASE("tiled EXR and TIFF inputs give the pixels of their scanline twins, in any strips") {
  Sandbox box;
  struct Case {
    const char* tiled;
    const char* scanline;
    PixelBuffer pixels;
    OIIO::TypeDesc stored;
    SampleType type;
    int y_origin;
  };
  const Case cases[] = {
      {"t.exr", "s.exr", photo(37, 23, 3, PixelType::u16), OIIO::TypeDesc::HALF, SampleType::half,
       5},
      {"t.tif", "s.tif", photo(37, 23, 4, PixelType::u16), OIIO::TypeDesc::UINT16, SampleType::u16,
       0},
      {"g.tif", "h.tif", photo(5, 3, 1), OIIO::TypeDesc::UINT8, SampleType::u8, 0}};
  for (const auto& c : cases) {
    INFO(std::string(c.tiled));
    write_tiled(box / c.tiled, c.pixels, c.stored, c.y_origin);
    write_image(box / c.scanline, c.pixels, c.type);
    // The scanline twin once (strips equal the whole image: strips_test), the tiled file in
    // strips of every height against it.
    CHECK(box.halo("run " + box / c.scanline + " -f box:r=2 -o " + box / "out-s.tif").code == 0);
    const PixelBuffer twin = read_image({box / "out-s.tif", {}}).pixels;
    for (const char* strip : {"1", "3", "8", "64"}) {
      INFO("strip rows ", std::string(strip));
      const std::string args = std::string(" -f box:r=2 --strip-rows ") + strip + " -o ";
      const Result tiled = box.halo("run " + box / c.tiled + args + box / "out-t.tif --verify");
      CHECK_MESSAGE(tiled.code == 0, tiled.err);
      CHECK(read_image({box / "out-t.tif", {}}).pixels.bytes == twin.bytes);
    }
  }
  // Tiles far wider than the image: a reader decodes whole tiles, so their size is what
  // --max-memory is checked against: halo's TIFF reader holds one tile as stored (8192 x 8192
  // x 3 16-bit samples, 384 MiB, and the row of pixels); OpenEXR on the header, before OpenEXR
  // sizes its tile buffers (8192 x 8192 x 3 floats, twice: 1.5 GiB).
  write_tiled(box / "wide.tif", photo(5, 3, 3, PixelType::u16), OIIO::TypeDesc::UINT16, 0, 8192);
  write_tiled(box / "wide.exr", photo(5, 3, 3, PixelType::u16), OIIO::TypeDesc::HALF, 0, 8192);
  CHECK(fs::file_size(box / "wide.exr") < 1000000);
  Result r = box.halo("--max-memory 256M run " + box / "wide.tif" + " -o " + box / "w.pfm");
  CHECK(r.code == 65);
  CHECK_MESSAGE(has(r.err,
                    "wide.tif: a row of 8192x8192 tiles needs 385 MiB of memory, over "
                    "the limit of 256 MiB"),
                r.err);
  CHECK(box.halo("--max-memory 1G run " + box / "wide.tif" + " -o " + box / "w.pfm").code == 0);
  r = box.halo("--max-memory 1G run " + box / "wide.exr" + " -o " + box / "w.pfm");
  CHECK(r.code == 65);
  CHECK_MESSAGE(has(r.err, "wide.exr: a tile buffer of 8192x8192 pixels needs 1.5 GiB of memory"),
                r.err);
}

namespace {

// A 20x10 half EXR of `pixels` (u16) whose data window is at (7, 3) in a 40x20 display window
// at (-2, 0).
void write_placed_exr(const std::string& path, const PixelBuffer& pixels) {
  OIIO::ImageSpec spec(20, 10, 3, OIIO::TypeDesc::HALF);
  spec.x = 7, spec.y = 3, spec.full_x = -2, spec.full_y = 0, spec.full_width = 40,
  spec.full_height = 20;
  auto out = OIIO::ImageOutput::create(path);
  REQUIRE(out->open(path, spec));
  REQUIRE(out->write_image(OIIO::TypeDesc::UINT16, pixels.bytes.data()));
  REQUIRE(out->close());
}

}  // namespace

TEST_CASE("an EXR's data window and display window reach EXR outputs; PNG says it drops them") {
  Sandbox box;
  const PixelBuffer pixels = photo(20, 10, 3, PixelType::u16);
  write_placed_exr(box / "dw.exr", pixels);
  write_image(box / "plain.exr", pixels, SampleType::half);  // the same pixels at (0, 0)

  const std::string chain = " -f box:r=2 --strip-rows 3 -o ";
  Result r = box.halo("-v run " + box / "dw.exr" + chain + box / "o.exr --verify");
  CHECK(r.code == 0);
  CHECK(has(r.err, "o.exr: 20x10 pixels at (7, 3) of the 40x20 frame at (-2, 0)"));
  auto in = OIIO::ImageInput::open(box / "o.exr");
  REQUIRE(in);
  const OIIO::ImageSpec& o = in->spec();
  CHECK((o.x == 7 && o.y == 3 && o.width == 20 && o.height == 10));
  CHECK((o.full_x == -2 && o.full_y == 0 && o.full_width == 40 && o.full_height == 20));
  CHECK(box.halo("run " + box / "plain.exr" + chain + box / "p.exr").code == 0);
  CHECK(read_image({box / "o.exr", {}}).pixels.bytes ==
        read_image({box / "p.exr", {}}).pixels.bytes);

  r = box.halo("run " + box / "dw.exr" + chain + box / "o.png");
  CHECK(r.code == 0);
  CHECK(has(r.err,
            "o.png: png has no data window: the input's 20x10 pixels at (7, 3) of the "
            "40x20 frame at (-2, 0) become a 20x10 image at (0, 0)"));
  r = box.halo("run " + box / "plain.exr" + chain + box / "p.png");
  CHECK_FALSE(has(r.err, "data window"));
}

TEST_CASE("crop keeps an EXR's display window and moves its data window to the window cut") {
  Sandbox box;
  const PixelBuffer pixels = photo(20, 10, 3, PixelType::u16);
  write_placed_exr(box / "dw.exr", pixels);
  const Result r =
      box.halo("run " + box / "dw.exr -f crop:x=4:y=3:w=12:h=5 -f exposure:stops=0 -o " +
               box / "c.exr --verify");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  auto in = OIIO::ImageInput::open(box / "c.exr");
  REQUIRE(in);
  const OIIO::ImageSpec& o = in->spec();
  CHECK((o.x == 11 && o.y == 6 && o.width == 12 && o.height == 5));
  CHECK((o.full_x == -2 && o.full_y == 0 && o.full_width == 40 && o.full_height == 20));
  // The same pixels as oiiotool's crop of the same region (in its display coordinates).
  REQUIRE(std::system(("oiiotool " + box / "dw.exr --crop 12x5+11+6 -o " + box / "o.exr" +
                       " >/dev/null 2>&1")
                          .c_str()) == 0);
  CHECK(read_image({box / "c.exr", {}}).pixels.bytes ==
        read_image({box / "o.exr", {}}).pixels.bytes);
  // A resize after the crop scales the frame with the pixels (oiiotool --resize): the 12x6
  // window at (11, 5) of the 40x20 frame at (-2, 0), halved, is 6x3 at (5, 2) of 20x10 at (-1, 0).
  REQUIRE(
      box.halo("run " + box / "dw.exr -f crop:w=12:h=6 -f resize:w=6 -o " + box / "r.exr").code ==
      0);
  auto resized = OIIO::ImageInput::open(box / "r.exr");
  const OIIO::ImageSpec& s = resized->spec();
  CHECK((s.x == 5 && s.y == 2 && s.width == 6 && s.height == 3));
  CHECK((s.full_x == -1 && s.full_y == 0 && s.full_width == 20 && s.full_height == 10));
}

TEST_CASE("rotate by any angle turns an EXR about its display window's centre, as oiiotool") {
  Sandbox box;
  write_placed_exr(box / "dw.exr", photo(20, 10, 3, PixelType::u16));
  const auto windows = [&](const std::string& name) {
    auto in = OIIO::ImageInput::open(box / name);
    REQUIRE(in);
    const OIIO::ImageSpec& s = in->spec();
    return std::array<int, 8>{s.x,      s.y,      s.width,      s.height,
                              s.full_x, s.full_y, s.full_width, s.full_height};
  };
  const auto oiiotool = [&](const std::string& ops, const std::string& out) {
    REQUIRE(
        std::system(("oiiotool " + box / "dw.exr " + ops + " -o " + box / out + " >/dev/null 2>&1")
                        .c_str()) == 0);
  };
  // The display window (40x20 at (-2, 0)) stays; the data window becomes the box of the
  // turned pixel centres, turned about (18, 10): 22x18 at (7, -1).
  Result r = box.halo("run " + box / "dw.exr -f rotate:angle=30 --strip-rows 4 -o " +
                      box / "fit.exr --verify");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(windows("fit.exr") == std::array<int, 8>{7, -1, 22, 18, -2, 0, 40, 20});
  oiiotool("--rotate:filter=catmull-rom:recompute_roi=1 30", "o-fit.exr");
  CHECK(windows("o-fit.exr") == windows("fit.exr"));
  CHECK(std::system(
            ("idiff -fail 2e-3 " + box / "fit.exr " + box / "o-fit.exr >/dev/null").c_str()) == 0);
  // size=same keeps the data window; after a crop, the turn is still about the frame's centre.
  CHECK(box.halo("run " + box / "dw.exr -f rotate:angle=-115.5:size=same -o " + box / "same.exr")
            .code == 0);
  CHECK(windows("same.exr") == windows("dw.exr"));
  oiiotool("--rotate:filter=catmull-rom -115.5", "o-same.exr");
  CHECK(std::system(
            ("idiff -fail 2e-3 " + box / "same.exr " + box / "o-same.exr >/dev/null").c_str()) ==
        0);
  CHECK(box.halo("run " + box / "dw.exr -f crop:x=4:y=3:w=12:h=5 -f rotate:angle=30 -o " +
                 box / "cut.exr")
            .code == 0);
  CHECK(windows("cut.exr") == std::array<int, 8>{12, 3, 12, 10, -2, 0, 40, 20});
}

// 70 s on the 2-core machine: under the long label alone (tests/CMakeLists.txt).
TEST_CASE("an image larger than the device's largest buffer streams on it in bounded memory" *
          doctest::test_suite("long")) {
  Sandbox box;
  // 16384 x 12000 RGB: 590 MB of samples, 2.36 GB as the float planes filters work on. PoCL
  // told to have 1 GiB (largest buffer 256 MiB) as a small GPU would.
  const int w = 16384, h = 12000;
  PixelBuffer big(w, h, 3, PixelType::u8);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        big.samples<std::uint8_t>()[(std::size_t(y) * w + x) * 3 + c] =
            std::uint8_t((x / 7 + y / 5 + c * 50 + (x * y) % 13) & 0xff);
  write_image(box / "big.png", big, SampleType::u8, {.compression = "1"});
  big = PixelBuffer();
  const Measured m = run_measured(box,
                                  {"-v", "run", box / "big.png", "-f", "sharpen", "-o",
                                   box / "out.png", "--verify", "--strict", "--strip-rows", "16"},
                                  {"POCL_MEMORY_LIMIT=1"});
  INFO(m.err);
  CHECK(m.code == 0);
  CHECK_FALSE(has(m.err, "reference instead"));
  CHECK(has(m.err, "strips of 16 rows"));
  MESSAGE("peak RSS ", m.peak_kib / 1024, " MiB for a 2.36 GB float image");
  CHECK(m.peak_kib < rss_bound_kib(400 * 1024));
  int channels = 0;
  const auto out = read_with_oiio(box / "out.png", channels);
  CHECK(out.size() == std::size_t(w) * h * 3);
}

TEST_CASE("JPEG through libjpeg-turbo: a cut file is an error, not grey rows; alpha flattened") {
  Sandbox box;
  write_image(box / "whole.jpg", photo(300, 200, 3), SampleType::u8);
  fs::copy_file(box / "whole.jpg", box / "cut.jpg");
  fs::resize_file(box / "cut.jpg", fs::file_size(box / "whole.jpg") / 2);
  Result r = box.halo("run " + box / "cut.jpg" + " -o " + box / "o.png");
  CHECK(r.code == 65);
  CHECK(has(r.err, "cut.jpg: cannot read pixels: Premature end of JPEG file"));
  CHECK_FALSE(fs::exists(box / "o.png"));
  std::ofstream(box / "text.jpg") << "not a jpeg at all";
  r = box.halo("run " + box / "text.jpg" + " -o " + box / "o.png");
  CHECK(r.code == 65);
  CHECK(has(r.err, "text.jpg: not JPEG data"));
  std::ofstream(box / "bad.jpg", std::ios::binary)
      << "\xff\xd8\xff\xe0 and then nothing a JPEG holds";
  r = box.halo("run " + box / "bad.jpg" + " -o " + box / "o.png");
  CHECK(r.code == 65);
  CHECK(has(r.err, "bad.jpg: cannot read"));
  // Alpha: put over the background (flatten), as vips does, with a warning.
  write_image(box / "rgba.png", photo(30, 20, 4), SampleType::u8);
  r = box.halo("run " + box / "rgba.png" + " -o " + box / "o.jpg");
  CHECK(r.code == 0);
  CHECK(has(r.err, "cannot store alpha"));
  CHECK(read_image({box / "o.jpg", {}}).pixels.channels == 3);
  write_image(box / "grey.png", photo(30, 20, 1), SampleType::u8);
  r = box.halo("run " + box / "grey.png" + " -o " + box / "grey.jpg --quality 100");
  CHECK(r.code == 0);
  const LoadedImage grey = read_image({box / "grey.jpg", {}});
  CHECK(grey.pixels.channels == 1);
}

TEST_CASE("--max-memory sizes strips; too little for one strip is refused before any work") {
  Sandbox box;
  write_image(box / "in.png", photo(400, 300, 3), SampleType::u8);
  Result r = box.halo("run " + box / "in.png" + " -f gaussian:r=20 -o " + box / "o.png" +
                      " --max-memory 64K");
  CHECK(r.code == 65);
  CHECK(has(r.err, "in.png: a strip of one row (41 rows read) of this 400x300 image needs"));
  CHECK(has(r.err, "over the limit of 64 KiB; --max-memory or HALO_MAX_MEMORY raise it"));
  CHECK_FALSE(fs::exists(box / "o.png"));
  r = box.halo("run " + box / "in.png" + " -f gaussian:r=20 -o " + box / "o.png" +
               " --max-memory 3M -v");
  CHECK(r.code == 0);
  CHECK(has(r.err, "strips of"));
  r = box.halo("run " + box / "in.png" + " -o " + box / "o.png" + " --max-memory lots");
  CHECK(r.code == 64);
  CHECK(has(r.err, "--max-memory 'lots'"));
  r = box.halo("run " + box / "in.png" + " -f box:r=1:border=wrap -o " + box / "o.png" + " -v");
  CHECK(r.code == 0);
  CHECK(has(r.err, "the whole image at once: 'box:r=1:border=wrap': border=wrap reads rows"));
}

TEST_CASE("encoding options: checked against the output's format, and they take effect") {
  Sandbox box;
  write_image(box / "in.png", photo(200, 150, 3), SampleType::u8);
  const std::string in = box / "in.png";
  Result r = box.halo("run " + in + " -o " + box / "o.png" + " --compression zip:12");
  CHECK(r.code == 64);
  CHECK(has(r.err, "zip:0 .. zip:9"));
  r = box.halo("run " + in + " -o " + box / "o.png" + " --quality 80");
  CHECK(r.code == 64);
  CHECK(has(r.err, "--quality applies to JPEG"));
  r = box.halo("run " + in + " -o " + box / "o.exr" + " --png-filter sub");
  CHECK(r.code == 64);
  r = box.halo("run " + in + " -o " + box / "o.exr" + " --compression lzw");
  CHECK(r.code == 64);
  CHECK(has(r.err, "piz"));
  for (const char* method : {"none", "zip", "piz", "dwaa:45"}) {
    r = box.halo("run " + in + " -o " + box / "o.exr" + " --compression " + method);
    CHECK(r.code == 0);
  }
  r = box.halo("run " + in + " -o " + box / "q95.jpg");
  CHECK(r.code == 0);
  r = box.halo("run " + in + " -o " + box / "q30.jpg" + " --quality 30");
  CHECK(r.code == 0);
  CHECK(fs::file_size(box / "q30.jpg") < fs::file_size(box / "q95.jpg"));
  r = box.halo("run " + in + " -o " + box / "fast.png" + " --compression 1");
  CHECK(r.code == 0);
  r = box.halo("run " + in + " -o " + box / "small.png" + " --compression 9 --png-filter adaptive");
  CHECK(r.code == 0);
  CHECK(read_image({box / "small.png", {}}).pixels.bytes ==
        read_image({box / "fast.png", {}}).pixels.bytes);
}

TEST_CASE("--timings shows decode, device and encode over the strips, and their overlap") {
  Sandbox box;
  write_image(box / "in.png", photo(300, 200, 3), SampleType::u8);
  const Result r = box.halo("--device 0 run " + box / "in.png" + " -f gaussian:r=2 -o " +
                            box / "o.png" + " --timings --strip-rows 16");
  CHECK(r.code == 0);
  CHECK(has(r.out, "over 13 strips"));
  CHECK(has(r.out, "overlap)"));
  CHECK(has(r.out, "gaussian_cols"));
}

TEST_CASE("crop through files: the window's rows read in order past the rows above it") {
  Sandbox box;
  const PixelBuffer in = photo(97, 61, 3);
  write_image(box / "in.png", in, SampleType::u8);
  for (const char* strips : {"", " --strip-rows 7"}) {
    INFO(strips);
    const Result r = box.halo("run " + box / "in.png" + " -f crop:x=13:y=29:w=50:h=20 -o " +
                              box / "out.png --verify" + strips);
    INFO(r.err);
    CHECK(r.code == 0);
    const LoadedImage out = read_image({box / "out.png", {}});
    REQUIRE(out.pixels.width == 50);
    REQUIRE(out.pixels.height == 20);
    const std::size_t in_row = 97 * 3, out_row = 50 * 3;
    bool same = true;
    for (int y = 0; y < 20; ++y)
      same = same && std::equal(out.pixels.bytes.begin() + y * out_row,
                                out.pixels.bytes.begin() + (y + 1) * out_row,
                                in.bytes.begin() + (y + 29) * in_row + 13 * 3);
    CHECK(same);
  }
  const Result outside = box.halo("run " + box / "in.png" + " -f crop:w=98 -o " + box / "wide.png");
  CHECK(outside.code == 64);
  CHECK(has(outside.err, "not inside the 97x61 image"));
  CHECK_FALSE(fs::exists(box / "wide.png"));
  // The values given, not a centred offset resolved from them ("at (-48079, 0)").
  const Result huge = box.halo("run " + box / "in.png" + " -f crop:w=99999 -o " + box / "wide.png");
  CHECK(huge.code == 64);
  CHECK(has(huge.err, "w=99999 is more than its width of 97"));
  const Result past =
      box.halo("run " + box / "in.png" + " -f crop:x=90:w=10 -o " + box / "wide.png");
  CHECK(past.code == 64);
  CHECK(has(past.err, "x=90 and w=10 reach 100, past its width of 97 (w at most 7 there)"));
  // halo filters gives the ranges the parser holds to: w and h from 1.
  CHECK(box.halo("run " + box / "in.png" + " -f crop:w=0 -o " + box / "wide.png").code == 64);
  CHECK(has(box.halo("filters crop").out, "integer 1..1e+09 or auto"));
}

TEST_CASE("resize, crop and the mirrors agree with OpenImageIO's oiiotool") {
  Sandbox box;
  REQUIRE(std::system("command -v oiiotool >/dev/null") == 0);  // openimageio-tools
  write_image(box / "in.png", photo(403, 251, 3), SampleType::u8);
  const auto oiiotool = [&](const std::string& args, const std::string& out) {
    return std::system(("oiiotool " + box / "in.png " + args + " -o " + box / out).c_str());
  };
  const auto psnr = [&](const std::string& a, const std::string& b) {
    const Result r = box.halo("compare " + box / a + " " + box / b + " --fail 1");
    const auto at = r.out.find("PSNR ");
    return at == std::string::npos ? 0.0 : std::stod(r.out.substr(at + 5));
  };
  // A 4x shrink and a 2.5x enlargement with Lanczos-3, as oiiotool --resize computes them:
  // equal within 8-bit rounding on this synthetic photo (53-54 dB; 81-85 dB on Plasma's Altai
  // wallpaper, docs/performance.md).
  REQUIRE(oiiotool("--resize:filter=lanczos3 101x63", "o-small.png") == 0);
  REQUIRE(
      box.halo("run " + box / "in.png" + " -f resize:w=101:h=63:fit=fill -o " + box / "small.png")
          .code == 0);
  CHECK(psnr("small.png", "o-small.png") > 50);
  REQUIRE(oiiotool("--resize:filter=lanczos3 1008x628", "o-big.png") == 0);
  REQUIRE(
      box.halo("run " + box / "in.png" + " -f resize:w=1008:h=628:fit=fill -o " + box / "big.png")
          .code == 0);
  CHECK(psnr("big.png", "o-big.png") > 50);
  // Copies: the same samples.
  const struct {
    const char* oiio;
    const char* halo;
  } exact[] = {{"--cut 120x80+31+17 --origin +0+0", "crop:x=31:y=17:w=120:h=80"},
               {"--flop", "flop"},
               {"--flip", "flip"},
               {"--rotate180", "rotate"},
               {"--rotate90", "rotate:angle=90"},
               {"--rotate270", "rotate:angle=270"}};
  for (const auto& e : exact) {
    INFO(e.halo);
    REQUIRE(oiiotool(e.oiio, "o.png") == 0);
    REQUIRE(box.halo("run " + box / "in.png" + " -f " + e.halo + " -o " + box / "h.png").code == 0);
    CHECK(box.halo("compare " + box / "h.png " + box / "o.png --fail 0").code == 0);
  }
}
