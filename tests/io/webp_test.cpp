// WebP stills read through libwebp: files made here with libwebp's own encoder and muxer
// (lossless, lossy, alpha, ICC/EXIF/XMP chunks, an animation), read back through open_reader.
#include <doctest/doctest.h>
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/mux.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/codec.hpp"
#include "io/temp_dir.hpp"

using namespace halo;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

// Alpha (the fourth channel) is never 0: libwebp's lossless encoder keeps the colour under
// alpha 0 only when asked to (WebPConfig::exact), which its one-call functions do not.
std::vector<std::uint8_t> noise(int width, int height, int channels, unsigned seed) {
  std::vector<std::uint8_t> samples(std::size_t(width) * height * channels);
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < samples.size(); ++i)
    samples[i] = std::uint8_t(channels == 4 && i % 4 == 3 ? 1 + rng() % 255 : rng());
  return samples;
}

// libwebp's simple encoder: lossless, or lossy at quality 90.
std::string encode(const std::vector<std::uint8_t>& samples, int width, int height, int channels,
                   bool lossless) {
  std::uint8_t* out = nullptr;
  const int stride = width * channels;
  std::size_t size = 0;
  if (lossless)
    size = channels == 4 ? WebPEncodeLosslessRGBA(samples.data(), width, height, stride, &out)
                         : WebPEncodeLosslessRGB(samples.data(), width, height, stride, &out);
  else
    size = channels == 4 ? WebPEncodeRGBA(samples.data(), width, height, stride, 90, &out)
                         : WebPEncodeRGB(samples.data(), width, height, stride, 90, &out);
  REQUIRE(size > 0);
  std::string file(reinterpret_cast<const char*>(out), size);
  WebPFree(out);
  return file;
}

void save(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

std::vector<std::uint8_t> read_all(ImageReader& reader, PixelType type = PixelType::u8) {
  const ImageHeader& h = reader.header();
  const int n = int(h.channels.size());
  std::vector<std::uint8_t> out(std::size_t(h.width) * h.height * n * sample_size(type));
  // In uneven pieces, as strips ask for them.
  int row = 0;
  for (int count = 1; row < h.height; count = count % 5 + 1) {
    const int take = std::min(count, h.height - row);
    reader.read_rows(take, 0, n, type,
                     reinterpret_cast<std::byte*>(out.data()) +
                         std::size_t(row) * h.width * n * sample_size(type));
    row += take;
  }
  return out;
}

}  // namespace

TEST_CASE("WebP lossless reads back every sample, with and without alpha, at odd sizes") {
  TempDir dir;
  for (const auto& [w, h, channels] :
       {std::tuple{1, 1, 3}, {7, 5, 3}, {37, 23, 4}, {1023, 17, 3}, {2, 300, 4}}) {
    INFO(w, "x", h, "x", channels);
    const auto samples = noise(w, h, channels, unsigned(w * h));
    save(dir / "a.webp", encode(samples, w, h, channels, true));
    auto reader = open_reader(dir / "a.webp");
    const ImageHeader& header = reader->header();
    CHECK(header.format == "webp");
    CHECK(header.width == w);
    CHECK(header.height == h);
    CHECK(header.alpha == (channels == 4));
    CHECK(header.channels == standard_names(channels, channels == 4));
    CHECK(header.can_shrink);
    CHECK(read_all(*reader) == samples);
  }
}

TEST_CASE("WebP lossy equals libwebp's one-call decode; float and 16-bit reads scale the codes") {
  TempDir dir;
  const int w = 301, h = 77;
  save(dir / "a.webp", encode(noise(w, h, 3, 5), w, h, 3, false));
  std::ifstream in(dir / "a.webp", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int dw = 0, dh = 0;
  std::uint8_t* expected =
      WebPDecodeRGB(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), &dw, &dh);
  REQUIRE(expected);
  const std::vector<std::uint8_t> want(expected, expected + std::size_t(w) * h * 3);
  WebPFree(expected);
  CHECK(read_all(*open_reader(dir / "a.webp")) == want);

  const auto floats = read_all(*open_reader(dir / "a.webp"), PixelType::f32);
  const auto codes16 = read_all(*open_reader(dir / "a.webp"), PixelType::u16);
  bool same = true;
  for (std::size_t i = 0; i < want.size(); ++i) {
    float f;
    std::uint16_t c;
    std::memcpy(&f, floats.data() + 4 * i, 4);
    std::memcpy(&c, codes16.data() + 2 * i, 2);
    same = same && f == float(want[i]) * (1.0f / 255.0f) && c == want[i];
  }
  CHECK(same);
}

