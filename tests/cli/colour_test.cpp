// Colour and alpha through the real binary: associated alpha around the filters that mix
// neighbours (no fringe from transparent pixels), --straight-alpha, and --linear (the sRGB
// curve decoded before the filters and encoded after, float inputs left alone).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

#include "cli/sandbox.hpp"
#include "io/image_io.hpp"

using namespace halo;
using namespace halo::test;

namespace {

// Left half opaque red; right half fully transparent, its colour green (what a renderer or a
// paint program leaves there).
PixelBuffer transparent_edge(int width, int height) {
  PixelBuffer p(width, height, 4, PixelType::u8, true);
  auto* s = p.samples<std::uint8_t>();
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      std::uint8_t* px = s + (std::size_t(y) * width + x) * 4;
      const bool opaque = x < width / 2;
      px[0] = opaque ? 255 : 0, px[1] = opaque ? 0 : 255, px[2] = 0, px[3] = opaque ? 255 : 0;
    }
  return p;
}

int count(const std::string& text, const std::string& part) {
  int n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

double srgb_to_linear(double v) {
  return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
}
double linear_to_srgb(double v) {
  return v <= 0.0031308 ? v * 12.92 : 1.055 * std::pow(v, 1 / 2.4) - 0.055;
}

}  // namespace

TEST_CASE("alpha: a blur next to transparent pixels takes none of their colour, alpha fades") {
  Sandbox box;
  write_image(box / "edge.png", transparent_edge(24, 6), SampleType::u8);
  const Result r =
      box.halo("run " + box / "edge.png -f gaussian:r=4 -o " + box / "blur.png" + " --verify -v");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(has(r.out, "verify premultiply"));
  CHECK(has(r.out, "verify unpremultiply"));
  const PixelBuffer out = read_image({box / "blur.png", {}}).pixels;
  int visible = 0;
  for (std::size_t i = 0; i < out.sample_count(); i += 4) {
    const auto* px = out.samples<std::uint8_t>() + i;
    if (px[3] == 0) continue;
    ++visible;
    CHECK(px[0] == 255);  // pure red wherever anything shows: no green, no darkening
    CHECK(px[1] == 0);
  }
  CHECK(visible > 24 * 6 / 2);  // alpha was blurred with the colour: the edge fades out

  // The stored colour filtered as it is: green bleeds into the visible pixels.
  REQUIRE(box.halo("run " + box / "edge.png -f gaussian:r=4 --straight-alpha -o " +
                   box / "straight.png")
              .code == 0);
  const PixelBuffer straight = read_image({box / "straight.png", {}}).pixels;
  int fringed = 0;
  for (std::size_t i = 0; i < straight.sample_count(); i += 4) {
    const auto* px = straight.samples<std::uint8_t>() + i;
    fringed += px[3] > 0 && px[1] > 0;
  }
  CHECK(fringed > 0);

  // A pointwise chain (histogram) and images without alpha get no extra stages.
  const Result hist =
      box.halo("run " + box / "edge.png -f histogram:mode=channel -o " + box / "h.png --verify");
  CHECK_FALSE(has(hist.out, "premultiply"));

  // Around the stages that mix neighbours only: after the first pointwise stage, before the
  // last; the guided filters too, which filter alpha with the colour's own weights.
  const Result chain = box.halo("run " + box / "edge.png -f exposure:stops=1 -f gaussian:r=2 " +
                                "-f box:r=1 -f exposure:stops=-1 -o " + box / "c.png --verify");
  REQUIRE_MESSAGE(chain.code == 0, chain.err);
  const auto at = [&](const std::string& what) { return chain.out.find("verify " + what); };
  CHECK(at("exposure:stops=1") < at("premultiply"));
  CHECK(at("premultiply") < at("gaussian:r=2"));
  CHECK(at("box:r=1") < at("unpremultiply"));
  CHECK(at("unpremultiply") < at("exposure:stops=-1"));
  CHECK(at("exposure:stops=-1") != std::string::npos);
  const Result guided =
      box.halo("run " + box / "edge.png -f bilateral -o " + box / "b.png --verify");
  REQUIRE_MESSAGE(guided.code == 0, guided.err);
  CHECK(has(guided.out, "verify bilateral"));
  CHECK(has(guided.out, "verify premultiply"));
}

