// The denoise filter through the real binary: OIDN's network chosen from a render's layers and
// verified, its PSNR on the shared scene, LDR photos, guides from files, tiles and strips
// against the whole image, odd sizes, and missing or altered weights.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/sandbox.hpp"
#include "io/image_io.hpp"

using namespace halo;
using namespace halo::test;

namespace {

const std::string kNoisy = HALO_RENDER_DATA "/scene_4spp.exr";
const std::string kConverged = HALO_RENDER_DATA "/scene_1024spp.exr";
const std::string kClose = HALO_RENDER_DATA "/close_4spp.exr";

const std::string kRGB = "[ViewLayer.Combined.R,ViewLayer.Combined.G,ViewLayer.Combined.B]";
const std::string kAlbedo = "[ViewLayer.DiffCol.R,ViewLayer.DiffCol.G,ViewLayer.DiffCol.B]";
const std::string kNormal = "[ViewLayer.Normal.X,ViewLayer.Normal.Y,ViewLayer.Normal.Z]";

PixelBuffer pixels_of(const std::string& ref) {
  return read_image(parse_input_ref(ref)).pixels;
}

// PSNR of RGB after the tonemap clip(x, 0, 1)^(1/2.2), as the README's tables.
double tonemapped_psnr(const std::string& a, const std::string& b) {
  const Image x = to_image(pixels_of(a)), y = to_image(pixels_of(b));
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

// The rows and columns [x, x + w) x [y, y + h) of a layer of `path`, as a float PFM or EXR.
void write_crop(const std::string& from, const std::string& to, int x, int y, int w, int h) {
  const PixelBuffer all = pixels_of(from);
  PixelBuffer part(w, h, all.channels, PixelType::f32);
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i)
      for (int c = 0; c < all.channels; ++c)
        part.samples<float>()[(std::size_t(j) * w + i) * all.channels + c] =
            all.samples<float>()[(std::size_t(y + j) * all.width + x + i) * all.channels + c];
  write_image(to, part, SampleType::f32);
}

}  // namespace

TEST_CASE("denoise the shared Blender scene: OIDN's network from its layers") {
  // (--verify on crops of a render: the next case; on this whole scene the reference alone
  // takes 10 s.)
  Sandbox box;
  const Result r = box.halo("-v run " + kNoisy + " -f denoise -o " + box / "out.exr");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(has(r.err, "denoise: float input: OIDN network rt_hdr_alb_nrm"));
  CHECK(has(r.err, "albedo from " + kNoisy + kAlbedo));
  // 36.88 dB, as an independent implementation of OIDN with the same weights gives
  // (scripts/render-psnr.py --oidn-numpy); atrous reaches 34.5.
  CHECK(tonemapped_psnr(box / "out.exr", kConverged) == doctest::Approx(36.88).epsilon(0.0005));
  // Without guides: OIDN's colour-only network, 36.37 dB, below the guided one.
  const Result c =
      box.halo("-v run " + kNoisy + " -f denoise:albedo=off:normal=off -o " + box / "colour.exr");
  REQUIRE(c.code == 0);
  CHECK(has(c.err, "float input: OIDN network rt_hdr\n"));
  CHECK(tonemapped_psnr(box / "colour.exr", kConverged) == doctest::Approx(36.37).epsilon(0.0005));
}

