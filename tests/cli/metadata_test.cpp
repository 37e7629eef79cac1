// Metadata through the real binary: text, EXIF, XMP, IPTC, the ICC profile and EXR header
// attributes carried from input to output in and across every format halo writes, checked
// with OpenImageIO (a reader that is not halo's); --strip-metadata and --attrib.
#include <doctest/doctest.h>

#include <algorithm>

#include <OpenImageIO/imageio.h>
#include <zlib.h>

#include <cstring>
#include <fstream>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cli/sandbox.hpp"
#include "io/image_io.hpp"

using namespace halo;
using namespace halo::test;
namespace fs = std::filesystem;

namespace {

// A small but well-formed ICC profile of colour space `space` ('RGB ' or 'GRAY'): header, one
// tag (the D50 white point) and 400 bytes that do not compress (libpng 1.6.39 refuses iCCP
// chunks of under ~80 bytes, which no real profile is).
std::string fake_icc(const std::string& space) {
  const std::string d50 = {0, 0, char(0xf6), char(0xd6), 0, 1, 0, 0, 0, 0, char(0xd3), 0x2d};
  const std::string tag = "XYZ " + std::string(4, '\0') + d50;
  const auto be32 = [](std::uint32_t v) {
    return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  };
  std::string padding(400, '\0');
  std::mt19937 rng(5);
  for (char& c : padding) c = char(rng());
  const std::uint32_t size = 132 + 12 + std::uint32_t(tag.size() + padding.size());
  std::string icc(128, '\0');
  icc.replace(0, 4, be32(size));
  icc[8] = 2, icc[9] = 0x10;
  icc.replace(12, 4, "mntr");
  icc.replace(16, 4, space);
  icc.replace(20, 4, "XYZ ");
  icc.replace(36, 4, "acsp");
  icc.replace(68, 12, d50);
  return icc + be32(1) + "wtpt" + be32(144) + be32(std::uint32_t(tag.size())) + tag + padding;
}

// Writes a small RGB image with OpenImageIO and the attributes `set` puts on its spec.
template <typename Set>
void write_with_oiio(const std::string& path, Set set, int channels = 3) {
  OIIO::ImageSpec spec(24, 16, channels, OIIO::TypeDesc::UINT8);
  set(spec);
  auto out = OIIO::ImageOutput::create(path);
  REQUIRE(out);
  REQUIRE(out->open(path, spec));
  std::vector<std::uint8_t> pixels(24 * 16 * channels);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = std::uint8_t(i * 7);
  REQUIRE(out->write_image(OIIO::TypeDesc::UINT8, pixels.data()));
  REQUIRE(out->close());
}

OIIO::ImageSpec spec_of(const std::string& path) {
  auto in = OIIO::ImageInput::open(path);
  REQUIRE_MESSAGE(in, OIIO::geterror());
  OIIO::ImageSpec spec = in->spec();
  in->close();
  return spec;
}

std::string text_of(const OIIO::ImageSpec& spec, const std::string& name) {
  return spec.get_string_attribute(name);
}

}  // namespace

// A TIFF keeps its orientation in its own tag (274), with no EXIF block; JPEG and PNG keep it
// only in EXIF. Viewers then show the output turned as the input was (vips and oiiotool keep it).
TEST_CASE("a TIFF's own Orientation tag reaches a JPEG's and a PNG's EXIF block") {
  Sandbox box;
  write_with_oiio(box / "turned.tif", [](OIIO::ImageSpec& spec) {
    spec.attribute("Orientation", 6);
    spec.attribute("Make", "halo test");
  });
  for (const std::string ext : {"jpg", "png"}) {
    CAPTURE(ext);
    const Result r = box.halo("run " + box / "turned.tif -f gaussian:r=1 -o " + box / "o." + ext);
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const OIIO::ImageSpec spec = spec_of(box / "o." + ext);
    CHECK(spec.get_int_attribute("Orientation") == 6);
    CHECK(text_of(spec, "Make") == "halo test");
    // Put upright, the output says so (Orientation 1), and its pixels are turned.
    const Result upright =
        box.halo("run " + box / "turned.tif --auto-orient -o " + box / "u." + ext);
    REQUIRE_MESSAGE(upright.code == 0, upright.err);
    const OIIO::ImageSpec turned = spec_of(box / "u." + ext);
    CHECK(turned.get_int_attribute("Orientation", 1) == 1);
    CHECK(turned.width == 16);
  }
}

