// EXR as halo writes it, read back by OpenEXR's own C++ reader and by OpenImageIO: every
// compression, half and float channels side by side, a data window inside a larger display
// window, odd sizes that no chunk divides. Lossless compressions give back the samples as
// stored (float exactly, half as Imath rounds them); the lossy ones (PXR24, B44, B44A, DWAA,
// DWAB) give back exactly what OpenEXR's own writer gives for the same samples and compression.
// Header attributes of every type an EXR has come back with OpenImageIO's names and types.
#include <doctest/doctest.h>

#include <Imath/half.h>
#include <ImfChannelList.h>
#include <ImfFrameBuffer.h>
#include <ImfHeader.h>
#include <ImfInputFile.h>
#include <ImfOutputFile.h>
#include <OpenImageIO/imageio.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/checked_file.hpp"
#include "core/error.hpp"
#include "io/codec.hpp"
#include "io/image_io.hpp"
#include "io/same_header.hpp"
#include "io/temp_dir.hpp"

using namespace halo;
using test::TempDir;

namespace {

constexpr int kW = 37, kH = 23;  // no chunk (1, 16 or 32 rows) divides 23
const std::vector<std::string> kNames = {"R", "G", "B", "A", "Z"};
const Placement kPlacement = {-3, 5, 0, 0, 40, 30};

// Sample c of pixel (x, y): signed, fractional, up to a few thousand; Z (c 4) up to 1e6.
float sample(int x, int y, int c) {
  const std::uint32_t h =
      std::uint32_t(x) * 73856093u ^ std::uint32_t(y) * 19349663u ^ std::uint32_t(c) * 83492791u;
  const float v = float(int(h % 4096) - 1024) / 16.0f;
  return c == 4 ? v * 4000.0f : v;
}

std::vector<float> image() {
  std::vector<float> rows(std::size_t(kW) * kH * kNames.size());
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x)
      for (std::size_t c = 0; c < kNames.size(); ++c)
        rows[(std::size_t(y) * kW + x) * kNames.size() + c] = sample(x, y, int(c));
  return rows;
}

// Z float and the colour half (`mixed`), or every channel `all`.
std::vector<SampleType> types(bool mixed, SampleType all) {
  std::vector<SampleType> t(kNames.size(), all);
  if (mixed)
    t = {SampleType::half, SampleType::half, SampleType::half, SampleType::half, SampleType::f32};
  return t;
}

void write_with_halo(const std::string& path, const std::vector<SampleType>& channel_types,
                     const std::string& compression, const Metadata& metadata = {}) {
  OutputHeader h{kW,       kH,     int(kNames.size()), false,        SampleType::f32,
                 metadata, kNames, kPlacement,         channel_types};
  auto writer = create_writer(path, path, h, {.compression = compression});
  const std::vector<float> rows = image();
  const std::size_t row = std::size_t(kW) * kNames.size();
  for (int y = 0; y < kH; y += 5) {  // strips that the chunks do not line up with
    const int n = std::min(5, kH - y);
    writer->write_rows(n, reinterpret_cast<const std::byte*>(rows.data() + y * row));
  }
  writer->finish();
}

Imf::Compression imf_compression(const std::string& name) {
  const std::vector<std::string> names = {"none",  "rle", "zips", "zip",  "piz",
                                          "pxr24", "b44", "b44a", "dwaa", "dwab"};
  return Imf::Compression(std::find(names.begin(), names.end(), name) - names.begin());
}

// The same samples written by OpenEXR's own writer.
void write_with_openexr(const std::string& path, const std::vector<SampleType>& channel_types,
                        const std::string& compression) {
  const Imath::Box2i data({kPlacement.x, kPlacement.y},
                          {kPlacement.x + kW - 1, kPlacement.y + kH - 1});
  const Imath::Box2i display({0, 0}, {kPlacement.full_width - 1, kPlacement.full_height - 1});
  Imf::Header header(display, data);
  header.compression() = imf_compression(compression);
  const std::vector<float> rows = image();
  std::vector<std::vector<float>> f(kNames.size());
  std::vector<std::vector<Imath::half>> hf(kNames.size());
  Imf::FrameBuffer fb;
  for (std::size_t c = 0; c < kNames.size(); ++c) {
    const bool half = channel_types[c] == SampleType::half;
    header.channels().insert(kNames[c], Imf::Channel(half ? Imf::HALF : Imf::FLOAT));
    for (std::size_t i = c; i < rows.size(); i += kNames.size()) {
      f[c].push_back(rows[i]);
      hf[c].push_back(Imath::half(rows[i]));
    }
    char* base =
        half ? reinterpret_cast<char*>(hf[c].data()) : reinterpret_cast<char*>(f[c].data());
    const std::size_t size = half ? 2 : 4;
    base -= (std::ptrdiff_t(data.min.y) * kW + data.min.x) * std::ptrdiff_t(size);
    fb.insert(kNames[c], Imf::Slice(half ? Imf::HALF : Imf::FLOAT, base, size, size * kW));
  }
  Imf::OutputFile out(path.c_str(), header);
  out.setFrameBuffer(fb);
  out.writePixels(kH);
}