// A float file's colour is premultiplied already (EXR): a filter that mixes neighbours must
// filter alpha with it, or colour spreads into transparent pixels and edges darken without
// their alpha fading (a halo once composited). 16x16 squares of white (alpha 1) and nothing
// (alpha 0): every output pixel's colour must equal its alpha, as on the input.
TEST_CASE("alpha in a float EXR: the filters that mix neighbours filter alpha with the colour") {
  Sandbox box;
  PixelBuffer checker(64, 64, 4, PixelType::f32, true);
  float* s = checker.samples<float>();
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x)
      for (int c = 0; c < 4; ++c) s[(std::size_t(y) * 64 + x) * 4 + c] = ((x / 16 + y / 16) % 2);
  write_image(box / "m.exr", checker, SampleType::f32);
  for (const std::string spec :
       {"gaussian:r=2", "box:r=2", "unsharp", "sharpen", "median", "dilate",
        "conv:k=1,2,1,2,4,2,1,2,1", "resize:w=50", "bilateral:sigma_r=2", "atrous:sigma_c=4"}) {
    CAPTURE(spec);
    const Result r =
        box.halo("run " + box / "m.exr -f " + spec + " -o " + box / "b.exr --verify -v");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const PixelBuffer out = read_image({box / "b.exr", {}}).pixels;
    REQUIRE(out.channels == 4);
    const float* px = out.samples<float>();
    int mismatched = 0, partial = 0;
    for (std::size_t i = 0; i < out.sample_count(); i += 4) {
      for (int c = 0; c < 3; ++c) mismatched += std::fabs(px[i + c] - px[i + 3]) > 1e-6f;
      partial += px[i + 3] != 0.0f && px[i + 3] != 1.0f;
    }
    CHECK(mismatched == 0);
    if (spec != "median" && spec != "dilate") CHECK(partial > 0);  // alpha was filtered
  }
  // Nothing is multiplied or divided: the pair only lets alpha through the filters.
  const Result r = box.halo("run " + box / "m.exr -f gaussian:r=2 -o " + box / "b.exr -v");
  CHECK(has(r.err, "premultiply:associated=1: images with alpha: colour premultiplied already"));
}

TEST_CASE("--linear: the sRGB curves are inverse on every 8-bit level, and a blur mixes light") {
  Sandbox box;
  PixelBuffer ramp(256, 2, 1, PixelType::u8);
  for (int i = 0; i < 512; ++i) ramp.samples<std::uint8_t>()[i] = std::uint8_t(i % 256);
  write_image(box / "ramp.png", ramp, SampleType::u8);
  const Result r = box.halo("run " + box / "ramp.png --linear --verify -o " + box / "same.png");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(read_image({box / "same.png", {}}).pixels.bytes == ramp.bytes);

  // A black/white step blurred: in linear light the edge pixels are brighter than in sRGB
  // values (half the light is not half the code value).
  PixelBuffer step(16, 3, 1, PixelType::u8);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 16; ++x) step.samples<std::uint8_t>()[y * 16 + x] = x < 8 ? 0 : 255;
  write_image(box / "step.png", step, SampleType::u8);
  REQUIRE(box.halo("run " + box / "step.png -f gaussian:r=3:sigma=1 --linear -o " + box / "lin.png")
              .code == 0);
  REQUIRE(
      box.halo("run " + box / "step.png -f gaussian:r=3:sigma=1 -o " + box / "gamma.png").code ==
      0);
  const PixelBuffer lin = read_image({box / "lin.png", {}}).pixels;
  const PixelBuffer gamma = read_image({box / "gamma.png", {}}).pixels;
  // Expected by hand: the normalised Gaussian weights over the step, in linear light.
  double w[7], sum = 0;
  for (int i = -3; i <= 3; ++i) sum += w[i + 3] = std::exp(-i * i / 2.0);
  for (int x = 5; x <= 10; ++x) {
    double light = 0, code = 0;
    for (int i = -3; i <= 3; ++i) {
      const int at = std::clamp(x + i, 0, 15);
      light += w[i + 3] / sum * srgb_to_linear(at < 8 ? 0 : 1);
      code += w[i + 3] / sum * (at < 8 ? 0 : 1);
    }
    CAPTURE(x);
    CHECK(std::abs(int(lin.samples<std::uint8_t>()[16 + x]) -
                   int(std::lround(255 * linear_to_srgb(light)))) <= 1);
    CHECK(std::abs(int(gamma.samples<std::uint8_t>()[16 + x]) - int(std::lround(255 * code))) <= 1);
  }
  CHECK(lin.samples<std::uint8_t>()[16 + 7] > gamma.samples<std::uint8_t>()[16 + 7] + 40);

  // Float inputs are linear already: --linear leaves their result as it is.
  write_image(box / "step.exr", to_pixels(to_image(step), PixelType::f32), SampleType::f32);
  REQUIRE(box.halo("run " + box / "step.exr -f box:r=1 --linear -o " + box / "a.exr").code == 0);
  REQUIRE(box.halo("run " + box / "step.exr -f box:r=1 -o " + box / "b.exr").code == 0);
  CHECK(read_image({box / "a.exr", {}}).pixels.bytes ==
        read_image({box / "b.exr", {}}).pixels.bytes);
}

