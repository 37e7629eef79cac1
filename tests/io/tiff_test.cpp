// halo's own TIFF reader (io/tiff.cpp) against OpenImageIO's, which the module used for every
// TIFF before: on each kind of plain file libtiff writes (8/16-bit and float; grey, RGB, RGBA
// with associated or straight alpha; every compression; strips of one row to the whole
// image; odd sizes; text tags, orientations) both present the same header, metadata and
// samples. Files outside the plain kind (pages, tiles, two channels, palettes, an ICC
// profile, a position) are left to the module, and still read.
#include <doctest/doctest.h>
#include <tiffio.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/checked_file.hpp"
#include "io/codec.hpp"
#include "io/same_header.hpp"
#include "io/temp_dir.hpp"

using namespace halo;

namespace {

struct Plain {
  int width = 7, height = 5;
  uint16_t bits = 8, format = SAMPLEFORMAT_UINT, samples = 3;
  uint16_t photometric = PHOTOMETRIC_RGB;
  uint16_t extra = 0;  // an alpha extra sample: EXTRASAMPLE_ASSOCALPHA or _UNASSALPHA
  uint16_t compression = COMPRESSION_NONE, predictor = PREDICTOR_NONE;
  uint32_t rows_per_strip = 2;
  std::function<void(TIFF*)> tags = [](TIFF*) {};
  int pages = 1;
  bool big_endian = false;  // "MM": libtiff swaps the samples
};

std::string describe(const Plain& p) {
  return std::to_string(p.width) + "x" + std::to_string(p.height) + " bits " +
         std::to_string(p.bits) + " format " + std::to_string(p.format) + " samples " +
         std::to_string(p.samples) + " extra " + std::to_string(p.extra) + " compression " +
         std::to_string(p.compression) + " predictor " + std::to_string(p.predictor) +
         " rows/strip " + std::to_string(p.rows_per_strip) + (p.big_endian ? " MM" : " II");
}

// A file as libtiff writes it, each sample a different value (floats past 1 and negative).
void write_tiff(const std::string& path, const Plain& p) {
  TIFF* tiff = TIFFOpen(path.c_str(), p.big_endian ? "wb" : "wl");
  REQUIRE(tiff);
  for (int page = 0; page < p.pages; ++page) {
    TIFFSetField(tiff, TIFFTAG_IMAGEWIDTH, uint32_t(p.width));
    TIFFSetField(tiff, TIFFTAG_IMAGELENGTH, uint32_t(p.height));
    TIFFSetField(tiff, TIFFTAG_BITSPERSAMPLE, p.bits);
    TIFFSetField(tiff, TIFFTAG_SAMPLEFORMAT, p.format);
    TIFFSetField(tiff, TIFFTAG_SAMPLESPERPIXEL, p.samples);
    TIFFSetField(tiff, TIFFTAG_PHOTOMETRIC, p.photometric);
    TIFFSetField(tiff, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(tiff, TIFFTAG_COMPRESSION, p.compression);
    if (p.predictor != PREDICTOR_NONE) TIFFSetField(tiff, TIFFTAG_PREDICTOR, p.predictor);
    TIFFSetField(tiff, TIFFTAG_ROWSPERSTRIP, p.rows_per_strip);
    if (p.extra) {
      const uint16_t kinds[] = {p.extra};
      TIFFSetField(tiff, TIFFTAG_EXTRASAMPLES, 1, kinds);
    }
    p.tags(tiff);
    const std::size_t row = std::size_t(p.width) * p.samples;
    std::vector<std::uint8_t> bytes(row * p.bits / 8);
    for (int y = 0; y < p.height; ++y) {
      for (std::size_t i = 0; i < row; ++i) {
        const unsigned v = unsigned(y * 977 + i * 131 + page * 7);
        if (p.bits == 8) bytes[i] = std::uint8_t(v);
        if (p.bits == 16) reinterpret_cast<std::uint16_t*>(bytes.data())[i] = std::uint16_t(v * 37);
        if (p.bits == 32)
          reinterpret_cast<float*>(bytes.data())[i] = float(int(v % 401) - 100) / 37.0f;
      }
      REQUIRE(TIFFWriteScanline(tiff, bytes.data(), uint32_t(y), 0) == 1);
    }
    if (p.pages > 1) TIFFWriteDirectory(tiff);
  }
  TIFFClose(tiff);
}

std::string names(const std::vector<Attribute>& list) {
  std::string text;
  for (const auto& a : list) {
    std::string value = a.value;
    if (a.type == "float" && a.value.size() == 4) {
      float f;
      std::memcpy(&f, a.value.data(), 4);
      value = std::to_string(f);
    } else if (a.type == "int" && a.value.size() == 4) {
      int i;
      std::memcpy(&i, a.value.data(), 4);
      value = std::to_string(i);
    }
    text += a.name + ":" + a.type + "=" + value + " ";
  }
  return text;
}

std::vector<Attribute> sorted(std::vector<Attribute> a) {
  std::sort(a.begin(), a.end(),
            [](const Attribute& x, const Attribute& y) { return x.name < y.name; });
  return a;
}

// Every row, all channels, as `type`.
std::vector<std::byte> all_rows(ImageReader& r, PixelType type) {
  const ImageHeader& h = r.header();
  const int n = int(h.channels.size());
  std::vector<std::byte> out(std::size_t(h.width) * h.height * n * sample_size(type));
  const std::size_t row = std::size_t(h.width) * n * sample_size(type);
  for (int y = 0; y < h.height; ++y) r.read_rows(1, 0, n, type, out.data() + y * row);
  return out;
}

// The native reader takes the file and presents it as the module does.
void check_same(const std::string& path, const Plain& p) {
  CAPTURE(describe(p));
  write_tiff(path, p);
  const auto file = CheckedFile::open(path);
  auto native = open_tiff(file);
  REQUIRE(native);
  auto module = oiio_codecs().open(file, "tiff", {});
  const ImageHeader &a = native->header(), &b = module->header();
  test::check_same_layout(a, b);
  CHECK(a.stored == b.stored);
  CHECK(a.format == b.format);
  CHECK(a.subimages == b.subimages);
  INFO("native: ", names(a.metadata.attributes), " module: ", names(b.metadata.attributes));
  CHECK(sorted(a.metadata.attributes) == sorted(b.metadata.attributes));
  CHECK(a.metadata.icc == b.metadata.icc);
  CHECK(a.metadata.exif == b.metadata.exif);
  const PixelType stored = pixel_type(a.stored);
  CHECK(all_rows(*native, stored) == all_rows(*module, stored));
  auto native_f = open_tiff(file);
  auto module_f = oiio_codecs().open(file, "tiff", {});
  CHECK(all_rows(*native_f, PixelType::f32) == all_rows(*module_f, PixelType::f32));
}

}  // namespace

TEST_CASE("TIFF: halo's reader equals OpenImageIO's on every kind of plain file") {
  test::TempDir dir;
  const std::string path = dir / "plain.tif";
  struct Kind {
    uint16_t bits, format;
  };
  for (const Kind kind :
       {Kind{8, SAMPLEFORMAT_UINT}, {16, SAMPLEFORMAT_UINT}, {32, SAMPLEFORMAT_IEEEFP}})
    for (const uint16_t samples : {1, 3, 4})
      for (const uint16_t compression :
           {COMPRESSION_NONE, COMPRESSION_LZW, COMPRESSION_ADOBE_DEFLATE, COMPRESSION_PACKBITS}) {
        Plain p;
        p.bits = kind.bits, p.format = kind.format, p.samples = samples;
        p.photometric = samples == 1 ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB;
        p.extra = samples == 4 ? EXTRASAMPLE_UNASSALPHA : 0;
        p.compression = compression;
        if (compression == COMPRESSION_LZW || compression == COMPRESSION_ADOBE_DEFLATE)
          p.predictor = kind.bits == 32 ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL;
        check_same(path, p);
      }
  // Sizes blocks do not divide, strips of one row and of more rows than the image.
  for (const auto& [w, h, rows] : {std::tuple{1, 1, 1u}, {33, 17, 1u}, {33, 17, 5u}, {9, 4, 64u}}) {
    Plain p;
    p.width = w, p.height = h, p.rows_per_strip = rows, p.compression = COMPRESSION_LZW;
    check_same(path, p);
  }
  // Big-endian files, each sample size.
  for (const Kind kind :
       {Kind{8, SAMPLEFORMAT_UINT}, {16, SAMPLEFORMAT_UINT}, {32, SAMPLEFORMAT_IEEEFP}}) {
    Plain p;
    p.bits = kind.bits, p.format = kind.format, p.big_endian = true;
    p.compression = COMPRESSION_ADOBE_DEFLATE;
    p.predictor = kind.bits == 32 ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL;
    check_same(path, p);
    p.compression = COMPRESSION_NONE, p.predictor = PREDICTOR_NONE;
    check_same(path, p);
  }
  // Premultiplied alpha; text tags, a turned orientation; no orientation tag at all.
  Plain associated;
  associated.samples = 4, associated.extra = EXTRASAMPLE_ASSOCALPHA;
  check_same(path, associated);
  Plain tagged;
  tagged.tags = [](TIFF* t) {
    TIFFSetField(t, TIFFTAG_ORIENTATION, ORIENTATION_RIGHTTOP);
    TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, "a plate");
    TIFFSetField(t, TIFFTAG_SOFTWARE, "a renderer 1.0");
    TIFFSetField(t, TIFFTAG_DATETIME, "2026:11:29 12:00:00");
    TIFFSetField(t, TIFFTAG_ARTIST, "Ann Example");
    TIFFSetField(t, TIFFTAG_COPYRIGHT, "(c) 2026");
    TIFFSetField(t, TIFFTAG_DOCUMENTNAME, "shot010");
    TIFFSetField(t, TIFFTAG_HOSTCOMPUTER, "farm-12");
    TIFFSetField(t, TIFFTAG_MAKE, "HaloCam");
    TIFFSetField(t, TIFFTAG_MODEL, "One");
    TIFFSetField(t, TIFFTAG_XRESOLUTION, 300.0f);
    TIFFSetField(t, TIFFTAG_YRESOLUTION, 150.0f);
    TIFFSetField(t, TIFFTAG_PAGENAME, "page one");
    TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT, RESUNIT_INCH);
  };
  check_same(path, tagged);
}

