// Round trips through every format halo reads and writes, channel selection in multilayer EXR,
// alpha kept unassociated, and atomic output.
#include <doctest/doctest.h>

#include <ImfChannelList.h>
#include <ImfChromaticitiesAttribute.h>
#include <ImfFrameBuffer.h>
#include <ImfHeader.h>
#include <ImfOutputFile.h>
#include <ImfRgbaFile.h>
#include <ImfStandardAttributes.h>
#include <ImfStringAttribute.h>
#include <OpenImageIO/deepdata.h>
#include <OpenImageIO/imageio.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/error.hpp"
#include "io/image_io.hpp"
#include "io/temp_dir.hpp"

using namespace halo;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

PixelBuffer gradient(int width, int height, int channels, PixelType type, bool alpha = false) {
  PixelBuffer pixels(width, height, channels, type, alpha);
  std::mt19937 rng(42);
  for (std::size_t i = 0; i < pixels.sample_count(); ++i) {
    switch (type) {
      case PixelType::u8:
        pixels.samples<std::uint8_t>()[i] = std::uint8_t(rng());
        break;
      case PixelType::u16:
        pixels.samples<std::uint16_t>()[i] = std::uint16_t(rng());
        break;
      // Multiples of 1/64 below 4 are exact in half as well as float.
      case PixelType::f32:
        pixels.samples<float>()[i] = float(rng() % 256) / 64.0f;
        break;
    }
  }
  return pixels;
}

LoadedImage round_trip(const std::string& path, const PixelBuffer& pixels, SampleType type) {
  write_image(path, pixels, type);
  return read_image({path, {}});
}

}  // namespace

TEST_CASE("lossless formats round trip values, size, channels and orientation") {
  TempDir dir;
  struct Case {
    const char* name;
    PixelType pixels;
    SampleType stored;
    int channels;
  };
  const Case cases[] = {
      {"a.png", PixelType::u8, SampleType::u8, 3},   {"b.png", PixelType::u16, SampleType::u16, 1},
      {"c.png", PixelType::u8, SampleType::u8, 4},   {"d.exr", PixelType::f32, SampleType::half, 3},
      {"e.exr", PixelType::f32, SampleType::f32, 4}, {"f.pfm", PixelType::f32, SampleType::f32, 3},
      {"g.pfm", PixelType::f32, SampleType::f32, 1}, {"h.tif", PixelType::u16, SampleType::u16, 3},
      {"i.tif", PixelType::f32, SampleType::f32, 2}, {"j.tif", PixelType::u8, SampleType::u8, 1},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const bool alpha = c.channels == 4;
    const PixelBuffer pixels = gradient(13, 7, c.channels, c.pixels, alpha);
    const LoadedImage back = round_trip(dir / c.name, pixels, c.stored);
    CHECK(back.stored == c.stored);
    CHECK(back.pixels.width == 13);
    CHECK(back.pixels.height == 7);
    CHECK(back.pixels.channels == c.channels);
    CHECK(back.pixels.alpha == alpha);
    CHECK(back.pixels.bytes == pixels.bytes);
  }
}

TEST_CASE("JPEG round trip stays close") {
  TempDir dir;
  PixelBuffer flat(16, 16, 3, PixelType::u8);
  for (std::size_t i = 0; i < flat.sample_count(); ++i) flat.samples<std::uint8_t>()[i] = 100;
  const LoadedImage back = round_trip(dir / "a.jpg", flat, SampleType::u8);
  CHECK(back.pixels.channels == 3);
  for (std::size_t i = 0; i < back.pixels.sample_count(); ++i)
    CHECK(std::abs(int(back.pixels.samples<std::uint8_t>()[i]) - 100) <= 2);
}

TEST_CASE("PNG alpha stays unassociated: colour under alpha 0 survives") {
  TempDir dir;
  PixelBuffer pixels(1, 1, 4, PixelType::u8, true);
  const std::uint8_t rgba[] = {200, 100, 50, 0};
  std::memcpy(pixels.bytes.data(), rgba, 4);
  const LoadedImage back = round_trip(dir / "a.png", pixels, SampleType::u8);
  CHECK(back.pixels.bytes == pixels.bytes);
}

TEST_CASE("storable types follow what each format can hold") {
  CHECK(storable_type("x.png", SampleType::f32) == SampleType::u16);
  CHECK(storable_type("x.png", SampleType::u8) == SampleType::u8);
  CHECK(storable_type("x.jpg", SampleType::u16) == SampleType::u8);
  CHECK(storable_type("x.exr", SampleType::u8) == SampleType::half);
  CHECK(storable_type("x.exr", SampleType::f32) == SampleType::f32);
  CHECK(storable_type("x.PFM", SampleType::u8) == SampleType::f32);
  CHECK(storable_type("x.tif", SampleType::u16) == SampleType::u16);
}