TEST_CASE("WebP decoded shrunk: each side divided and rounded up, the average of the pixels") {
  TempDir dir;
  // 4x4 blocks of one value each, so that every output pixel of a 1/4 decode is that value.
  const int w = 64, h = 48;
  std::vector<std::uint8_t> blocks(std::size_t(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        blocks[(std::size_t(y) * w + x) * 3 + c] = std::uint8_t((x / 4 * 7 + y / 4 * 13 + c) % 256);
  save(dir / "a.webp", encode(blocks, w, h, 3, true));
  auto reader = open_reader(dir / "a.webp", 4);
  CHECK(reader->header().shrink == 4);
  CHECK(reader->header().width == 16);
  CHECK(reader->header().height == 12);
  const auto got = read_all(*reader);
  int worst = 0;
  for (int y = 0; y < 12; ++y)
    for (int x = 0; x < 16; ++x)
      for (int c = 0; c < 3; ++c)
        worst = std::max(worst, std::abs(int(got[(std::size_t(y) * 16 + x) * 3 + c]) -
                                         int(blocks[(std::size_t(4 * y) * w + 4 * x) * 3 + c])));
  CHECK(worst <= 1);

  save(dir / "b.webp", encode(noise(67, 45, 4, 3), 67, 45, 4, true));
  for (const int shrink : {2, 8}) {
    auto odd = open_reader(dir / "b.webp", shrink);
    CHECK(odd->header().width == (67 + shrink - 1) / shrink);
    CHECK(odd->header().height == (45 + shrink - 1) / shrink);
    CHECK(read_all(*odd).size() == std::size_t(odd->header().width) * odd->header().height * 4);
  }
  // A factor libwebp's scaler is not asked for: averaged blocks (io/box_shrink.hpp).
  CHECK(open_reader(dir / "b.webp", 3)->header().width == 23);
}

// `still` with metadata chunks added (fourcc, payload), as libwebp's muxer assembles it.
std::string with_chunks(const std::string& still,
                        const std::vector<std::pair<const char*, std::string>>& chunks) {
  WebPMux* mux = WebPMuxNew();
  const WebPData image{reinterpret_cast<const std::uint8_t*>(still.data()), still.size()};
  REQUIRE(WebPMuxSetImage(mux, &image, 1) == WEBP_MUX_OK);
  for (const auto& [fourcc, payload] : chunks) {
    const WebPData data{reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()};
    REQUIRE(WebPMuxSetChunk(mux, fourcc, &data, 1) == WEBP_MUX_OK);
  }
  WebPData assembled;
  REQUIRE(WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK);
  std::string bytes(reinterpret_cast<const char*>(assembled.bytes), assembled.size);
  WebPDataClear(&assembled);
  WebPMuxDelete(mux);
  return bytes;
}

TEST_CASE("WebP metadata: the ICC profile, EXIF (a leading Exif marker dropped) and XMP chunks") {
  TempDir dir;
  const std::string still = encode(noise(9, 4, 3, 1), 9, 4, 3, true);
  const std::string icc = "an ICC profile's bytes", tiff = std::string("II*\0", 4) + "exif";
  const std::string xmp = "<x:xmpmeta/>";
  const std::string exif = std::string("Exif\0\0", 6) + tiff;
  save(dir / "m.webp", with_chunks(still, {{"ICCP", icc}, {"EXIF", exif}, {"XMP ", xmp}}));
  auto reader = open_reader(dir / "m.webp");
  CHECK(reader->header().metadata.icc == icc);
  CHECK(reader->header().metadata.exif == tiff);
  CHECK(reader->header().metadata.xmp == xmp);
  CHECK(read_all(*reader) == noise(9, 4, 3, 1));
}

// The header is read from the first 64 KiB; the rest when the pixels are wanted, or at once
// when the header flags metadata, which may follow the pixels.
TEST_CASE("WebP files longer than the header's read: pixels, trailing metadata, a long header") {
  TempDir dir;
  const int w = 300, h = 200;
  const std::string still = encode(noise(w, h, 3, 4), w, h, 3, true);
  REQUIRE(still.size() > (std::size_t(64) << 10));
  save(dir / "plain.webp", still);
  CHECK(read_all(*open_reader(dir / "plain.webp")) == noise(w, h, 3, 4));
  CHECK(read_all(*open_reader(dir / "plain.webp", 2)).size() == std::size_t(150) * 100 * 3);

  const std::string xmp = "<x:xmpmeta>after the pixels</x:xmpmeta>";
  save(dir / "tail.webp", with_chunks(still, {{"XMP ", xmp}}));
  auto tail = open_reader(dir / "tail.webp");
  CHECK(tail->header().metadata.xmp == xmp);
  CHECK(read_all(*tail) == noise(w, h, 3, 4));

  // A profile longer than the first read comes before the image: its header is read whole.
  const std::string icc(std::size_t(100) << 10, 'p');
  save(dir / "long.webp", with_chunks(encode(noise(9, 4, 3, 2), 9, 4, 3, true), {{"ICCP", icc}}));
  auto long_header = open_reader(dir / "long.webp");
  CHECK(long_header->header().width == 9);
  CHECK(long_header->header().metadata.icc == icc);
  CHECK(read_all(*long_header) == noise(9, 4, 3, 2));

  save(dir / "cut.webp", still.substr(0, still.size() - 1000));
  CHECK_THROWS_WITH_AS(read_all(*open_reader(dir / "cut.webp")),
                       doctest::Contains("ends early (truncated)"), Error);
}

TEST_CASE("WebP errors: truncated pixels, a damaged header, a RIFF that is no WebP") {
  TempDir dir;
  const std::string good = encode(noise(200, 150, 3, 9), 200, 150, 3, false);
  save(dir / "cut.webp", good.substr(0, good.size() / 2));
  auto reader = open_reader(dir / "cut.webp");  // the header is whole
  CHECK_THROWS_WITH_AS(read_all(*reader), doctest::Contains("ends early (truncated)"), Error);

  std::string damaged = good.substr(0, 40);
  std::memset(damaged.data() + 20, 0xff, 20);
  save(dir / "bad.webp", damaged);
  CHECK_THROWS_WITH_AS(open_reader(dir / "bad.webp"), doctest::Contains("bad.webp"), Error);

  save(dir / "riff.webp", std::string("RIFF\x04\0\0\0WAVE", 12));
  CHECK_THROWS_AS(open_reader(dir / "riff.webp"), Error);
}

TEST_CASE("an animated WebP goes to OpenImageIO's reader, which reads its first frame") {
  TempDir dir;
  WebPAnimEncoderOptions options;
  REQUIRE(WebPAnimEncoderOptionsInit(&options));
  WebPAnimEncoder* encoder = WebPAnimEncoderNew(8, 6, &options);
  REQUIRE(encoder);
  WebPConfig config;
  REQUIRE(WebPConfigInit(&config));
  config.lossless = 1;
  for (int frame = 0; frame < 2; ++frame) {
    WebPPicture picture;
    REQUIRE(WebPPictureInit(&picture));
    picture.width = 8, picture.height = 6, picture.use_argb = 1;
    REQUIRE(WebPPictureAlloc(&picture));
    for (int i = 0; i < 8 * 6; ++i) picture.argb[i] = frame ? 0xff00ff00u : 0xffff0000u;
    REQUIRE(WebPAnimEncoderAdd(encoder, &picture, frame * 100, &config));
    WebPPictureFree(&picture);
  }
  REQUIRE(WebPAnimEncoderAdd(encoder, nullptr, 200, nullptr));
  WebPData animation;
  WebPDataInit(&animation);
  REQUIRE(WebPAnimEncoderAssemble(encoder, &animation));
  save(dir / "anim.webp",
       std::string(reinterpret_cast<const char*>(animation.bytes), animation.size));
  WebPDataClear(&animation);
  WebPAnimEncoderDelete(encoder);
  auto reader = open_reader(dir / "anim.webp");
  CHECK(reader->header().width == 8);
  CHECK_FALSE(reader->header().can_shrink);  // not halo's reader
  const auto first = read_all(*reader);
  CHECK(first[0] == 255);  // red, the first frame
  CHECK(first[1] == 0);
}
