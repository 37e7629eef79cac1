// Denoising renders end to end: guides found in a Blender multilayer EXR, PSNR against the
// converged render, --write-flags, and bad guides rejected before any GPU work.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/sandbox.hpp"
#include "io/guides.hpp"
#include "io/image_io.hpp"
#include "support.hpp"

using namespace halo;
using namespace halo::test;

namespace {

const std::string kNoisy = HALO_RENDER_DATA "/scene_4spp.exr";
const std::string kConverged = HALO_RENDER_DATA "/scene_1024spp.exr";

// A render's colour and alpha (Blender's Combined layer).
Image rgba(const std::string& path) {
  return to_image(read_image(parse_input_ref(path + "[ViewLayer.Combined.R,ViewLayer.Combined.G,"
                                                    "ViewLayer.Combined.B,ViewLayer.Combined.A]"))
                      .pixels);
}

// The most colour over alpha where alpha is over `least`, and the pixels with colour where
// alpha is 0.
float over_alpha(const Image& im, int& under_zero, float least = 1e-3f) {
  float most = 0;
  under_zero = 0;
  for (int y = 0; y < im.height(); ++y)
    for (int x = 0; x < im.width(); ++x) {
      const float a = im.at(x, y, 3);
      const float c = std::max({im.at(x, y, 0), im.at(x, y, 1), im.at(x, y, 2)});
      if (a == 0.0f) under_zero += c != 0.0f;
      if (a > least) most = std::max(most, c / a);
    }
  return most;
}

// PSNR of the RGB channels after the tonemap clip(x, 0, 1)^(1/2.2), as the README's table.
double tonemapped_psnr(const std::string& a, const std::string& b) {
  const Image x = to_image(read_image(parse_input_ref(a)).pixels);
  const Image y = to_image(read_image(parse_input_ref(b)).pixels);
  const auto tone = [](float v) { return std::pow(std::clamp(v, 0.0f, 1.0f), 1 / 2.2f); };
  double sum = 0;
  for (int c = 0; c < 3; ++c)
    for (int j = 0; j < x.height(); ++j)
      for (int i = 0; i < x.width(); ++i) {
        const double d = tone(x.at(i, j, c)) - tone(y.at(i, j, c));
        sum += d * d;
      }
  return 10 * std::log10(1 / (sum / (3.0 * x.width() * x.height())));
}

}  // namespace

TEST_CASE("guide channels by name: Blender passes and common names, Normal.Z is not depth") {
  const GuideChannels blender = find_guide_channels(
      {"ViewLayer.Combined.R", "ViewLayer.Combined.G", "ViewLayer.Combined.B", "ViewLayer.Depth.Z",
       "ViewLayer.DiffCol.R", "ViewLayer.DiffCol.G", "ViewLayer.DiffCol.B", "ViewLayer.Normal.X",
       "ViewLayer.Normal.Y", "ViewLayer.Normal.Z"});
  CHECK(blender.normal ==
        std::vector<std::string>{"ViewLayer.Normal.X", "ViewLayer.Normal.Y", "ViewLayer.Normal.Z"});
  CHECK(blender.depth == std::vector<std::string>{"ViewLayer.Depth.Z"});
  CHECK(blender.albedo == std::vector<std::string>{"ViewLayer.DiffCol.R", "ViewLayer.DiffCol.G",
                                                   "ViewLayer.DiffCol.B"});
  const GuideChannels common = find_guide_channels(
      {"R", "G", "B", "N.x", "N.y", "N.z", "Z", "albedo.R", "albedo.G", "albedo.B"});
  CHECK(common.normal == std::vector<std::string>{"N.x", "N.y", "N.z"});
  CHECK(common.depth == std::vector<std::string>{"Z"});
  CHECK(common.albedo.size() == 3);
  const GuideChannels none = find_guide_channels({"R", "G", "B", "Normal.X", "Normal.Y"});
  CHECK(none.normal.empty());  // an incomplete triple is not a guide
  CHECK(none.depth.empty());
}