TEST_CASE("multilayer EXR: RGB found by layer, channels picked by name") {
  TempDir dir;
  const std::string path = dir / "layers.exr";
  const std::vector<std::string> names = {"ViewLayer.Combined.R", "ViewLayer.Combined.G",
                                          "ViewLayer.Combined.B", "ViewLayer.Combined.A",
                                          "ViewLayer.Depth.Z",    "ViewLayer.Normal.X"};
  OIIO::ImageSpec spec(4, 2, int(names.size()), OIIO::TypeDesc::FLOAT);
  spec.channelnames = names;
  std::vector<float> data(4 * 2 * names.size());
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = float(i % names.size()) + 0.5f;
  auto out = OIIO::ImageOutput::create(path);
  REQUIRE(out->open(path, spec));
  REQUIRE(out->write_image(OIIO::TypeDesc::FLOAT, data.data()));
  out->close();

  const LoadedImage rgb = read_image(parse_input_ref(path));
  CHECK(rgb.pixels.channels == 4);
  CHECK(rgb.pixels.alpha);
  CHECK(rgb.channel_names[0] == "ViewLayer.Combined.R");
  CHECK(rgb.pixels.samples<float>()[2] == 2.5f);

  const LoadedImage depth = read_image(parse_input_ref(path + "[ViewLayer.Depth.Z]"));
  CHECK(depth.pixels.channels == 1);
  CHECK(depth.pixels.samples<float>()[0] == 4.5f);
  CHECK(depth.pixels.samples<float>()[7] == 4.5f);

  CHECK_THROWS_WITH_AS(read_image(parse_input_ref(path + "[N.X]")),
                       doctest::Contains("no channel 'N.X' (have ViewLayer.Combined.R"), Error);
}

