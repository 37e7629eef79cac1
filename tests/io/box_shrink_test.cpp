// Shrink-on-load by averaged blocks: sizes rounded up, edge blocks as the image leaves them,
// colour weighted by alpha, codes rounded, every sample type, channel subsets.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "io/box_shrink.hpp"
#include "io/image_io.hpp"
#include "io/temp_dir.hpp"
#include "support.hpp"

using namespace halo;
using test::TempDir;

namespace {

// Samples that differ at every pixel and channel, alpha 0 in places (last channel).
PixelBuffer pattern(int width, int height, int channels, PixelType type, bool alpha) {
  PixelBuffer p(width, height, channels, type, alpha);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c) {
        const std::size_t i = (std::size_t(y) * width + x) * channels + c;
        const bool is_alpha = alpha && c == channels - 1;
        const int code = is_alpha ? ((x + 2 * y) % 3) * 120 : (37 * x + 91 * y + 53 * c) % 256;
        switch (type) {
          case PixelType::u8:
            p.samples<std::uint8_t>()[i] = std::uint8_t(code);
            break;
          case PixelType::u16:
            p.samples<std::uint16_t>()[i] = std::uint16_t(code * 257 + c);
            break;
          case PixelType::f32:
            p.samples<float>()[i] = float(code) / 200.0f;
            break;
        }
      }
  return p;
}

// The block average the spec states, in the file's units, computed pixel by pixel: colour
// weighted by straight alpha (8 and 16-bit files); float files' colour is associated already.
double expected(const PixelBuffer& p, int f, int bx, int by, int c) {
  const bool straight = p.alpha && p.type != PixelType::f32;
  double sum = 0, weighted = 0, alpha = 0;
  int n = 0;
  const int a = p.channels - 1;
  for (int y = by * f; y < std::min(p.height, (by + 1) * f); ++y)
    for (int x = bx * f; x < std::min(p.width, (bx + 1) * f); ++x, ++n) {
      const double v = test::stored(p, x, y, c), alpha_here = test::stored(p, x, y, a);
      sum += v;
      if (straight) weighted += v * alpha_here, alpha += alpha_here;
    }
  if (straight && c != a && alpha > 0) return weighted / alpha;
  return sum / n;
}

}  // namespace

TEST_CASE("shrink by blocks: sizes, edge blocks, alpha weighting and rounding, as stated") {
  TempDir dir;
  struct Case {
    const char* file;
    PixelType type;
    SampleType stored;
    int channels;
    bool alpha;
  };
  const Case cases[] = {{"rgba8.png", PixelType::u8, SampleType::u8, 4, true},
                        {"grey-alpha16.png", PixelType::u16, SampleType::u16, 2, true},
                        {"rgb8.png", PixelType::u8, SampleType::u8, 3, false},
                        {"rgb.pfm", PixelType::f32, SampleType::f32, 3, false},
                        {"rgba.exr", PixelType::f32, SampleType::f32, 4, true}};
  for (const Case& k : cases)
    for (const auto& [w, h, f] : {std::array{7, 5, 3}, std::array{7, 5, 2}, std::array{1, 1, 2},
                                  std::array{13, 11, 13}, std::array{20, 3, 7}}) {
      INFO(k.file, " ", w, "x", h, " by ", f);
      const PixelBuffer image = pattern(w, h, k.channels, k.type, k.alpha);
      write_image(dir / k.file, image, k.stored);
      auto reader = open_reader(std::string(dir / k.file), f);
      const ImageHeader& header = reader->header();
      REQUIRE(header.width == (w + f - 1) / f);
      REQUIRE(header.height == (h + f - 1) / f);
      CHECK(header.shrink == f);
      const int sw = header.width, sh = header.height;
      // Codes as codes and as floats (codes / 255 or / 65535) from two readers.
      PixelBuffer got(sw, sh, k.channels, k.type, k.alpha);
      reader->read_rows(sh, 0, k.channels, k.type, got.bytes.data());
      std::vector<float> floats(std::size_t(sw) * sh * 2);
      open_reader(std::string(dir / k.file), f)
          ->read_rows(sh, k.channels - 2, 2, PixelType::f32,
                      reinterpret_cast<std::byte*>(floats.data()));
      const double top = k.type == PixelType::u8 ? 255 : k.type == PixelType::u16 ? 65535 : 1;
      for (int y = 0; y < sh; ++y)
        for (int x = 0; x < sw; ++x)
          for (int c = 0; c < k.channels; ++c) {
            const double want = expected(image, f, x, y, c);
            const double rounded = k.type == PixelType::f32 ? want : std::nearbyint(want);
            if (k.type == PixelType::f32)
              CHECK(test::stored(got, x, y, c) == doctest::Approx(want).epsilon(1e-6));
            else
              CHECK(test::stored(got, x, y, c) == rounded);
            if (c >= k.channels - 2)
              CHECK(floats[(std::size_t(y) * sw + x) * 2 + (c - (k.channels - 2))] ==
                    doctest::Approx(rounded / top).epsilon(1e-6));
          }
    }
}

TEST_CASE("shrink by blocks: a block of alpha 0 keeps its plain colour average; 1 is no shrink") {
  TempDir dir;
  PixelBuffer clear(2, 1, 4, PixelType::u8, true);
  const std::uint8_t rgba[] = {200, 100, 50, 0, 100, 0, 250, 0};
  std::memcpy(clear.bytes.data(), rgba, sizeof rgba);
  write_image(dir / "clear.png", clear, SampleType::u8);
  PixelBuffer got(1, 1, 4, PixelType::u8, true);
  open_reader(std::string(dir / "clear.png"), 2)
      ->read_rows(1, 0, 4, PixelType::u8, got.bytes.data());
  const auto* px = got.samples<std::uint8_t>();
  CHECK(std::vector<int>(px, px + 4) == std::vector<int>{150, 50, 150, 0});
  CHECK(open_reader(std::string(dir / "clear.png"), 1)->header().width == 2);
}