TEST_CASE("denoising the shared Blender scene: PSNR floors, verify, flags") {
  Sandbox box;
  const double noisy = tonemapped_psnr(kNoisy, kConverged);
  CHECK(noisy == doctest::Approx(24.47).epsilon(0.01));
  // Measured 33.52 dB (bilateral) and 33.90 dB (atrous: 32.88 before iters 2, sigma_c 8,
  // sigma_n 48) with albedo_filter (32.40 bilateral without); the floors leave 0.4 dB.
  for (const auto& entry : {std::pair{"bilateral", 33.1}, std::pair{"atrous", 33.5}}) {
    const char* spec = entry.first;  // not a binding: INFO captures it
    const double floor = entry.second;
    const test::Result r = box.halo(std::string("-v run ") + kNoisy + " -f " + spec + " -o " +
                                    box / "out.exr --verify --write-flags " + box / "flags.png");
    INFO(spec, ": ", r.err, r.out);
    if (std::string(spec) == "atrous") {
      CHECK(r.code == 64);  // atrous computes no flags
      CHECK(has(r.err, "--write-flags: no stage computed discontinuity flags"));
      continue;
    }
    REQUIRE(r.code == 0);
    CHECK(has(r.err, "normal from " + kNoisy + "[ViewLayer.Normal.X"));
    CHECK(has(r.err, "albedo demodulation, remodulated with a smoothed albedo"));
    CHECK(has(r.out, "verify bilateral"));
    CHECK(tonemapped_psnr(box / "out.exr", kConverged) > floor);
    const LoadedImage flags = read_image(parse_input_ref(box / "flags.png"));
    CHECK(flags.pixels.channels == 1);
    std::size_t flagged = 0;
    for (std::size_t i = 0; i < flags.pixels.sample_count(); ++i)
      flagged += flags.pixels.samples<std::uint8_t>()[i] != 0;
    CHECK(flagged > 1000);  // object outlines
    CHECK(flagged < flags.pixels.sample_count() / 10);
  }
  const test::Result a =
      box.halo(std::string("run ") + kNoisy + " -f atrous -o " + box / "a.exr --verify");
  REQUIRE(a.code == 0);
  CHECK(tonemapped_psnr(box / "a.exr", kConverged) > 33.5);
  // Multiplied back by the raw albedo: the earlier results, below the smoothed ones.
  const test::Result raw = box.halo(std::string("run ") + kNoisy +
                                    " -f bilateral:albedo_filter=0 -o " + box / "raw.exr --verify");
  REQUIRE(raw.code == 0);
  const double raw_psnr = tonemapped_psnr(box / "raw.exr", kConverged);
  CHECK(raw_psnr == doctest::Approx(32.40).epsilon(0.003));
  CHECK(raw_psnr < tonemapped_psnr(box / "a.exr", kConverged));
}

TEST_CASE("a render on a transparent film: the guided filters keep its colour within its alpha") {
  // Blender's cutout view (make_scene.py cutout, 160x96, 16 spp): objects on a transparent
  // film, colour premultiplied and up to 27.6 (the lamp), alpha soft at every edge, and the
  // DiffCol guide scaled by coverage as the colour is. Filtering colour and alpha with the same
  // weights keeps colour / alpha within what the input holds; demodulating by the stored
  // albedo made the lamp's rim 1.4x brighter than anything in the input (54.8 for 29.9).
  Sandbox box;
  const std::string cutout = HALO_RENDER_DATA "/cutout_16spp.exr";
  int under_zero = 0;
  const Image in = rgba(cutout);
  const float bound = over_alpha(in, under_zero);
  REQUIRE(bound > 20);  // the lamp
  for (const char* spec : {"bilateral", "bilateral:walk=2d", "atrous"}) {
    const test::Result r =
        box.halo(std::string("run ") + cutout + " -f " + spec + " -o " + box / "o.exr --verify");
    INFO(spec, ": ", r.err);
    REQUIRE(r.code == 0);
    const Image out = rgba(box / "o.exr");
    CHECK(over_alpha(out, under_zero) <= bound * 1.001f);
    CHECK(under_zero == 0);
    bool alpha_filtered = false;
    for (int y = 0; y < in.height() && !alpha_filtered; ++y)
      for (int x = 0; x < in.width(); ++x) alpha_filtered |= out.at(x, y, 3) != in.at(x, y, 3);
    CHECK(alpha_filtered);
  }
}