TEST_CASE("denoise: guides from files, aux modes, tiles, strips and odd sizes agree") {
  Sandbox box;
  // A 97 x 61 crop of a render, its guides as files of their own.
  write_crop(kClose + kRGB, box / "c.exr", 150, 80, 97, 61);
  write_crop(kClose + kAlbedo, box / "a.exr", 150, 80, 97, 61);
  write_crop(kClose + kNormal, box / "n.pfm", 150, 80, 97, 61);
  const std::string guides = ":albedo=" + box / "a.exr" + ":normal=" + box / "n.pfm";
  for (const std::string aux : {"noisy", "clean", "prefilter"}) {
    const Result r = box.halo("run " + box / "c.exr" + " -f denoise:aux=" + aux + guides + " -o " +
                              box / ("aux-" + aux + ".exr") + " --verify");
    INFO(aux, ": ", r.err);
    CHECK(r.code == 0);
  }
  // Tiles of 32 and strips of 20 rows: the same bytes as the whole image, on one device (under
  // auto, a slow start measured by one run may send the next to the reference, whose network
  // arithmetic is not the device's bit for bit).
  const std::string run = "--device 0 run " + box / "c.exr";
  const Result whole = box.halo(run + " -f denoise" + guides + " -o " + box / "w.exr");
  const Result tiles = box.halo(run + " -f denoise:tile=32" + guides + " -o " + box / "t.exr");
  const Result strips =
      box.halo(run + " -f denoise" + guides + " --strip-rows 20 -o " + box / "s.exr");
  INFO(whole.err, tiles.err, strips.err);
  REQUIRE(whole.code == 0);
  REQUIRE(tiles.code == 0);
  REQUIRE(strips.code == 0);
  CHECK(pixels_of(box / "t.exr").bytes == pixels_of(box / "w.exr").bytes);
  CHECK(pixels_of(box / "s.exr").bytes == pixels_of(box / "w.exr").bytes);
  // Odd sizes, the reference against the device.
  for (const auto& size : {std::pair{1, 1}, std::pair{7, 5}, std::pair{33, 17}}) {
    const int w = size.first, h = size.second;  // not a binding: INFO captures them
    write_crop(kClose + kRGB, box / "odd.exr", 200, 100, w, h);
    const Result r =
        box.halo("run " + box / "odd.exr -f denoise -o " + box / "odd-out.exr --verify");
    INFO(w, "x", h, ": ", r.err);
    CHECK(r.code == 0);
  }
}

TEST_CASE("denoise: 8-bit photos take OIDN's LDR networks and stay in range") {
  Sandbox box;
  write_image(box / "photo.png", photo(67, 45, 3), SampleType::u8);
  const Result r =
      box.halo("-v run " + box / "photo.png -f denoise -o " + box / "clean.png --verify");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(has(r.err, "8/16-bit input: OIDN network rt_ldr"));
  CHECK(pixels_of(box / "clean.png").channels == 3);
  // RGBA: alpha passes, premultiplied around the network as around every filter.
  write_image(box / "rgba.png", photo(31, 20, 4), SampleType::u8);
  CHECK(box.halo("run " + box / "rgba.png -f denoise -o " + box / "rgba-out.png --verify").code ==
        0);
}