struct Decoded {
  std::vector<std::vector<float>> channels;  // by kNames, as float
  std::vector<Imf::PixelType> types;
  Imath::Box2i data, display;
  Imf::Compression compression;
};

Decoded openexr_reads(const std::string& path) {
  Imf::InputFile file(path.c_str());
  Decoded d;
  d.data = file.header().dataWindow();
  d.display = file.header().displayWindow();
  d.compression = file.header().compression();
  Imf::FrameBuffer fb;
  d.channels.resize(kNames.size(), std::vector<float>(std::size_t(kW) * kH));
  for (std::size_t c = 0; c < kNames.size(); ++c) {
    const Imf::Channel* ch = file.header().channels().findChannel(kNames[c]);
    REQUIRE(ch);
    d.types.push_back(ch->type);
    char* base = reinterpret_cast<char*>(d.channels[c].data()) -
                 (std::ptrdiff_t(d.data.min.y) * kW + d.data.min.x) * 4;
    fb.insert(kNames[c], Imf::Slice(Imf::FLOAT, base, 4, 4 * kW));
  }
  file.setFrameBuffer(fb);
  file.readPixels(d.data.min.y, d.data.max.y);
  return d;
}

}  // namespace

TEST_CASE(
    "EXR written by halo reads back in OpenEXR as OpenEXR's own writer's, every compression") {
  TempDir dir;
  const std::vector<std::string> compressions = {"none",  "rle", "zips", "zip",  "piz",
                                                 "pxr24", "b44", "b44a", "dwaa", "dwab"};
  for (const std::string& compression : compressions)
    for (const bool mixed : {true, false})
      for (const SampleType all : {SampleType::half, SampleType::f32}) {
        if (mixed && all == SampleType::f32) continue;
        const std::vector<SampleType> t = types(mixed, all);
        CAPTURE(compression);
        CAPTURE(mixed);
        CAPTURE(to_string(all));
        const std::string ours = dir / ("h-" + compression + ".exr");
        const std::string theirs = dir / ("o-" + compression + ".exr");
        write_with_halo(ours, t, compression);
        write_with_openexr(theirs, t, compression);
        const Decoded got = openexr_reads(ours), want = openexr_reads(theirs);
        CHECK(got.compression == imf_compression(compression));
        CHECK(got.data == want.data);
        CHECK(got.display == want.display);
        CHECK(got.types == want.types);
        for (std::size_t c = 0; c < kNames.size(); ++c) {
          CAPTURE(kNames[c]);
          CHECK(std::memcmp(got.channels[c].data(), want.channels[c].data(),
                            got.channels[c].size() * sizeof(float)) == 0);
        }
        // Lossless: the samples as stored (float exactly, half as Imath rounds).
        const bool lossless = compression == "none" || compression == "rle" ||
                              compression == "zips" || compression == "zip" || compression == "piz";
        if (lossless) {
          std::size_t differ = 0;
          const std::vector<float> rows = image();
          for (std::size_t i = 0; i < rows.size(); ++i) {
            const std::size_t c = i % kNames.size();
            const float stored = t[c] == SampleType::half ? float(Imath::half(rows[i])) : rows[i];
            differ += got.channels[c][i / kNames.size()] != stored;
          }
          CHECK(differ == 0);
        }
        // And halo reads its own file as OpenEXR does.
        const LoadedImage back = read_image(parse_input_ref(ours + "[R,G,B,A,Z]"));
        REQUIRE(back.pixels.channels == int(kNames.size()));
        const float* p = back.pixels.samples<float>();
        std::size_t differ = 0;
        for (std::size_t i = 0; i < std::size_t(kW) * kH * kNames.size(); ++i)
          differ += p[i] != got.channels[i % kNames.size()][i / kNames.size()];
        CHECK(differ == 0);
      }
}