TEST_CASE(
    "Blender's motion vectors as compare follows them: the previous frame at (x + X, y - Y)") {
  // Two frames of make_sequence.py's dolly (128x72, 32 spp: the camera dollies and pans, a
  // metal torus spins, a cube slides). Followed back through ViewLayer.Vector, the previous
  // frame's colour is much nearer the current one than without (the same frames with their
  // layers dropped: taken as still); a wrong sign or row convention would be farther.
  Sandbox box;
  const std::string shot = HALO_RENDER_DATA "/dolly_32spp.####.exr";
  REQUIRE(
      box.halo("run '" + shot + "' -o '" + box / "still/{stem}.exr' --drop-layers --mkdir").code ==
      0);
  const Result r = box.halo("compare '" + shot + "' '" + box / "still/dolly_32spp.####.exr" +
                            "' --ch ViewLayer.Combined.R,ViewLayer.Combined.G,ViewLayer.Combined.B"
                            " --fail-temporal 1 --json " +
                            box / "t.json");
  INFO(r.out, r.err);
  REQUIRE(r.code == 0);
  std::ifstream in(box / "t.json");
  const auto json = nlohmann::json::parse(in)["temporal"];
  CHECK(json["motion_a"] == true);
  CHECK(json["motion_b"] == false);
  const double followed = json["flicker_a"], still = json["flicker_b"];
  CHECK(followed < 0.6 * still);  // measured 0.0246 against 0.0539
  CHECK(json["steps"][0]["pixels_seen_a"].get<int>() > 128 * 72 * 9 / 10);
  // Another renderer's names for the same vectors: --motion names them.
  for (const char* f : {"1", "2"})
    REQUIRE(std::system(("oiiotool " HALO_RENDER_DATA "/dolly_32spp.000" + std::string(f) +
                         ".exr --chnames ,,,,,,,,,,,mv.u,mv.v -o " + box / "mv.000" + f +
                         ".exr >/dev/null 2>&1")
                            .c_str()) == 0);
  const std::string renamed = "compare '" + box / "mv.####.exr' '" + box / "mv.####.exr" +
                              "' --fail-temporal 1 --json " + box / "m.json";
  REQUIRE(box.halo(renamed + " --motion mv.u,mv.v").code == 0);
  std::ifstream named(box / "m.json");
  CHECK(nlohmann::json::parse(named)["temporal"]["flicker_a"].get<double>() ==
        doctest::Approx(followed));
  const Result missing = box.halo(renamed + " --motion mv.x,mv.y");
  CHECK(missing.code == 64);
  CHECK(has(missing.err, "no channel 'mv.x'"));
}

TEST_CASE("Blender's motion vectors towards the next frame: the next frame at (x - Z, y + W)") {
  // The same rendered pair read directly: frame 2 followed from frame 1 through Vector.Z/W
  // (what denoise:temporal reads for later frames) is much nearer frame 1 than frame 2 where
  // it is; the other three sign choices are farther.
  const std::string first = HALO_RENDER_DATA "/dolly_32spp.0001.exr";
  const std::string second = HALO_RENDER_DATA "/dolly_32spp.0002.exr";
  const auto layer = [](const std::string& path, const std::string& channels) {
    return to_image(read_image(parse_input_ref(path + "[" + channels + "]")).pixels);
  };
  const std::string rgb = "ViewLayer.Combined.R,ViewLayer.Combined.G,ViewLayer.Combined.B";
  const Image a = layer(first, rgb), b = layer(second, rgb);
  const Image v = layer(first, "ViewLayer.Vector.Z,ViewLayer.Vector.W");
  const auto mean_error = [&](float sx, float sy) {
    double sum = 0;
    int n = 0;
    for (int y = 0; y < a.height(); ++y)
      for (int x = 0; x < a.width(); ++x) {
        const int px = int(std::lround(x + sx * v.at(x, y, 0)));
        const int py = int(std::lround(y + sy * v.at(x, y, 1)));
        if (px < 0 || py < 0 || px >= a.width() || py >= a.height()) continue;
        for (int c = 0; c < 3; ++c) sum += std::fabs(b.at(px, py, c) - a.at(x, y, c));
        ++n;
      }
    return sum / std::max(1, n);
  };
  const double blender = mean_error(-1, 1), still = mean_error(0, 0);
  CHECK(blender < 0.6 * still);
  for (const auto& [sx, sy] : {std::pair{1.0f, 1.0f}, {1.0f, -1.0f}, {-1.0f, -1.0f}})
    CHECK(mean_error(sx, sy) > 1.5 * blender);
}