TEST_CASE("text attributes survive every format and every conversion between them") {
  Sandbox box;
  write_image(box / "base.png", photo(24, 16, 3), SampleType::u8);
  const std::vector<std::string> formats = {"png", "jpg", "exr", "tif"};
  for (const auto& from : formats) {
    const std::string in = box / ("in." + from);
    REQUIRE(box.halo("run " + box / "base.png" +
                     " --attrib Artist='Ann Example' --attrib ImageDescription='a test image' "
                     "--attrib Copyright='(c) 2026 halo' -o " +
                     in)
                .code == 0);
    for (const auto& to : formats) {
      CAPTURE(from);
      CAPTURE(to);
      const std::string out = box / ("out-" + from + "." + to);
      const Result r = box.halo("run " + in + " -f box:r=1 -o " + out);
      REQUIRE_MESSAGE(r.code == 0, r.err);
      const OIIO::ImageSpec spec = spec_of(out);
      CHECK(text_of(spec, "Artist") == "Ann Example");
      CHECK(text_of(spec, "ImageDescription") == "a test image");
      CHECK(text_of(spec, "Copyright") == "(c) 2026 halo");
      CHECK(text_of(spec, "Software") == "halo " HALO_VERSION_TEXT);
    }
  }
}

TEST_CASE("EXR header attributes are kept with their types; PNG keeps their text") {
  Sandbox box;
  const float world_to_camera[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 2, 3, 4, 1};
  write_with_oiio(box / "render.exr", [&](OIIO::ImageSpec& spec) {
    spec.set_format(OIIO::TypeDesc::HALF);
    spec.attribute("worldToCamera", OIIO::TypeMatrix44, world_to_camera);
    spec.attribute("cycles:samples", 4096);
    spec.attribute("renderTime", 12.5f);
    spec.attribute("camera", "shot010_cam");
    spec.attribute("Exif:ISOSpeedRatings", 200);
  });
  REQUIRE(box.halo("run " + box / "render.exr -f gaussian:r=2 -o " + box / "clean.exr").code == 0);
  const OIIO::ImageSpec spec = spec_of(box / "clean.exr");
  const OIIO::ParamValue* matrix = spec.find_attribute("worldToCamera", OIIO::TypeMatrix44);
  REQUIRE(matrix);
  CHECK(std::memcmp(matrix->data(), world_to_camera, sizeof world_to_camera) == 0);
  CHECK(spec.get_int_attribute("cycles:samples") == 4096);
  CHECK(spec.get_float_attribute("renderTime") == 12.5f);
  CHECK(text_of(spec, "camera") == "shot010_cam");
  CHECK(spec.get_int_attribute("Exif:ISOSpeedRatings") == 200);  // EXR keeps names as they are
  CHECK(text_of(spec, "ImageHistory") == "halo run -f gaussian:r=2");
  // A second run appends its line to the history, as oiiotool does.
  REQUIRE(box.halo("run " + box / "clean.exr -f sharpen -o " + box / "again.exr").code == 0);
  CHECK(text_of(spec_of(box / "again.exr"), "ImageHistory") ==
        "halo run -f gaussian:r=2\nhalo run -f sharpen");
  // PNG: text attributes as text chunks; the EXIF-amenable ones in eXIf.
  REQUIRE(box.halo("run " + box / "render.exr -o " + box / "render.png").code == 0);
  const OIIO::ImageSpec png = spec_of(box / "render.png");
  CHECK(text_of(png, "camera") == "shot010_cam");
  CHECK(png.get_int_attribute("Exif:PhotographicSensitivity") == 200);
}

