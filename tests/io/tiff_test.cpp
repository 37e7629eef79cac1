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
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "core/checked_file.hpp"
#include "core/error.hpp"
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
  bool big_endian = false;                   // "MM": libtiff swaps the samples
  uint32_t tile_width = 0, tile_height = 0;  // 0: strips
};

std::string describe(const Plain& p) {
  return std::to_string(p.width) + "x" + std::to_string(p.height) + " bits " +
         std::to_string(p.bits) + " format " + std::to_string(p.format) + " samples " +
         std::to_string(p.samples) + " extra " + std::to_string(p.extra) + " compression " +
         std::to_string(p.compression) + " predictor " + std::to_string(p.predictor) +
         " rows/strip " + std::to_string(p.rows_per_strip) + " tiles " +
         std::to_string(p.tile_width) + "x" + std::to_string(p.tile_height) +
         (p.big_endian ? " MM" : " II");
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
    if (p.tile_width) {
      TIFFSetField(tiff, TIFFTAG_TILEWIDTH, p.tile_width);
      TIFFSetField(tiff, TIFFTAG_TILELENGTH, p.tile_height);
    } else {
      TIFFSetField(tiff, TIFFTAG_ROWSPERSTRIP, p.rows_per_strip);
    }
    if (p.extra) {
      const uint16_t kinds[] = {p.extra};
      TIFFSetField(tiff, TIFFTAG_EXTRASAMPLES, 1, kinds);
    }
    p.tags(tiff);
    const std::size_t row = std::size_t(p.width) * p.samples, pixel = p.samples * p.bits / 8;
    std::vector<std::uint8_t> image(row * p.height * p.bits / 8);
    for (int y = 0; y < p.height; ++y)
      for (std::size_t i = 0; i < row; ++i) {
        const unsigned v = unsigned(y * 977 + i * 131 + page * 7);
        const std::size_t at = y * row + i;
        if (p.bits == 8) image[at] = std::uint8_t(v);
        if (p.bits == 16)
          reinterpret_cast<std::uint16_t*>(image.data())[at] = std::uint16_t(v * 37);
        if (p.bits == 32)
          reinterpret_cast<float*>(image.data())[at] = float(int(v % 401) - 100) / 37.0f;
      }
    if (p.tile_width) {  // tiles past the image's edges padded with zeros
      std::vector<std::uint8_t> tile(std::size_t(p.tile_width) * p.tile_height * pixel);
      for (uint32_t ty = 0; ty < uint32_t(p.height); ty += p.tile_height)
        for (uint32_t tx = 0; tx < uint32_t(p.width); tx += p.tile_width) {
          std::fill(tile.begin(), tile.end(), 0);
          for (uint32_t r = 0; r < p.tile_height && ty + r < uint32_t(p.height); ++r)
            for (uint32_t c = 0; c < p.tile_width && tx + c < uint32_t(p.width); ++c)
              std::memcpy(&tile[(r * p.tile_width + c) * pixel],
                          &image[((ty + r) * std::size_t(p.width) + tx + c) * pixel], pixel);
          REQUIRE(TIFFWriteEncodedTile(tiff, TIFFComputeTile(tiff, tx, ty, 0, 0), tile.data(),
                                       tmsize_t(tile.size())) == tmsize_t(tile.size()));
        }
    } else {
      for (int y = 0; y < p.height; ++y)
        REQUIRE(TIFFWriteScanline(tiff, &image[y * row * p.bits / 8], uint32_t(y), 0) == 1);
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
  CHECK(a.tile_width == b.tile_width);
  CHECK(a.tile_height == b.tile_height);
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
  // Tiles that the image's sides do not divide, one tile larger than the image, each sample size.
  for (const Kind kind :
       {Kind{8, SAMPLEFORMAT_UINT}, {16, SAMPLEFORMAT_UINT}, {32, SAMPLEFORMAT_IEEEFP}})
    for (const auto& [w, h, tw, th] :
         {std::tuple{37, 21, 16u, 16u}, {5, 3, 16u, 32u}, {64, 48, 32u, 16u}}) {
      Plain p;
      p.bits = kind.bits, p.format = kind.format, p.samples = 4, p.extra = EXTRASAMPLE_UNASSALPHA;
      p.width = w, p.height = h, p.tile_width = tw, p.tile_height = th;
      p.compression = COMPRESSION_ADOBE_DEFLATE;
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

TEST_CASE("TIFF: a damaged or cut strip is a clear error, not silent zeros") {
  test::TempDir dir;
  const std::string path = dir / "damaged.tif";
  Plain p;
  p.width = 64, p.height = 16, p.rows_per_strip = 16, p.compression = COMPRESSION_ADOBE_DEFLATE;
  write_tiff(path, p);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto read_all = [&](const std::string& contents) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
    auto reader = open_reader(path);
    REQUIRE(reader->header().format == "tiff");
    all_rows(*reader, PixelType::f32);
  };
  // The strip's deflate stream (just past the 8-byte file header, where libtiff wrote it).
  std::string damaged = bytes;
  for (std::size_t i = 10; i < 40; ++i) damaged[i] = char(0xff);
  CHECK_THROWS_WITH_AS(read_all(damaged), doctest::Contains("cannot read pixels: strip 0"), Error);
  // The file cut inside its strip: its directory is at the end, so cut a copy whose
  // directory libtiff finds first.
  std::string cut = bytes;
  cut.erase(20, 200);  // the strip shortened, offsets unchanged
  CHECK_THROWS_AS(read_all(cut), Error);
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

namespace {

// `h`'s image (each sample a different value) written by `writer`.
void write_with(const std::unique_ptr<ImageWriter>& writer, const OutputHeader& h) {
  REQUIRE(writer);
  const std::size_t row = std::size_t(h.width) * h.channels;
  std::vector<std::byte> rows(row * h.height * stored_size(h.type));
  for (std::size_t i = 0; i < row * h.height; ++i) {
    if (h.type == SampleType::u8)
      reinterpret_cast<std::uint8_t*>(rows.data())[i] = std::uint8_t(i * 7);
    if (h.type == SampleType::u16)
      reinterpret_cast<std::uint16_t*>(rows.data())[i] = std::uint16_t(i * 977);
    if (h.type == SampleType::f32)
      reinterpret_cast<float*>(rows.data())[i] = float(int(i % 301) - 50) / 7.0f;
  }
  const int first = h.height / 2;  // in two calls, as strips arrive
  const std::size_t row_bytes = row * stored_size(h.type);
  writer->write_rows(first, rows.data());
  writer->write_rows(h.height - first, rows.data() + first * row_bytes);
  writer->finish();
}

// halo's writer and the module's store the same: read back by OpenImageIO, equal headers,
// metadata (`now`: both dated at writing) and samples; halo's file is plain for its own reader.
void check_written_same(const std::string& dir, const OutputHeader& h, const WriteOptions& o,
                        bool now = false) {
  const std::string ours = dir + "/ours.tif", theirs = dir + "/theirs.tif";
  write_with(create_tiff(ours, ours, h, o), h);
  write_with(oiio_codecs().create(theirs, theirs, h, o), h);
  auto a = oiio_codecs().open(CheckedFile::open(ours), "tiff", {});
  auto b = oiio_codecs().open(CheckedFile::open(theirs), "tiff", {});
  test::check_same_layout(a->header(), b->header());
  CHECK(a->header().stored == b->header().stored);
  std::vector<Attribute> mine = sorted(a->header().metadata.attributes);
  std::vector<Attribute> peer = sorted(b->header().metadata.attributes);
  if (now)  // both "now", perhaps a second apart
    for (auto* list : {&mine, &peer})
      std::erase_if(*list, [](const Attribute& x) { return x.name == "DateTime"; });
  INFO("ours: ", names(mine), " module: ", names(peer));
  CHECK(mine == peer);
  CHECK(all_rows(*a, pixel_type(h.type)) == all_rows(*b, pixel_type(h.type)));
  CHECK(open_tiff(CheckedFile::open(ours)));
}

}  // namespace

TEST_CASE("TIFF: halo's writer stores what OpenImageIO's stores, for every plain header") {
  test::TempDir dir;
  const std::string folder = dir / "";
  Metadata tagged;
  for (const char* name : {"ImageDescription", "Make", "Model", "Software", "Artist", "Copyright",
                           "DocumentName", "HostComputer"})
    tagged.set_text(name, std::string("the ") + name);
  tagged.set_text("DateTime", "2026:11:29 12:00:00");
  tagged.set(Attribute::typed("Orientation", "int", 6));
  tagged.set(Attribute::typed("PixelAspectRatio", "float", 0.5f));
  // What OpenImageIO leaves out of a TIFF: a renderer's names, the history, IPTC and EXIF
  // fields given as attributes.
  Metadata others = tagged;
  others.set_text("cycles.samples", "4");
  others.set_text("ImageHistory", "halo run -f sharpen");
  others.set_text("IPTC:City", "Lyon");
  others.set_text("Keywords", "a;b");
  others.set(Attribute::typed("Exif:ExposureTime", "float", 0.25f));
  for (const SampleType type : {SampleType::u8, SampleType::u16, SampleType::f32})
    for (const int channels : {1, 3, 4})
      for (const std::string compression : {"", "none", "lzw", "zip:9", "packbits"}) {
        OutputHeader h;
        h.width = 37, h.height = 33, h.channels = channels, h.alpha = channels == 4;
        h.type = type;
        h.metadata = tagged;
        WriteOptions o;
        o.compression = compression;
        INFO("type ", int(type), " channels ", channels, " compression ", compression);
        check_written_same(folder, h, o);
      }
  OutputHeader h;
  h.width = 1, h.height = 1, h.channels = 3;
  check_written_same(folder, h, {}, true);  // no date: both write now
  h.width = 7, h.height = 5, h.metadata = others;
  check_written_same(folder, h, {});
}

TEST_CASE("TIFF: headers halo's writer does not store as OpenImageIO's go to the module") {
  test::TempDir dir;
  const std::string out = dir / "o.tif";
  OutputHeader plain;
  plain.width = 4, plain.height = 3, plain.channels = 3;
  CHECK(create_tiff(out, out, plain, {}));
  const auto left = [&](OutputHeader h, WriteOptions o, const char* why) {
    CAPTURE(why);
    CHECK_FALSE(create_tiff(out, out, h, o));
  };
  OutputHeader two = plain;
  two.channels = 2, two.alpha = true;
  left(two, {}, "grey and alpha");
  OutputHeader half = plain;
  half.type = SampleType::half;
  left(half, {}, "half floats");
  OutputHeader placed = plain;
  placed.placement = {2, 1, 0, 0, 8, 8};
  left(placed, {}, "a position");
  OutputHeader profiled = plain;
  profiled.metadata.icc = std::string(128, '\0');
  left(profiled, {}, "an ICC profile");
  OutputHeader camera = plain;
  camera.metadata.exif = "II*";
  left(camera, {}, "an EXIF block");
  WriteOptions piz;
  piz.compression = "piz";
  left(plain, piz, "a compression TIFF has not (the module's error names those it has)");
  WriteOptions level;
  level.compression = "lzw:3";
  left(plain, level, "a level for a method without levels");
}