TEST_CASE("TIFF: files outside the plain kind are left to OpenImageIO's reader") {
  test::TempDir dir;
  const std::string path = dir / "other.tif";
  const auto left = [&](const Plain& p, const std::string& why) {
    CAPTURE(why);
    write_tiff(path, p);
    CHECK_FALSE(open_tiff(CheckedFile::open(path)));
    CHECK(open_reader(path)->header().width == p.width);  // read by the module
  };
  Plain pages;
  pages.pages = 2;
  left(pages, "two pages");
  Plain two;
  two.samples = 2, two.photometric = PHOTOMETRIC_MINISBLACK, two.extra = EXTRASAMPLE_UNASSALPHA;
  left(two, "grey and alpha");
  Plain five;
  five.samples = 5, five.extra = EXTRASAMPLE_UNASSALPHA;
  left(five, "five channels");
  Plain profile;
  profile.tags = [](TIFF* t) {
    static const char icc[128] = {};
    TIFFSetField(t, TIFFTAG_ICCPROFILE, uint32_t(sizeof icc), icc);
  };
  left(profile, "an ICC profile");
  Plain placed;
  placed.tags = [](TIFF* t) {
    TIFFSetField(t, TIFFTAG_XPOSITION, 2.0f);
    TIFFSetField(t, TIFFTAG_YPOSITION, 1.0f);
  };
  left(placed, "a position");
  Plain white;
  white.samples = 1, white.photometric = PHOTOMETRIC_MINISWHITE;
  left(white, "white is zero");
  Plain half;
  half.bits = 16, half.format = SAMPLEFORMAT_IEEEFP;
  left(half, "half floats");
  Plain hinted;
  hinted.tags = [](TIFF* t) {
    TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, "oiio:ConstantColor=[1]");
  };
  left(hinted, "OpenImageIO's own hints in the description");
}