TEST_CASE("text named Exif: in a PNG stays text: no EXIF block made, no module loaded") {
  Sandbox box;
  // As oiiotool writes a PNG: its command line as a tEXt chunk keyed Exif:ImageHistory.
  write_with_oiio(box / "peer.png",
                  [&](OIIO::ImageSpec& spec) { spec.attribute("Exif:ImageHistory", "oiiotool"); });
  REQUIRE(Sandbox::read(box / "peer.png").find("eXIf") == std::string::npos);
  const Result r = box.halo("run " + box / "peer.png -f box:r=1 -vv -o " + box / "out.png");
  REQUIRE(r.code == 0);
  CHECK_FALSE(has(r.err, "OpenImageIO's module loaded"));
  CHECK(Sandbox::read(box / "out.png").find("eXIf") == std::string::npos);
  CHECK(text_of(spec_of(box / "out.png"), "Exif:ImageHistory") == "oiiotool");
  // A typed EXIF attribute does call for the block (and the module that encodes it).
  write_with_oiio(box / "typed.exr",
                  [&](OIIO::ImageSpec& spec) { spec.attribute("Exif:ISOSpeedRatings", 200); });
  const Result typed = box.halo("run " + box / "typed.exr -vv -o " + box / "typed.png");
  REQUIRE(typed.code == 0);
  CHECK(has(typed.err, "OpenImageIO's module loaded"));
  CHECK(Sandbox::read(box / "typed.png").find("eXIf") != std::string::npos);
}

TEST_CASE("EXIF, XMP, IPTC and the ICC profile of a JPEG reach JPEG, PNG and TIFF outputs") {
  Sandbox box;
  const std::string icc = fake_icc("RGB ");
  write_with_oiio(box / "photo.jpg", [&](OIIO::ImageSpec& spec) {
    spec.attribute("Exif:ISOSpeedRatings", 400);  // read back as PhotographicSensitivity
    spec.attribute("Make", "HaloCam");
    spec.attribute("IPTC:City", "Lyon");
    spec.attribute("ICCProfile", OIIO::TypeDesc(OIIO::TypeDesc::UINT8, int(icc.size())),
                   icc.data());
  });
  const std::string raw = Sandbox::read(box / "photo.jpg");
  REQUIRE(raw.find("Photoshop 3.0") != std::string::npos);  // OpenImageIO wrote IPTC
  for (const std::string to : {"jpg", "png", "tif"}) {
    CAPTURE(to);
    const std::string out = box / ("out." + to);
    REQUIRE(box.halo("run " + box / "photo.jpg -f sharpen -o " + out).code == 0);
    const OIIO::ImageSpec spec = spec_of(out);
    // OpenImageIO 2.4 writes no EXIF directory into TIFF: camera fields stay in JPEG and PNG.
    if (to != "tif") CHECK(spec.get_int_attribute("Exif:PhotographicSensitivity") == 400);
    CHECK(text_of(spec, "Make") == "HaloCam");
    const OIIO::ParamValue* profile = spec.find_attribute("ICCProfile");
    REQUIRE(profile);
    CHECK(std::string(static_cast<const char*>(profile->data()), profile->type().size()) == icc);
    if (to == "jpg") CHECK(text_of(spec, "IPTC:City") == "Lyon");  // IPTC block as it came
  }
  // EXR: EXIF and IPTC as attributes.
  REQUIRE(box.halo("run " + box / "photo.jpg -o " + box / "out.exr").code == 0);
  const OIIO::ImageSpec exr = spec_of(box / "out.exr");
  CHECK(text_of(exr, "IPTC:City") == "Lyon");
  CHECK(exr.get_int_attribute("Exif:PhotographicSensitivity") == 400);
  CHECK(text_of(exr, "Make") == "HaloCam");
  // --attrib rewrites a field inside the EXIF block it came in, and keeps the others.
  REQUIRE(box.halo("run " + box / "photo.jpg --attrib Make=OtherCam -o " + box / "re.jpg").code ==
          0);
  const OIIO::ImageSpec re = spec_of(box / "re.jpg");
  CHECK(text_of(re, "Make") == "OtherCam");
  CHECK(re.get_int_attribute("Exif:PhotographicSensitivity") == 400);
  // A grey output cannot use an RGB profile: it is left out, the rest stays.
  REQUIRE(box.halo("run " + box / "photo.jpg -f emboss -o " + box / "grey.png").code == 0);
  const OIIO::ImageSpec grey = spec_of(box / "grey.png");
  CHECK(grey.nchannels == 1);
  CHECK_FALSE(grey.find_attribute("ICCProfile"));
  CHECK(text_of(grey, "Make") == "HaloCam");
}