TEST_CASE("EXR header attributes of every type come back with OpenImageIO's names and types") {
  TempDir dir;
  Metadata m;
  const auto raw = [&](const char* name, const char* type, const void* data, std::size_t n) {
    m.attributes.push_back({name, type, std::string(static_cast<const char*>(data), n)});
  };
  const float matrix[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 2, 3, 4, 1};
  const double dmatrix[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16.5};
  const float m33[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const float chroma[8] = {0.64f, 0.33f, 0.3f, 0.6f, 0.15f, 0.06f, 0.3127f, 0.329f};
  const float v2[2] = {1.5f, -2}, v3[3] = {1, 2, 3}, fv[5] = {1, 2, 3, 4, 5};
  const std::int32_t v2i[2] = {7, -8}, v3i[3] = {1, -2, 3}, rational[2] = {24000, 1001};
  const std::uint32_t timecode[2] = {0x01020304, 7};
  const std::int32_t box[4] = {-1, -2, 30, 40};
  const double d = 0.1, v2d[2] = {0.25, -0.5};
  const std::int32_t samples = 4096;
  const float exposure = 0.01f;
  m.set_text("ImageDescription", "a render");
  m.set_text("Copyright", "(c) 2026 a studio");
  m.set_text("DateTime", "2026:11:29 10:00:00");
  m.set_text("cycles.ViewLayer.synchronization_time", "00:00.05");  // over 31 characters
  raw("worldtocamera", "matrix", matrix, sizeof matrix);
  raw("worldToNDC_double", "matrixd", dmatrix, sizeof dmatrix);
  raw("someM33", "matrix33", m33, sizeof m33);
  raw("chromaticities", "float[8]", chroma, sizeof chroma);
  raw("screenWindowCenter", "float2", v2, sizeof v2);
  raw("position", "vector", v3, sizeof v3);
  raw("weights", "float[5]", fv, sizeof fv);
  raw("offset", "float2i", v2i, sizeof v2i);
  raw("cell", "vectori", v3i, sizeof v3i);
  raw("framesPerSecond", "rational2i", rational, sizeof rational);
  raw("smpte:TimeCode", "timecode", timecode, sizeof timecode);
  raw("crop", "float2i[2]", box, sizeof box);
  raw("gamma", "double", &d, sizeof d);
  raw("jitter", "float2d", v2d, sizeof v2d);
  raw("cycles:samples", "int", &samples, sizeof samples);
  raw("ExposureTime", "float", &exposure, sizeof exposure);
  const std::string path = dir / "attributes.exr";
  write_with_halo(path, types(true, SampleType::half), "zip", m);
  // OpenImageIO's reading of halo's file (the module), and halo's own reading: the same.
  auto in = OIIO::ImageInput::open(path);
  REQUIRE(in);
  const OIIO::ImageSpec& spec = in->spec();
  for (const Attribute& a : m.attributes) {
    CAPTURE(a.name);
    const OIIO::ParamValue* p = spec.find_attribute(a.name);
    REQUIRE(p);
    CHECK(std::string(p->type().c_str()) == a.type);
    if (a.is_text())
      CHECK(p->get_string() == a.value);
    else
      CHECK(std::string(static_cast<const char*>(p->data()), p->type().size()) == a.value);
  }
  const Metadata back = open_reader(path)->header().metadata;
  for (const Attribute& a : m.attributes) {
    CAPTURE(a.name);
    const auto found = std::find_if(back.attributes.begin(), back.attributes.end(),
                                    [&](const Attribute& b) { return b.name == a.name; });
    REQUIRE(found != back.attributes.end());
    CHECK(*found == a);
  }
}

TEST_CASE("an EXR's own reading by halo agrees with OpenImageIO's: channel order, types, alpha") {
  // Channel names OpenImageIO reorders (colour first, X Y Z first in a layer that has X).
  TempDir dir;
  const std::string path = dir / "order.exr";
  {
    Imf::Header header(5, 3);
    const std::vector<std::string> names = {
        "A",   "B",   "G",         "R",         "N.X",       "N.Y",       "N.Z", "P.W",
        "P.X", "P.Y", "diffuse.B", "diffuse.G", "diffuse.R", "diffuse.A", "Z",   "id"};
    for (const auto& n : names)
      header.channels().insert(n, Imf::Channel(n == "Z"    ? Imf::FLOAT
                                               : n == "id" ? Imf::UINT
                                                           : Imf::HALF));
    Imf::OutputFile out(path.c_str(), header);
    std::vector<float> zeros(15);
    std::vector<std::uint32_t> ids(15, 7);
    std::vector<Imath::half> halves(15, Imath::half(0.5f));
    Imf::FrameBuffer fb;
    for (const auto& n : names)
      fb.insert(n, n == "Z" ? Imf::Slice(Imf::FLOAT, reinterpret_cast<char*>(zeros.data()), 4, 20)
                   : n == "id"
                       ? Imf::Slice(Imf::UINT, reinterpret_cast<char*>(ids.data()), 4, 20)
                       : Imf::Slice(Imf::HALF, reinterpret_cast<char*>(halves.data()), 2, 10));
    out.setFrameBuffer(fb);
    out.writePixels(3);
  }
  auto in = OIIO::ImageInput::open(path);
  REQUIRE(in);
  const std::unique_ptr<ImageReader> ours = open_reader(path);
  CHECK(ours->header().channels == in->spec().channelnames);
  CHECK(ours->header().alpha == (in->spec().alpha_channel == in->spec().nchannels - 1));
  CHECK(ours->header().stored == SampleType::f32);
  const LoadedImage back = read_image(parse_input_ref(path + "[id]"));
  CHECK(back.pixels.samples<float>()[0] == 7.0f);  // UINT by value
}

// OpenEXR's own sample images (the openexr-images repository: scanline and tiled, multipart,
// MIP and rip levels, luminance/chroma, deep, display windows, every compression), when
// HALO_OPENEXR_IMAGES names a checkout of them (scripts/check-openexr-images): every part and
// level halo's own reader takes, read as the OpenImageIO module reads it, sample for sample
// (NaN where it has NaN), with the same channels, size, windows and attributes.
TEST_CASE("OpenEXR's sample images read by halo's reader as by OpenImageIO's") {
  const char* root = std::getenv("HALO_OPENEXR_IMAGES");
  if (!root) return;
  int native = 0, left = 0, files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".exr") continue;
    const std::string path = entry.path().string();
    CAPTURE(path);
    ++files;
    const auto file = CheckedFile::open(path);
    std::vector<int> levels;
    try {
      levels = mip_levels(file);
    } catch (const Error& e) {
      MESSAGE(path << ": refused: " << e.what());
      continue;
    }
    for (int part = 0; part < int(levels.size()); ++part)
      for (int level = 0; level < levels[std::size_t(part)]; ++level) {
        CAPTURE(part);
        CAPTURE(level);
        std::unique_ptr<ImageReader> ours = open_exr(file, {part, level});
        if (!ours) {
          ++left;
          continue;
        }
        ++native;
        std::unique_ptr<ImageReader> theirs = oiio_codecs().open(file, "openexr", {part, level});
        const ImageHeader &a = ours->header(), &b = theirs->header();
        test::check_same_layout(a, b);
        for (const Attribute& attribute : b.metadata.attributes) {
          CAPTURE(attribute.name);
          const auto found =
              std::find(a.metadata.attributes.begin(), a.metadata.attributes.end(), attribute);
          CHECK(found != a.metadata.attributes.end());
        }
        const int n = int(a.channels.size());
        std::vector<float> mine(std::size_t(a.width) * n), peer(mine.size());
        std::size_t differ = 0;
        for (int y = 0; y < a.height; ++y) {
          ours->read_rows(1, 0, n, PixelType::f32, reinterpret_cast<std::byte*>(mine.data()));
          theirs->read_rows(1, 0, n, PixelType::f32, reinterpret_cast<std::byte*>(peer.data()));
          for (std::size_t i = 0; i < mine.size(); ++i)
            differ += !(mine[i] == peer[i] || (std::isnan(mine[i]) && std::isnan(peer[i])));
        }
        CHECK(differ == 0);
      }
  }
  MESSAGE(files << " files: " << native << " parts and levels read by halo's own reader, " << left
                << " left to the OpenImageIO module");
  CHECK(native > 0);
}