TEST_CASE("denoise: missing, altered and malformed weights are one-line errors") {
  Sandbox box;
  // The binary away from its weights: nothing at ../share/halo/weights.
  fs::create_directories(box / "bin");
  fs::copy_file(HALO_BINARY, box / "bin/halo");
  fs::copy_file(fs::path(HALO_BINARY).parent_path() / "libhalo_oiio.so",
                box / "bin/libhalo_oiio.so");
  const std::string moved = box / "bin/halo";
  const auto run = [&](const std::string& args, const std::string& env = "") {
    Result r;
    const std::string out = box / "o.txt", err = box / "e.txt";
    const int status =
        std::system((env + " " + moved + " " + args + " >" + out + " 2>" + err).c_str());
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = Sandbox::read(err);
    return r;
  };
  Result r = run("run " + kClose + " -f denoise -o " + box / "x.exr");
  CHECK(r.code == 66);
  CHECK(has(r.err, "OIDN's weights rt_hdr_alb_nrm.tza are not installed"));
  CHECK(has(r.err, "scripts/fetch-weights"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(box / "x.exr"));
  // A copy with one byte changed, found first through HALO_WEIGHTS_PATH: refused by its SHA-256.
  fs::create_directories(box / "w");
  const fs::path real =
      fs::path(HALO_BINARY).parent_path().parent_path() / "share/halo/weights/rt_hdr_alb_nrm.tza";
  fs::copy_file(real, box / "w/rt_hdr_alb_nrm.tza");
  {
    std::fstream f(box / "w/rt_hdr_alb_nrm.tza", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5000);
    f.put('\x7f');
  }
  r = run("run " + kClose + " -f denoise -o " + box / "x.exr", "HALO_WEIGHTS_PATH=" + box / "w");
  CHECK(r.code == 65);
  CHECK(has(r.err, "not OIDN's rt_hdr_alb_nrm.tza"));
  // A file given by path is read as it is: a truncated one is refused as a weights file.
  fs::resize_file(box / "w/rt_hdr_alb_nrm.tza", 1000);
  r = run("run " + kClose + " -f denoise:weights=" + box / "w/rt_hdr_alb_nrm.tza" + " -o " +
          box / "x.exr");
  CHECK(r.code == 65);
  CHECK(has(r.err, "not a valid OIDN weights file"));
  r = run("run " + kClose + " -f denoise:weights=rt_nonsense -o " + box / "x.exr",
          "HALO_WEIGHTS_PATH=" + box / "w");
  CHECK(r.code == 66);
}

namespace {

// The rendered pair (frames 1 and 2 of a dolly, 128x72, with Vector, Depth, Normal and DiffCol)
// copied into `box` as shot.0001.exr and shot.0002.exr.
void copy_pair(const Sandbox& box) {
  for (const char* f : {"1", "2"})
    std::filesystem::copy_file(HALO_RENDER_DATA "/dolly_32spp.000" + std::string(f) + ".exr",
                               box / ("shot.000" + std::string(f) + ".exr"));
}

// The render's layers but its vectors.
const std::string kLayers =
    "ViewLayer.Combined.R,ViewLayer.Combined.G,ViewLayer.Combined.B,ViewLayer.Combined.A,"
    "ViewLayer.Depth.Z,ViewLayer.DiffCol.R,ViewLayer.DiffCol.G,ViewLayer.DiffCol.B,"
    "ViewLayer.Normal.X,ViewLayer.Normal.Y,ViewLayer.Normal.Z";

float max_difference(const PixelBuffer& a, const PixelBuffer& b) {
  const Image x = to_image(a), y = to_image(b);
  float most = 0;
  for (int c = 0; c < x.channels(); ++c)
    for (int j = 0; j < x.height(); ++j)
      for (int i = 0; i < x.width(); ++i)
        most = std::max(most, std::fabs(x.at(i, j, c) - y.at(i, j, c)));
  return most;
}

}  // namespace

TEST_CASE("denoise:temporal on a rendered pair: verified, steadier, the same with -j2") {
  Sandbox box;
  copy_pair(box);
  const std::string shot = "'" + box / "shot.####.exr" + "'";
  Result r = box.halo("run " + shot + " -f denoise:temporal=1 -o '" + box / "t/{stem}.exr" +
                      "' --mkdir --verify --strict");
  INFO(r.out, r.err);
  REQUIRE(r.code == 0);
  // Frame 2, read whole as frame 1's neighbour, is not decoded again for its own run (one file
  // at a time: with -j, frames run at once decode themselves).
  r = box.halo("-vv run " + shot + " -j1 -f denoise:temporal=1 -o '" + box / "v/{stem}.exr" +
               "' --mkdir");
  REQUIRE(r.code == 0);
  CHECK(has(r.err, box / "shot.0002.exr" + ": read as a neighbour frame already"));
  CHECK_FALSE(has(r.err, box / "shot.0001.exr" + ": read as a neighbour frame already"));
  REQUIRE(box.halo("run " + shot + " -f denoise:temporal=1 -j2 -q -o '" + box / "j/{stem}.exr" +
                   "' --mkdir")
              .code == 0);
  REQUIRE(
      box.halo("run " + shot + " -f denoise -q -o '" + box / "p/{stem}.exr" + "' --mkdir").code ==
      0);
  for (const char* f : {"1", "2"}) {
    const std::string name = "shot.000" + std::string(f) + ".exr";
    CAPTURE(name);
    const PixelBuffer t = pixels_of(box / ("t/" + name) + kRGB);
    CHECK(max_difference(t, pixels_of(box / ("j/" + name) + kRGB)) == 0.0f);
    CHECK(max_difference(t, pixels_of(box / ("p/" + name) + kRGB)) > 1e-3f);
  }
  // Steadier in time: the flicker (frame to frame after following the vectors) falls below
  // the per-frame result's (measured 2026-11-29: 0.0183 and 0.0232).
  r = box.halo("compare '" + box / "p/shot.####.exr' '" + box / "t/shot.####.exr" +
               "' --ch ViewLayer.Combined.R,ViewLayer.Combined.G,ViewLayer.Combined.B "
               "--metrics temporal --json " +
               box / "f.json");
  REQUIRE(r.code <= 1);
  std::ifstream in(box / "f.json");
  const auto json = nlohmann::json::parse(in)["temporal"];
  CHECK(json["flicker_b"].get<double>() < 0.9 * json["flicker_a"].get<double>());
}

TEST_CASE("denoise:temporal refuses what it cannot follow, and says how to go on") {
  Sandbox box;
  copy_pair(box);
  // No motion vectors: refused (65) unless motion=zero says the camera is still.
  REQUIRE(box.halo("run '" + box / "shot.####.exr" + kRGB + "' -q --drop-layers -o '" +
                   box / "flat/{stem}.exr' --mkdir")
              .code == 0);
  Result r = box.halo("run '" + box / "flat/shot.0001.exr" + "' -f denoise:temporal=1 -o " +
                      box / "o.exr");
  CHECK(r.code == 65);
  CHECK(has(r.err, "needs motion vectors"));
  CHECK(has(r.err, "motion=zero"));
  CHECK_FALSE(std::filesystem::exists(box / "o.exr"));
  r = box.halo("run '" + box / "flat/shot.0001.exr" + "' -f denoise:temporal=1:motion=zero -o " +
               box / "o.exr");
  CHECK(r.code == 0);
  // Another renderer's vectors: the frame's own channels by name, or a file per frame; one
  // file for every frame is refused (every frame would get the same vectors).
  for (const char* f : {"1", "2"}) {
    const std::string n = std::string("000") + f + ".exr";
    REQUIRE(std::system(("oiiotool " + box / ("shot." + n) +
                         " --chnames ,,,,,,,,,,,mv.x,mv.y,mv.z,mv.w -o " + box / ("named." + n) +
                         " && oiiotool " + box / ("named." + n) + " --ch mv.x,mv.y,mv.z,mv.w -o " +
                         box / ("mv." + n) + " && oiiotool " + box / ("named." + n) + " --ch " +
                         kLayers + " -o " + box / ("novec." + n) + " >/dev/null 2>&1")
                            .c_str()) == 0);
  }
  REQUIRE(box.halo("run '" + box / "shot.####.exr" + "' -q -f denoise:temporal=1 -o '" +
                   box / "a/{stem}.exr' --mkdir")
              .code == 0);
  REQUIRE(box.halo("run '" + box / "named.####.exr" +
                   "' -q -f 'denoise:temporal=1:motion=[mv.x,mv.y,mv.z,mv.w]' -o '" +
                   box / "b/{stem}.exr' --mkdir")
              .code == 0);
  REQUIRE(box.halo("run '" + box / "novec.####.exr" + "' -q -f 'denoise:temporal=1:motion=" +
                   box / "mv.####.exr[mv.x,mv.y,mv.z,mv.w]' -o '" + box / "c/{stem}.exr' --mkdir")
              .code == 0);
  for (const char* f : {"1", "2"}) {
    const std::string n = std::string("000") + f + ".exr";
    const PixelBuffer a = pixels_of(box / ("a/shot." + n) + kRGB);
    CHECK(max_difference(a, pixels_of(box / ("b/named." + n) + kRGB)) == 0.0f);
    CHECK(max_difference(a, pixels_of(box / ("c/novec." + n) + kRGB)) == 0.0f);
  }
  r = box.halo("run " + box / "named.0001.exr" +
               " -f denoise:temporal=1:motion=" + box / "mv.0001.exr" + " -o " + box / "one.exr");
  CHECK(r.code == 64);
  CHECK(has(r.err, "every frame the same vectors"));
  // A name without a frame number is not a sequence.
  std::filesystem::copy_file(box / "shot.0001.exr", box / "still.exr");
  r = box.halo("run " + box / "still.exr" + " -f denoise:temporal=1 -o " + box / "s.exr");
  CHECK(r.code == 64);
  CHECK(has(r.err, "needs frames of a sequence"));
  // An unreadable neighbour fails the frames that need it, naming it; not a wrong neighbour.
  { std::ofstream(box / "shot.0003.exr") << "not an EXR"; }
  r = box.halo("run '" + box / "shot.####.exr" + "' --frames 1-2 -f denoise:temporal=1 -o '" +
               box / "n/{stem}.exr' --mkdir");
  CHECK(r.code == 2);
  CHECK(has(r.err, "neighbour frame " + box / "shot.0003.exr"));
  CHECK(std::filesystem::exists(box / "n/shot.0001.exr"));
  CHECK_FALSE(std::filesystem::exists(box / "n/shot.0002.exr"));
  // A neighbour of another size is refused, naming both sizes.
  std::filesystem::create_directories(box / "odd");
  std::filesystem::copy_file(box / "shot.0001.exr", box / "odd/shot.0001.exr");
  REQUIRE(std::system(("oiiotool " + box / "shot.0002.exr" + " --resize 64x36 -o " +
                       box / "odd/shot.0002.exr" + " >/dev/null 2>&1")
                          .c_str()) == 0);
  r = box.halo("run " + box / "odd/shot.0001.exr" + " -f denoise:temporal=1 -o " + box / "d.exr");
  CHECK(r.code == 65);
  CHECK(
      has(r.err, "neighbour frame " + box / "odd/shot.0002.exr" + " is 64x36, this frame 128x72"));
  // Its neighbours are read as stored: a stage before it (the user's, --linear's) is refused.
  r = box.halo("run " + box / "shot.0001.exr" + " -f exposure:stops=1 -f denoise:temporal=1 -o " +
               box / "e.exr");
  CHECK(r.code == 64);
  CHECK(has(r.err, "comes first; 'exposure:stops=1' is before it"));
  r = box.halo("run " + box / "shot.0001.exr" + " --linear -f denoise:temporal=1 -o " +
               box / "e.exr");
  CHECK(r.code == 64);
  CHECK(has(r.err, "comes first"));
  // Options that only temporal denoising reads need it.
  r = box.halo("run " + box / "shot.0001.exr" + " -f denoise:motion=zero -o " + box / "m.exr");
  CHECK(r.code == 64);
  CHECK(has(r.err, "needs temporal=N"));
  // Its window of frames counts against --max-memory.
  r = box.halo("run " + box / "shot.0001.exr" + " -f denoise:temporal=2 --max-memory 2M -o " +
               box / "w.exr");
  CHECK(r.code == 65);
  CHECK(has(r.err, "planes of this 128x72 image"));
}

TEST_CASE("denoise:temporal: a chunk of a sequence gives the frames the whole run gives") {
  // --frames 3-4 still reads frames 1, 2, 5 and 6 as neighbours, so a farm's chunks of a shot
  // equal one run over it, bit for bit.
  Sandbox box;
  const std::string shot = "'" HALO_RENDER_DATA "/static_4spp.####.exr'";
  REQUIRE(box.halo("run " + shot + " -q -f denoise:temporal=2 -o '" + box / "all/{stem}.exr" +
                   "' --mkdir")
              .code == 0);
  REQUIRE(box.halo("run " + shot + " --frames 3-4 -q -j1 -f denoise:temporal=2 -o '" +
                   box / "part/{stem}.exr" + "' --mkdir")
              .code == 0);
  CHECK_FALSE(std::filesystem::exists(box / "part/static_4spp.0002.exr"));
  for (const char* f : {"3", "4"}) {
    const std::string name = std::string("static_4spp.000") + f + ".exr";
    CAPTURE(name);
    CHECK(max_difference(pixels_of(box / ("all/" + name) + kRGB),
                         pixels_of(box / ("part/" + name) + kRGB)) == 0.0f);
  }
  // Frame 1 has no earlier frames: it is its two later neighbours' average with it, not
  // the per-frame result.
  REQUIRE(box.halo("run " + shot + " --frames 1 -q -f denoise -o '" + box / "one/{stem}.exr" +
                   "' --mkdir")
              .code == 0);
  CHECK(max_difference(pixels_of(box / "all/static_4spp.0001.exr" + kRGB),
                       pixels_of(box / "one/static_4spp.0001.exr" + kRGB)) > 1e-3f);
}