TEST_CASE("XMP and PNG text round trips; --strip-metadata and --attrib") {
  Sandbox box;
  const std::string xmp =
      "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF "
      "xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><rdf:Description "
      "xmlns:dc='http://purl.org/dc/elements/1.1/' dc:format='image/png'/></rdf:RDF>"
      "</x:xmpmeta>";
  write_image(box / "base.png", photo(24, 16, 3), SampleType::u8);
  // halo's own writer puts custom text and non-ASCII text in tEXt and iTXt chunks.
  REQUIRE(box.halo("run " + box / "base.png" +
                   " --attrib 'Project=Océan 2026' --attrib Comment='first pass' -o " +
                   box / "in.png")
              .code == 0);
  const OIIO::ImageSpec in = spec_of(box / "in.png");
  CHECK(text_of(in, "Project") == "Océan 2026");
  CHECK(text_of(in, "Comment") == "first pass");
  for (const std::string to : {"png", "jpg"}) {
    REQUIRE(box.halo("run " + box / "in.png -f box:r=1 -o " + box / ("out." + to)).code == 0);
    if (to == "png") CHECK(text_of(spec_of(box / "out.png"), "Project") == "Océan 2026");
  }
  // The JPEG comment marker holds Comment.
  CHECK(Sandbox::read(box / "out.jpg").find("first pass") != std::string::npos);

  // An XMP packet in an iTXt chunk (put in by hand), carried byte for byte to PNG and JPEG.
  std::string png = Sandbox::read(box / "base.png");
  const std::string data = std::string("XML:com.adobe.xmp") + std::string(5, '\0') + xmp;
  std::string chunk;
  for (int i = 3; i >= 0; --i) chunk.push_back(char((data.size() >> (8 * i)) & 0xff));
  chunk += "iTXt" + data;
  const uLong crc =
      crc32(0, reinterpret_cast<const Bytef*>(chunk.data() + 4), uInt(chunk.size() - 4));
  for (int i = 3; i >= 0; --i) chunk.push_back(char((crc >> (8 * i)) & 0xff));
  png.insert(33, chunk);  // after the signature and IHDR
  std::ofstream(box / "xmp.png", std::ios::binary) << png;
  for (const std::string to : {"png", "jpg"}) {
    CAPTURE(to);
    REQUIRE(box.halo("run " + box / "xmp.png -f box:r=1 -o " + box / ("xmp-out." + to)).code == 0);
    const std::string bytes = Sandbox::read(box / ("xmp-out." + to));
    const std::string header = to == "png" ? std::string("XML:com.adobe.xmp") + std::string(5, '\0')
                                           : std::string("http://ns.adobe.com/xap/1.0/") + '\0';
    CHECK(bytes.find(header + xmp) != std::string::npos);
  }

  // --attrib replaces what the input says.
  REQUIRE(box.halo("run " + box / "in.png --attrib Comment=second -o " + box / "c.png").code == 0);
  CHECK(text_of(spec_of(box / "c.png"), "Comment") == "second");

  const Result stripped =
      box.halo("run " + box / "in.png --strip-metadata -f edge -o " + box / "bare.png");
  REQUIRE(stripped.code == 0);
  const OIIO::ImageSpec bare = spec_of(box / "bare.png");
  CHECK(text_of(bare, "Project").empty());
  CHECK(text_of(bare, "Comment").empty());
  CHECK(text_of(bare, "Software") == "halo " HALO_VERSION_TEXT);  // what halo did, still

  for (const std::string bad : {"--attrib novalue", "--attrib =x"}) {
    const Result r = box.halo("run " + box / "in.png " + bad + " -o " + box / "x.png");
    CHECK(r.code == 64);
    CHECK(has(r.err, "expected NAME=VALUE"));
    CHECK_FALSE(fs::exists(box / "x.png"));
  }
}