TEST_CASE("input errors: missing, empty, corrupt, truncated") {
  TempDir dir;
  const auto kind_of = [](const std::string& path) {
    try {
      read_image({path, {}});
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  CHECK(kind_of(dir / "missing.png") == ErrorKind::NoInput);
  std::ofstream(dir / "empty.png").close();
  CHECK(kind_of(dir / "empty.png") == ErrorKind::BadData);
  std::ofstream(dir / "junk.png") << "this is not a png at all";
  CHECK(kind_of(dir / "junk.png") == ErrorKind::BadData);
  // A real PNG cut in half.
  write_image(dir / "whole.png", gradient(64, 64, 3, PixelType::u8), SampleType::u8);
  const auto size = fs::file_size(dir / "whole.png");
  fs::copy_file(dir / "whole.png", dir / "cut.png");
  fs::resize_file(dir / "cut.png", size / 2);
  CHECK(kind_of(dir / "cut.png") == ErrorKind::BadData);
  // One byte flipped inside the image data of stored (uncompressed) deflate blocks, which
  // still inflate: the reader skips zlib's Adler-32, the chunk's CRC-32 still refuses it.
  WriteOptions stored;
  stored.compression = "0";
  write_image(dir / "stored.png", gradient(64, 64, 3, PixelType::u8), SampleType::u8, stored);
  std::string bytes;
  {
    std::ifstream in(dir / "stored.png", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto idat = bytes.find("IDAT");
  REQUIRE(idat != std::string::npos);
  bytes[idat + 4 + 100] ^= 0x20;
  std::ofstream(dir / "flipped.png", std::ios::binary) << bytes;
  CHECK(kind_of(dir / "flipped.png") == ErrorKind::BadData);
}

TEST_CASE("outputs are atomic: nothing is left behind on failure") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(
      write_image(dir / "no/such/folder/x.png", gradient(2, 2, 3, PixelType::u8), SampleType::u8),
      doctest::Contains("does not exist"), Error);
  // A write that fails midway (PFM cannot hold 4 channels) leaves neither file nor temp file.
  CHECK_THROWS(write_image(dir / "x.pfm", gradient(2, 2, 4, PixelType::f32), SampleType::f32));
  CHECK(fs::is_empty(dir.path));
  write_image(dir / "ok.png", gradient(2, 2, 3, PixelType::u8), SampleType::u8);
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

TEST_CASE("an image read shrunk: each side divided and rounded up, the average kept") {
  TempDir dir;
  PixelBuffer flat(37, 21, 3, PixelType::u8);
  for (std::size_t i = 0; i < flat.sample_count(); ++i) flat.samples<std::uint8_t>()[i] = 100;
  write_image(dir / "a.jpg", flat, SampleType::u8);
  write_image(dir / "a.png", flat, SampleType::u8);
  // libjpeg's DCT scales; other formats, and factors the decoder lacks, through averaged
  // blocks (tests/io/box_shrink_test.cpp): the same sizes.
  for (const auto& [file, shrink] :
       {std::pair{"a.jpg", 2}, std::pair{"a.jpg", 4}, std::pair{"a.jpg", 8}, std::pair{"a.png", 8},
        std::pair{"a.jpg", 3}}) {
    INFO(file, " at 1/", shrink);
    auto reader = open_reader(dir / file, shrink);
    CHECK(reader->header().shrink == shrink);
    CHECK(reader->header().width == (37 + shrink - 1) / shrink);
    CHECK(reader->header().height == (21 + shrink - 1) / shrink);
    std::vector<std::uint8_t> row(std::size_t(reader->header().width) * 3);
    reader->read_rows(1, 0, 3, PixelType::u8, reinterpret_cast<std::byte*>(row.data()));
    for (const auto v : row) CHECK(std::abs(int(v) - 100) <= 2);
  }
}

// A render's colour at full resolution in float, its Z and diffuse layers at half resolution
// (2x2): OpenImageIO 2.4 refuses the file; halo reads the full-resolution channels exactly, each
// sample as stored, and names the subsampled ones it leaves out (not the luminance/chroma path,
// which rebuilt R, G, B as half).
TEST_CASE("EXR with subsampled layers: full-resolution float colour read exactly") {
  TempDir dir;
  const int w = 38, h = 22;
  Imf::Header header(w, h);
  for (const char* name : {"R", "G", "B"}) header.channels().insert(name, Imf::Channel(Imf::FLOAT));
  for (const char* name : {"Z", "diffuse.R"})
    header.channels().insert(name, Imf::Channel(Imf::FLOAT, 2, 2));
  std::vector<float> rgb(std::size_t(w) * h * 3), low(std::size_t(w / 2) * (h / 2), 7.0f);
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = 1.0f + float(i) * 1.0e-4f + 1.0e-7f;
  {
    Imf::OutputFile file((dir / "layers.exr").c_str(), header);
    Imf::FrameBuffer frame;
    const char* names[] = {"R", "G", "B"};
    for (int c = 0; c < 3; ++c)
      frame.insert(names[c], Imf::Slice(Imf::FLOAT, reinterpret_cast<char*>(rgb.data() + c),
                                        3 * sizeof(float), std::size_t(w) * 3 * sizeof(float)));
    for (const char* name : {"Z", "diffuse.R"})
      frame.insert(name, Imf::Slice(Imf::FLOAT, reinterpret_cast<char*>(low.data()), sizeof(float),
                                    std::size_t(w / 2) * sizeof(float), 2, 2));
    file.setFrameBuffer(frame);
    file.writePixels(h);
  }
  auto reader = open_reader(dir / "layers.exr");
  CHECK(reader->header().channels == std::vector<std::string>{"R", "G", "B"});
  CHECK(reader->header().stored == SampleType::f32);
  CHECK(reader->header().left_out == std::vector<std::string>{"Z (2x2)", "diffuse.R (2x2)"});
  const LoadedImage got = read_image({dir / "layers.exr", {}});
  REQUIRE(got.pixels.channels == 3);
  REQUIRE(got.pixels.sample_count() == rgb.size());
  int different = 0;
  for (std::size_t i = 0; i < rgb.size(); ++i)
    different += got.pixels.samples<float>()[i] != rgb[i];
  CHECK(different == 0);
}

TEST_CASE("EXR of luminance and subsampled chroma reads as RGB, as OpenEXR's RGBA interface") {
  TempDir dir;
  const int w = 38, h = 22;  // YC needs even sides
  std::vector<Imf::Rgba> px(std::size_t(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      px[std::size_t(y) * w + x] = Imf::Rgba(0.2f + 0.01f * x, 0.3f + 0.005f * y, 0.4f, 1.0f);
  {
    Imf::RgbaOutputFile file((dir / "yc.exr").c_str(), w, h, Imf::WRITE_YCA);
    file.setFrameBuffer(px.data(), 1, w);
    file.writePixels(h);
  }
  std::vector<Imf::Rgba> want(px.size());
  {
    Imf::RgbaInputFile file((dir / "yc.exr").c_str());
    file.setFrameBuffer(want.data(), 1, w);
    file.readPixels(0, h - 1);
  }
  const LoadedImage got = read_image({dir / "yc.exr", {}});
  REQUIRE(got.pixels.width == w);
  REQUIRE(got.pixels.channels == 4);
  CHECK(got.pixels.alpha);
  for (std::size_t i = 0; i < want.size(); ++i) {
    const float* p = got.pixels.samples<float>() + i * 4;
    CHECK(p[0] == float(want[i].r));
    CHECK(p[1] == float(want[i].g));
    CHECK(p[2] == float(want[i].b));
    CHECK(p[3] == float(want[i].a));
    CHECK(p[0] == doctest::Approx(float(px[i].r)).epsilon(0.05));  // smooth colour survives
  }
}

// OpenEXR's luminance/chroma test images hold XYZ: without their chromaticities a reader takes
// the values as Rec.709 (they were dropped on the way through halo).
TEST_CASE("EXR of luminance and chroma keeps its header attributes: XYZ chromaticities") {
  TempDir dir;
  const int w = 8, h = 6;
  std::vector<Imf::Rgba> px(std::size_t(w) * h, Imf::Rgba(0.5f, 0.25f, 0.125f, 1.0f));
  {
    Imf::Header header(w, h);
    Imf::addChromaticities(header,
                           Imf::Chromaticities({1, 0}, {0, 1}, {0, 0}, {1.0f / 3, 1.0f / 3}));
    header.insert("comments", Imf::StringAttribute("an XYZ image"));
    Imf::RgbaOutputFile file((dir / "xyz.exr").c_str(), header, Imf::WRITE_YC);
    file.setFrameBuffer(px.data(), 1, w);
    file.writePixels(h);
  }
  const Metadata m = open_reader(dir / "xyz.exr")->header().metadata;
  const auto chromaticities =
      std::find_if(m.attributes.begin(), m.attributes.end(),
                   [](const Attribute& a) { return a.name == "chromaticities"; });
  REQUIRE(chromaticities != m.attributes.end());
  CHECK(chromaticities->type == "float[8]");
  float values[8];
  std::memcpy(values, chromaticities->value.data(), sizeof values);
  CHECK(values[0] == 1.0f);  // red x
  CHECK(values[3] == 1.0f);  // green y
  CHECK(values[6] == doctest::Approx(1.0 / 3));
  REQUIRE(m.text("comments"));
  CHECK(*m.text("comments") == "an XYZ image");
  // Written out as halo run writes an EXR: the attribute is there, as OpenImageIO reads it.
  const LoadedImage in = read_image({dir / "xyz.exr", {}});
  OutputImage out(dir / "out.exr", w, h, SampleType::half, {}, m);
  out.write({0, h}, to_pixels(to_image(in.pixels), PixelType::f32));
  out.commit();
  auto check = OIIO::ImageInput::open(dir / "out.exr");
  REQUIRE(check);
  const OIIO::ParamValue* written = check->spec().find_attribute("chromaticities");
  REQUIRE(written);
  CHECK(static_cast<const float*>(written->data())[0] == 1.0f);
  CHECK(static_cast<const float*>(written->data())[6] == doctest::Approx(1.0 / 3));
}

TEST_CASE("deep EXR flattens front to back, as oiiotool --flatten") {
  TempDir dir;
  OIIO::ImageSpec spec(5, 3, 5, OIIO::TypeDesc::FLOAT);
  spec.channelnames = {"R", "G", "B", "A", "Z"};
  spec.alpha_channel = 3;
  spec.z_channel = 4;
  spec.deep = true;
  OIIO::DeepData deep;
  deep.init(spec);
  for (int p = 0; p < 15; ++p) deep.set_samples(p, 2);
  for (int p = 0; p < 15; ++p) {
    // Front: red 0.5 at alpha 0.5, depth 1; behind it: red 0.2, green 0.1 at alpha 0.4, depth 2.
    const float values[2][5] = {{0.5f, 0.0f, 0.0f, 0.5f, 1.0f}, {0.2f, 0.1f, 0.0f, 0.4f, 2.0f}};
    for (int s = 0; s < 2; ++s)
      for (int c = 0; c < 5; ++c) deep.set_deep_value(p, c, s, values[s][c]);
  }
  auto out = OIIO::ImageOutput::create(dir / "deep.exr");
  REQUIRE(out->open(dir / "deep.exr", spec));
  REQUIRE(out->write_deep_image(deep));
  REQUIRE(out->close());
  const LoadedImage got = read_image({dir / "deep.exr", {}});
  REQUIRE(got.pixels.width == 5);
  REQUIRE(got.pixels.channels == 4);  // RGBA picked; Z stays a layer
  const float* p = got.pixels.samples<float>();
  CHECK(p[0] == doctest::Approx(0.5 + 0.5 * 0.2));  // over: front + (1 - front alpha) x back
  CHECK(p[1] == doctest::Approx(0.5 * 0.1));
  CHECK(p[3] == doctest::Approx(0.5 + 0.5 * 0.4));
}