TEST_CASE("a render to a viewable PNG in one command: display, checked against OpenColorIO") {
  Sandbox box;
  // A grey ramp from black to 16x scene white, EXR float, RGB.
  PixelBuffer ramp(64, 4, 3, PixelType::f32);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 64; ++x)
      for (int c = 0; c < 3; ++c)
        ramp.samples<float>()[(std::size_t(y) * 64 + x) * 3 + c] = 16.0f * float(x) / 63.0f;
  write_image(box / "render.exr", ramp, SampleType::f32);
  const Result r = box.halo("run " + box / "render.exr -f display:view=Standard -o " +
                            box / "view.png --type u8 --verify");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(has(r.out, "verify display:view=Standard"));
  const PixelBuffer out = read_image({box / "view.png", {}}).pixels;
  REQUIRE(out.type == PixelType::u8);
  for (int x = 0; x < 64; ++x) {  // Standard: the sRGB curve, clipped at white
    const double v = std::min(1.0, linear_to_srgb(16.0 * x / 63.0));
    CHECK(std::abs(out.samples<std::uint8_t>()[std::size_t(x) * 3] - v * 255) <= 0.5 + 1e-9);
  }
  // The default view (ACES) keeps highlights apart that Standard clips.
  REQUIRE(box.halo("run " + box / "render.exr -f display -o " + box / "aces.png --type u8").code ==
          0);
  const PixelBuffer aces = read_image({box / "aces.png", {}}).pixels;
  CHECK(aces.samples<std::uint8_t>()[40 * 3] < aces.samples<std::uint8_t>()[63 * 3]);
  CHECK(out.samples<std::uint8_t>()[40 * 3] == out.samples<std::uint8_t>()[63 * 3]);

  const Result bad = box.halo("run " + box / "render.exr -f display:view=Nope -o " + box / "x.png");
  CHECK(bad.code == 64);  // usage
  CHECK(has(bad.err, "no view 'Nope' for display 'sRGB' in halo's built-in config (have "));
  CHECK_FALSE(fs::exists(box / "x.png"));
}

// A folder of photos to JPEG thumbnails stopped at the first RGBA PNG ("JPEG cannot store
// alpha", exit 64); vips, vipsthumbnail and sharp put the colour over black.
TEST_CASE("alpha into a format without it: over --background (black), one warning a batch") {
  Sandbox box;
  fs::create_directories(box / "shots");
  write_image(box / "shots/a.png", transparent_edge(24, 6), SampleType::u8);
  PixelBuffer opaque = transparent_edge(24, 6);
  for (std::size_t i = 3; i < opaque.sample_count(); i += 4)
    opaque.samples<std::uint8_t>()[i] = 255;
  write_image(box / "shots/b.png", opaque, SampleType::u8);
  write_image(box / "shots/c.png", opaque, SampleType::u8);
  const Result r = box.halo("run " + box / "shots" + " -f thumbnail:w=12:h=12 -o " +
                            box / "thumbs/{stem}.jpg --mkdir");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(count(r.err, "cannot store alpha") == 1);  // once a batch
  for (const char* name : {"a.jpg", "b.jpg", "c.jpg"})
    CHECK(fs::exists(box / (std::string("thumbs/") + name)));
  // Transparent green over black is black; opaque red stays red (PNG keeps no alpha here).
  REQUIRE(box.halo("run " + box / "shots/a.png -o " + box / "a.pfm --type float").code == 0);
  const PixelBuffer black = read_image({box / "a.pfm", {}}).pixels;
  CHECK(black.channels == 3);
  CHECK(black.samples<float>()[0] == 1.0f);           // (0, 0): opaque red
  CHECK(black.samples<float>()[23 * 3 + 1] == 0.0f);  // (23, 0): transparent green, gone
  REQUIRE(box.halo("run " + box / "shots/a.png -o " + box / "w.pfm --background 1,1,0.5").code ==
          0);
  const PixelBuffer white = read_image({box / "w.pfm", {}}).pixels;
  CHECK(white.samples<float>()[23 * 3 + 0] == 1.0f);
  CHECK(white.samples<float>()[23 * 3 + 2] == 0.5f);
  // An opaque image keeps its colour exactly; a bad --background is refused before any file.
  REQUIRE(box.halo("run " + box / "shots/b.png -o " + box / "b.pfm --type float").code == 0);
  CHECK(read_image({box / "b.pfm", {}}).pixels.samples<float>()[0] == 1.0f);
  const Result bad = box.halo("run " + box / "shots/a.png -o " + box / "x.jpg --background grey");
  CHECK(bad.code == 64);
  CHECK(has(bad.err, "'grey' is not a number"));
  CHECK_FALSE(fs::exists(box / "x.jpg"));
}