// The EXIF spec (2.32, Orientation) is the oracle, through libvips's autorot, which follows it:
// OpenImageIO 2.4's --reorient swaps 5 (transpose) and 7 (transverse), fixed after its issue
// 4661. Files are tagged and their tags read in this process (each oiiotool, like each halo run
// on a TIFF, pays OpenImageIO's 0.4 s start); the oracle suite has every orientation in both
// formats.
TEST_CASE("--auto-orient and -f orient put each EXIF Orientation upright as vips autorot") {
  Sandbox box;
  REQUIRE(std::system("command -v vips >/dev/null") == 0);  // libvips-tools
  const PixelBuffer picture = photo(37, 23, 3);
  const auto tagged = [&](const std::string& path, int o) {
    auto out = OIIO::ImageOutput::create(path);
    OIIO::ImageSpec spec(37, 23, 3, OIIO::TypeDesc::UINT8);
    spec.attribute("Orientation", o);
    REQUIRE(out->open(path, spec));
    REQUIRE(out->write_image(OIIO::TypeDesc::UINT8, picture.bytes.data()));
    out->close();
  };
  const auto orientation = [](const std::string& file) {
    return spec_of(file).get_int_attribute("Orientation", 1);
  };
  const auto same = [](const std::string& a, const std::string& b) {
    const PixelBuffer x = read_image({a, {}}).pixels, y = read_image({b, {}}).pixels;
    return x.width == y.width && x.height == y.height && x.channels == y.channels &&
           x.bytes.size() == y.bytes.size() &&
           std::equal(x.bytes.begin(), x.bytes.end(), y.bytes.begin());
  };
  for (int o = 1; o <= 8; ++o) {
    for (const char* format : {"jpg", "tif"}) {
      // TIFF (its own tag 274) for the diagonal orientations and a turn.
      if (std::string(format) == "tif" && o != 5 && o != 6 && o != 7) continue;
      INFO("Orientation ", o, " in a ", format);
      const std::string stored = box / (std::string("o.") + format);
      tagged(stored, o);
      REQUIRE(orientation(stored) == o);
      REQUIRE(std::system(("vips autorot " + stored + " " + box / "upright.png").c_str()) == 0);
      REQUIRE(box.halo("run " + stored + " --auto-orient -o " + box / "h.png").code == 0);
      CHECK(same(box / "h.png", box / "upright.png"));
      // The orient filter is the same, wherever in the chain; --verify checks it on the device.
      const Result f = box.halo("run " + stored + " -f exposure:stops=0 -f orient -o " +
                                box / "f.png" + " --verify --device 0");
      REQUIRE_MESSAGE(f.code == 0, f.err);
      CHECK(same(box / "f.png", box / "upright.png"));
      // The output says it is upright; off by default, the samples as stored and the tag kept.
      const std::string up = box / (std::string("up.") + format);
      REQUIRE(box.halo("run " + stored + " --auto-orient -o " + up).code == 0);
      CHECK(orientation(up) == 1);
      const std::string kept = box / (std::string("kept.") + format);
      REQUIRE(box.halo("run " + stored + " -o " + kept).code == 0);
      CHECK(orientation(kept) == o);
    }
  }
  // A JPEG's EXIF block, through a filter.
  tagged(box / "six.jpg", 6);
  const Result r =
      box.halo("run " + box / "six.jpg" + " --auto-orient -f sharpen -o " + box / "six-up.jpg");
  CHECK(r.code == 0);
  const LoadedImage up = read_image({box / "six-up.jpg", {}});
  CHECK(up.pixels.width == 23);
  CHECK(up.pixels.height == 37);
  CHECK(orientation(box / "six-up.jpg") == 1);
}