TEST_CASE("guides from the image's own file: a strip of many rows equals strips of a few") {
  // The image's and the guides' channels are decoded together and picked apart a few MiB of
  // rows at a time: 517 rows of this 1023-wide render are six such blocks, the last partial.
  Sandbox box;
  REQUIRE(box.halo("--device ref run " + kNoisy + " -f resize:w=1023:h=517 -o " + box / "big.exr")
              .code == 0);
  const std::string run = "--device ref run " + box / "big.exr" + " -f bilateral:r=1 --strip-rows ";
  const Result one = box.halo(run + "517 -v -o " + box / "one.exr");
  REQUIRE(one.code == 0);
  CHECK(has(one.err, "normal from " + box / "big.exr"));
  CHECK(has(one.err, "over 1 strip"));
  REQUIRE(box.halo(run + "5 -o " + box / "many.exr").code == 0);
  const Result same = box.halo("compare " + box / "one.exr " +
                               box /
                                   "many.exr --ch ViewLayer.Combined.R,"
                                   "ViewLayer.Combined.G,ViewLayer.Combined.B --fail 0");
  INFO(same.out, same.err);
  CHECK(same.code == 0);
}

TEST_CASE("bad guides: missing 66, unknown channel 64, wrong size 65; photos run self-guided") {
  Sandbox box;
  Result r = box.halo(std::string("run ") + kNoisy + " -f bilateral:normal=" + box / "no.exr" +
                      " -o " + box / "o.exr");
  CHECK(r.code == 66);
  CHECK(has(r.err, "normal guide: "));
  r = box.halo(std::string("run ") + kNoisy + " -f bilateral:depth=" + kNoisy + "[Nope] -o " +
               box / "o.exr");
  CHECK(r.code == 64);
  CHECK(has(r.err, "no channel 'Nope'"));
  write_image(box / "small.pfm", PixelBuffer(32, 18, 1, PixelType::f32), SampleType::f32);
  r = box.halo(std::string("run ") + kNoisy + " -f bilateral:depth=" + box / "small.pfm" + " -o " +
               box / "o.exr");
  CHECK(r.code == 65);
  CHECK(has(r.err, "depth guide is 32x18, the image is 640x360"));
  CHECK_FALSE(std::filesystem::exists(box / "o.exr"));
  write_image(box / "photo.png", photo(40, 30, 3), SampleType::u8);
  r = box.halo("-v run " + box / "photo.png" + " -f bilateral -f atrous -o " +
               box / "p.png --verify");
  CHECK(r.code == 0);
  CHECK(has(r.err, "self-guided"));
}

TEST_CASE("quiet by default: a cold kernel cache prints nothing but halo's own lines" *
          doctest::test_suite("sweeps")) {
  // The OpenCL compiler's "N warnings generated." reached the terminal on a cold cache; halo
  // now builds warning-free and keeps build logs for -vv. Every filter, guided ones with the
  // render's normal and depth layers, on 1, 3 and 4 channels.
  Sandbox box;
  write_image(box / "rgba.png", photo(33, 9, 4), SampleType::u8);
  write_image(box / "grey.png", photo(33, 9, 1), SampleType::u8);
  const std::string cold = "HALO_NO_CACHE=1 POCL_KERNEL_CACHE=0";
  // Each run compiles every program it uses (1-2 s each on PoCL): the loop takes one filter of
  // each kernel family, the long label every filter on every input.
  for (const std::string& spec :
       test::sweep<std::string>({"conv:k=1,2,1,2,4,2,1,2,1", "emboss", "sharpen", "edge:mode=sobel",
                                 "box:r=2", "gaussian:r=3", "sep:h=1,2,1:v=1,0,-1", "bilateral",
                                 "atrous", "histogram:mode=channel"},
                                {"gaussian:r=3", "atrous", "histogram:mode=channel"})) {
    for (const std::string& input : test::sweep<std::string>(
             {kNoisy, box / "rgba.png", box / "grey.png"}, {box / "rgba.png"})) {
      CAPTURE(spec);
      CAPTURE(input);
      const Result r = box.halo("run " + input + " -f " + spec + " -o " + box / "out.exr", cold);
      CHECK(r.code == 0);
      CHECK_MESSAGE(r.err.empty(), r.err);
    }
  }
}