TEST_CASE("PNG gamma chunks are carried; icc converts by them and tags the output instead") {
  Sandbox box;
  // A grey ramp encoded with gamma 1.8 (gAMA 0.55556), as old Mac images and libpng's test
  // images are: a viewer that ignores gAMA shows it too light.
  std::vector<std::uint8_t> ramp(256 * 3);
  for (int x = 0; x < 256; ++x) ramp[x * 3] = ramp[x * 3 + 1] = ramp[x * 3 + 2] = std::uint8_t(x);
  auto out = OIIO::ImageOutput::create(box / "g18.png");
  OIIO::ImageSpec spec(256, 1, 3, OIIO::TypeDesc::UINT8);
  spec.attribute("oiio:ColorSpace", "GammaCorrected1.8");
  spec.attribute("oiio:Gamma", 1.8f);
  REQUIRE(out->open(box / "g18.png", spec));
  REQUIRE(out->write_image(OIIO::TypeDesc::UINT8, ramp.data()));
  REQUIRE(out->close());
  REQUIRE(spec_of(box / "g18.png").get_float_attribute("oiio:Gamma") == doctest::Approx(1.8));

  // Through halo with no colour stage: the chunk stays.
  REQUIRE(box.halo("run " + box / "g18.png -f box:r=1 -o " + box / "kept.png").code == 0);
  CHECK(spec_of(box / "kept.png").get_float_attribute("oiio:Gamma") == doctest::Approx(1.8));

  // --linear decodes by the file's gamma, not the sRGB curve, and encodes back by it: one stop
  // brighter is x 2^(1/1.8) in the stored codes; the chunk stays.
  const Result lin = box.halo("run " + box / "g18.png --linear -f exposure:stops=1 -o " +
                              box / "lin.png --verify -v");
  REQUIRE_MESSAGE(lin.code == 0, lin.err);
  CHECK(has(lin.err, "the file's PNG gamma: v^1.8"));
  CHECK(spec_of(box / "lin.png").get_float_attribute("oiio:Gamma") == doctest::Approx(1.8));
  {
    auto read = OIIO::ImageInput::open(box / "lin.png");
    REQUIRE(read);
    std::vector<std::uint8_t> v(256 * 3);
    REQUIRE(read->read_image(0, 0, 0, 3, OIIO::TypeDesc::UINT8, v.data()));
    for (int x = 0; x < 256; x += 5)
      CHECK(std::abs(v[x * 3] - std::min(255.0, x * std::pow(2.0, 1 / 1.8))) <= 1.0);
  }

  // icc: decoded by the chunk (v^1.8), encoded as sRGB, tagged sRGB, the chunk gone.
  const Result r = box.halo("run " + box / "g18.png -f icc -o " + box / "srgb.png --verify -v");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(has(r.err, "(decoding gamma 1.8)"));
  const OIIO::ImageSpec converted = spec_of(box / "srgb.png");
  CHECK(converted.find_attribute("ICCProfile"));
  CHECK(converted.get_float_attribute("oiio:Gamma", 0.0f) != doctest::Approx(1.8));
  auto in = OIIO::ImageInput::open(box / "srgb.png");
  REQUIRE(in);
  std::vector<std::uint8_t> got(256 * 3);
  REQUIRE(in->read_image(0, 0, 0, 3, OIIO::TypeDesc::UINT8, got.data()));
  for (int x = 0; x < 256; x += 5) {
    const double lin = std::pow(x / 255.0, 1.8);
    const double want = lin <= 0.0031308 ? lin * 12.92 : 1.055 * std::pow(lin, 1 / 2.4) - 0.055;
    CHECK(std::abs(got[x * 3 + 1] - want * 255) <= 1.0);
  }

  // A grey image converted so: tagged with the grey form of sRGB's profile (its RGB profile
  // cannot tag one channel, and the output said nothing of its encoding).
  REQUIRE(box.halo("run " + box / "g18.png -f icc -f emboss -o " + box / "grey.png").code == 0);
  const OIIO::ImageSpec grey = spec_of(box / "grey.png");
  CHECK(grey.nchannels == 1);
  const OIIO::ParamValue* profile = grey.find_attribute("ICCProfile");
  REQUIRE(profile);
  const std::string bytes(static_cast<const char*>(profile->data()), profile->type().size());
  CHECK(bytes.substr(16, 4) == "GRAY");
  // Into an EXR, which holds no ICC profile: no "OIIO DEBUG:" line reaches the user.
  const Result exr = box.halo("run " + box / "grey.png -o " + box / "grey.exr");
  CHECK(exr.code == 0);
  CHECK_FALSE(has(exr.err, "OIIO"));
}

// libpng's own test images (scripts/fetch-testpngs: contrib/testpngs of libpng 1.6.39).
TEST_CASE(
    "libpng's test images: every one read, its pixels and gamma chunks kept; damaged refused") {
  const fs::path dir = HALO_TESTPNGS;
  REQUIRE_MESSAGE(fs::exists(dir / "rgb-8-1.8.png"), "run scripts/fetch-testpngs");
  Sandbox box;
  fs::create_directories(box / "out");
  // One batch over the folder, as a user would run it.
  const Result r = box.halo("run " + dir.string() + " -o " + box / "out/{stem}.png -q");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  int images = 0, gamma_18 = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".png") continue;
    ++images;
    const std::string name = entry.path().filename().string();
    INFO(name);
    const std::string out = box / ("out/" + name);
    // The same samples as OpenImageIO decodes from the original (palettes and low bit depths
    // expanded by both).
    auto a = OIIO::ImageInput::open(entry.path().string());
    auto b = OIIO::ImageInput::open(out);
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(a->spec().width == b->spec().width);
    REQUIRE(a->spec().nchannels == b->spec().nchannels);
    std::vector<float> va(a->spec().image_pixels() * a->spec().nchannels), vb(va.size());
    REQUIRE(a->read_image(0, 0, 0, a->spec().nchannels, OIIO::TypeFloat, va.data()));
    REQUIRE(b->read_image(0, 0, 0, b->spec().nchannels, OIIO::TypeFloat, vb.data()));
    CHECK(va == vb);
    // gAMA and the sRGB chunk come through: a viewer decodes the copy as it did the original.
    CHECK(b->spec().get_float_attribute("oiio:Gamma", 0) ==
          doctest::Approx(a->spec().get_float_attribute("oiio:Gamma", 0)).epsilon(1e-4));
    CHECK(b->spec().get_string_attribute("oiio:ColorSpace") ==
          a->spec().get_string_attribute("oiio:ColorSpace"));
    gamma_18 += name.find("-1.8") != std::string::npos;
  }
  CHECK(images >= 100);
  CHECK(gamma_18 >= 20);

  // rgb-8-1.8.png to sRGB: its gAMA is 0.65909, so v^(1/0.65909) through the sRGB curve (its
  // cHRM is sRGB's), within an 8-bit step.
  REQUIRE(
      box.halo("run " + (dir / "rgb-8-1.8.png").string() + " -f icc -o " + box / "srgb.png").code ==
      0);
  auto in = OIIO::ImageInput::open((dir / "rgb-8-1.8.png").string());
  auto out = OIIO::ImageInput::open(box / "srgb.png");
  std::vector<float> before(in->spec().image_pixels() * 3), after(before.size());
  REQUIRE(in->read_image(0, 0, 0, 3, OIIO::TypeFloat, before.data()));
  REQUIRE(out->read_image(0, 0, 0, 3, OIIO::TypeFloat, after.data()));
  for (std::size_t i = 0; i < before.size(); i += 7) {
    const double lin = std::pow(before[i], 1 / 0.65909);
    const double want = lin <= 0.0031308 ? lin * 12.92 : 1.055 * std::pow(lin, 1 / 2.4) - 0.055;
    CHECK(std::abs(after[i] - want) <= 1.0 / 255 + 1e-6);
  }

  // The damaged ones (bad CRC, huge chunks, ...): a clear error or a picture, never a crash.
  for (const auto& entry : fs::directory_iterator(dir / "crashers")) {
    INFO(entry.path().filename().string());
    const Result bad = box.halo("run " + entry.path().string() + " -o " + box / "bad.png");
    CHECK((bad.code == 0 || bad.code == 65));
    if (bad.code == 65) CHECK(has(bad.err, entry.path().string()));
  }
}

TEST_CASE("an EXR output keeps each channel's type and the compression unless told otherwise") {
  // A render's layout: half colour and alpha beside float depth, PIZ.
  Sandbox box;
  write_with_oiio(
      box / "render.exr",
      [](OIIO::ImageSpec& spec) {
        spec.channelnames = {"R", "G", "B", "A", "Z"};
        spec.channelformats = {OIIO::TypeDesc::HALF, OIIO::TypeDesc::HALF, OIIO::TypeDesc::HALF,
                               OIIO::TypeDesc::HALF, OIIO::TypeDesc::FLOAT};
        spec.attribute("compression", "piz");
      },
      5);
  const auto formats = [](const OIIO::ImageSpec& spec) {
    std::string text;
    for (int c = 0; c < spec.nchannels; ++c)
      text += spec.channelformat(c).c_str() + std::string(" ");
    return text;
  };
  REQUIRE(box.halo("run " + box / "render.exr -f gaussian:r=2 -o " + box / "kept.exr").code == 0);
  const OIIO::ImageSpec kept = spec_of(box / "kept.exr");
  CHECK(formats(kept) == "half half half half float ");
  CHECK(text_of(kept, "compression") == "piz");
  REQUIRE(
      box.halo("run " + box / "render.exr --type float --compression zips -o " + box / "told.exr")
          .code == 0);
  const OIIO::ImageSpec told = spec_of(box / "told.exr");
  CHECK(formats(told) == "float float float float float ");
  CHECK(text_of(told, "compression") == "zips");
  // A bad --compression for EXR is a usage error naming what EXR has.
  const Result bad = box.halo("run " + box / "render.exr --compression lzw -o " + box / "b.exr");
  CHECK(bad.code == 64);
  CHECK(has(bad.err, "--compression 'lzw' does not apply to .exr"));
}