TEST_CASE("a render to a viewable 8-bit PNG in one command: exposure, tonemap, sRGB; NaN fixed") {
  Sandbox box;
  // The converged render with a NaN and an infinity planted, as a broken sample leaves them.
  PixelBuffer render =
      read_image(
          parse_input_ref(kConverged +
                          "[ViewLayer.Combined.R,ViewLayer.Combined.G,ViewLayer.Combined.B]"))
          .pixels;
  Image planted = to_image(render);
  planted.at(100, 50, 0) = std::numeric_limits<float>::quiet_NaN();
  planted.at(7, 300, 2) = std::numeric_limits<float>::infinity();
  write_image(box / "broken.exr", to_pixels(planted, PixelType::f32), SampleType::f32);
  const std::string chain =
      " -f fixnan -f exposure:stops=0.5 -f tonemap -f srgb:float=1 --type u8 -o ";
  const Result r = box.halo("run " + box / "broken.exr" + chain + box / "view.png --verify");
  INFO(r.err);
  CHECK(r.code == 0);
  const LoadedImage view = read_image({box / "view.png", {}});
  CHECK(view.stored == SampleType::u8);
  CHECK(view.pixels.width == planted.width());
  // The planted samples took their neighbours' values, so the output has no hole or spike.
  const Image shown = to_image(view.pixels);
  CHECK(std::fabs(shown.at(100, 50, 0) - shown.at(101, 50, 0)) < 0.1f);
  CHECK(std::fabs(shown.at(7, 300, 2) - shown.at(8, 300, 2)) < 0.1f);
  // Whichever device ran it, the same bytes as the reference.
  CHECK(box.halo("--device ref run " + box / "broken.exr" + chain + box / "ref.png").code == 0);
  CHECK(box.halo("compare " + box / "view.png " + box / "ref.png --fail 0").code == 0);
}

TEST_CASE("temporal denoising of a render on a transparent film keeps colour within alpha") {
  // Three frames of the cutout view (make_scene.py cutout, seeds 17, 34, 51: a still camera),
  // HDR colour up to 33 premultiplied by soft alpha: averaged with the colour's weights, alpha
  // keeps colour / alpha within what the frames denoised alone hold where there is coverage
  // (over 0.05: the network itself leaves faint colour where alpha is 0, as OIDN does, which
  // over a trace of alpha is no ratio to hold), and the frames steadier.
  Sandbox box;
  const std::string shot = "'" HALO_RENDER_DATA "/cutout_16spp.####.exr'";
  test::Result r = box.halo("run " + shot + " -f denoise:temporal=1:motion=zero -o '" +
                            box / "t/{stem}.exr' --mkdir --verify --strict");
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(box.halo("run " + shot + " -q -f denoise -o '" + box / "p/{stem}.exr' --mkdir").code ==
          0);
  int under_zero = 0;
  float bound = 0;
  std::vector<Image> alone, blended;
  for (const char* f : {"1", "2", "3"}) {
    const std::string name = std::string("cutout_16spp.000") + f + ".exr";
    alone.push_back(rgba(box / ("p/" + name)));
    blended.push_back(rgba(box / ("t/" + name)));
    bound = std::max(bound, over_alpha(alone.back(), under_zero, 0.05f));
  }
  REQUIRE(bound > 20);  // the lamp
  const auto step = [](const Image& a, const Image& b) {
    double sum = 0;
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) sum += std::fabs(a.at(x, y, c) - b.at(x, y, c));
    return sum / (3.0 * a.width() * a.height());
  };
  for (std::size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    CHECK(over_alpha(blended[k], under_zero, 0.05f) <= bound * 1.001f);
    for (const float a : std::vector<float>(blended[k].data().begin() + 3 * blended[k].plane_size(),
                                            blended[k].data().end()))
      CHECK((a >= 0.0f && a <= 1.0f));
    // Measured 2026-11-29: 0.0035 against 0.0134 and 0.0113 frame to frame.
    if (k > 0) CHECK(step(blended[k], blended[k - 1]) < 0.5 * step(alone[k], alone[k - 1]));
  }
}
