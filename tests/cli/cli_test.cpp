// The halo binary end to end: outputs, messages and exit codes as a user or a script sees them.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <unistd.h>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "cl/device.hpp"
#include "cl/tuning.hpp"
#include "cli/sandbox.hpp"
#include "io/image_io.hpp"

using namespace halo;
namespace fs = std::filesystem;

using namespace halo::test;

TEST_CASE("help teaches the grammar and the exit codes") {
  Sandbox box;
  const Result help = box.halo("--help");
  CHECK(help.code == 0);
  CHECK(has(help.out, "Exit codes: 0 ok; 1 verify mismatch"));
  CHECK(has(help.out, "66 input missing"));
  const Result run_help = box.halo("run --help");
  CHECK(run_help.code == 0);
  CHECK(has(run_help.out, "--verify"));
  const Result none = box.halo("");
  CHECK(none.code == 64);
  const Result bogus = box.halo("run --frobnicate");
  CHECK(bogus.code == 64);
}

TEST_CASE("quick start: emboss a PNG with --verify") {
  Sandbox box;
  write_image(box / "in.png", photo(97, 61, 3), SampleType::u8);
  const Result r =
      box.halo("run " + box / "in.png" + " -f emboss -o " + box / "out.png" + " --verify");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(has(r.out, "verify emboss"));
  CHECK(has(r.out, "ok"));
  CHECK_FALSE(has(r.out, "MISMATCH"));
  const LoadedImage out = read_image({box / "out.png", {}});
  CHECK(out.pixels.channels == 1);  // emboss works on luminance
  CHECK(out.stored == SampleType::u8);
  // The device result equals the plain reference byte for byte.
  const Result ref =
      box.halo("--device ref run " + box / "in.png" + " -f emboss -o " + box / "ref.png");
  CHECK(ref.code == 0);
  CHECK(read_image({box / "ref.png", {}}).pixels.bytes == out.pixels.bytes);
}

TEST_CASE("pipelines, presets and formats from the README work as written") {
  Sandbox box;
  write_image(box / "photo.png", photo(64, 48, 4), SampleType::u8);
  write_image(box / "a.pfm", photo(33, 17, 3, PixelType::f32), SampleType::f32);
  write_image(box / "deep.png", photo(20, 10, 3, PixelType::u16), SampleType::u16);
  CHECK(box.halo("run " + box / "photo.png" + " -f sharpen:k=0.5 -f edge:mode=sobel:gray=1 -o " +
                 box / "edges.png --verify")
            .code == 0);
  CHECK(read_image({box / "edges.png", {}}).pixels.channels == 2);  // luminance + alpha
  CHECK(box.halo("run " + box / "a.pfm" + " -f conv:k=2,0,0,0,-1,0,0,0,-1:offset=0.5:gray=1 -o " +
                 box / "emboss.pfm --verify")
            .code == 0);
  CHECK(read_image({box / "emboss.pfm", {}}).pixels.channels == 1);
  CHECK(box.halo("run " + box / "photo.png" + " --preset sharpen-strong -f emboss -o " +
                 box / "p.exr --type float")
            .code == 0);
  CHECK(read_image({box / "p.exr", {}}).stored == SampleType::f32);
  CHECK(box.halo("run " + box / "deep.png" + " -f sharpen -o " + box / "deep-out.png").code == 0);
  CHECK(read_image({box / "deep-out.png", {}}).stored == SampleType::u16);
  const Result timings =
      box.halo("--device 0 run " + box / "photo.png" + " -f emboss -o " + box / "t.tif --timings");
  CHECK(has(timings.out, "conv_"));  // conv_tile on GPUs, conv_vec on CPUs
  CHECK(has(timings.out, "time emboss"));
  CHECK(has(timings.out, "device total"));
}

TEST_CASE("bad specs exit 64 naming the spec and the key, before reading input") {
  Sandbox box;
  const std::string in = box / "does-not-exist.png", out = " -o " + box / "o.png";
  Result r = box.halo("run " + in + " -f blur:r=3" + out);
  CHECK(r.code == 64);
  CHECK(has(r.err, "halo: error: filter 'blur:r=3': unknown filter 'blur'"));
  r = box.halo("run " + in + " -f sharpen:k=abc" + out);
  CHECK(r.code == 64);
  CHECK(has(r.err, "filter 'sharpen:k=abc': key 'k': 'abc' is not a number"));
  r = box.halo("run " + in + " -f conv:k=1,2,3,4" + out);
  CHECK(r.code == 64);
  CHECK(has(r.err, "2x2 kernel has no centre"));
  r = box.halo("run " + in + " -f emboss:radius=2" + out);
  CHECK(r.code == 64);
  CHECK(has(r.err, "key 'radius': unknown key"));
  r = box.halo("run " + in + " -f sharpen:k=1000" + out);
  CHECK(r.code == 64);
  CHECK(has(r.err, "out of range"));
  r = box.halo("run " + in + " -f emboss" + out + " --type u12");
  CHECK(r.code == 64);
}

TEST_CASE("input problems: missing 66, corrupt or truncated 65") {
  Sandbox box;
  Result r = box.halo("run " + box / "nope.png" + " -f emboss -o " + box / "o.png");
  CHECK(r.code == 66);
  CHECK(has(r.err, "nope.png: no such file"));
  std::ofstream(box / "junk.png") << "not a png";
  r = box.halo("run " + box / "junk.png" + " -f emboss -o " + box / "o.png");
  CHECK(r.code == 65);
  CHECK(has(r.err, "junk.png: not PNG data"));
  std::ofstream(box / "junk2.png", std::ios::binary)
      << std::string("\x89PNG\r\n\x1a\n", 8) << "junk";
  r = box.halo("run " + box / "junk2.png" + " -f emboss -o " + box / "o.png");
  CHECK(r.code == 65);
  CHECK(has(r.err, "junk2.png: cannot read"));
  write_image(box / "whole.png", photo(64, 64, 3), SampleType::u8);
  fs::copy_file(box / "whole.png", box / "cut.png");
  fs::resize_file(box / "cut.png", fs::file_size(box / "whole.png") / 2);
  r = box.halo("run " + box / "cut.png" + " -f emboss -o " + box / "o.png");
  CHECK(r.code == 65);
  CHECK(has(r.err, "cut.png"));
  std::ofstream(box / "cut.pfm") << "PF\n64 64\n-1.0\n" << std::string(100, 'x');
  r = box.halo("run " + box / "cut.pfm" + " -f emboss -o " + box / "o.png");
  CHECK(r.code == 65);
  CHECK(has(r.err, "truncated PFM"));
  CHECK_FALSE(fs::exists(box / "o.png"));
}

TEST_CASE("output problems: missing folder 73, input never overwritten") {
  Sandbox box;
  write_image(box / "in.png", photo(8, 8, 3), SampleType::u8);
  const auto before = Sandbox::read(box / "in.png");
  Result r = box.halo("run " + box / "in.png" + " -f emboss -o " + box / "missing/out.png");
  CHECK(r.code == 73);
  CHECK(has(r.err, "does not exist"));
  r = box.halo("run " + box / "in.png" + " -f emboss -o " + box / "in.png");
  CHECK(r.code == 73);
  CHECK(has(r.err, "refusing to overwrite the input"));
  CHECK(Sandbox::read(box / "in.png") == before);
  r = box.halo("run " + box / "in.png" + " -f emboss -o " + box / "in.png --overwrite-input");
  CHECK(r.code == 0);
  CHECK(Sandbox::read(box / "in.png") != before);
  r = box.halo("run " + box / "in.png" + " -f emboss -o " + box / "rgba.pfm --type float");
  CHECK(r.code == 0);
  // A format without alpha takes the colour over the background (black), as JPEG does.
  write_image(box / "rgba.png", photo(8, 8, 4), SampleType::u8);
  r = box.halo("run " + box / "rgba.png" + " -f sharpen -o " + box / "rgba.pfm");
  CHECK(r.code == 0);
  CHECK(has(r.err, "cannot store alpha"));
  CHECK(read_image({box / "rgba.pfm", {}}).pixels.channels == 3);
}

TEST_CASE("devices: selection, missing device 69, fallback to the reference") {
  Sandbox box;
  write_image(box / "in.png", photo(8, 8, 3), SampleType::u8);
  const std::string run = "run " + box / "in.png" + " -f sharpen -o " + box / "o.png";
  Result r = box.halo("--device no-such-device-xyz " + run);
  CHECK(r.code == 69);
  CHECK(has(r.err, "no OpenCL device matches --device 'no-such-device-xyz'"));
  CHECK(box.halo("--device ref " + run).code == 0);
  CHECK(box.halo("--device 0 " + run).code == 0);
  CHECK(box.halo(run, "HALO_DEVICE=ref").code == 0);
  // With no OpenCL driver registered, auto falls back (with a warning) unless --strict, when
  // it wants a device (--verify; for an image this small it would take the reference anyway).
  const std::string no_icd = "OCL_ICD_VENDORS=/nonexistent-halo OCL_ICD_FILENAMES=";
  CHECK(box.halo(run, no_icd).code == 0);
  r = box.halo(run + " --verify", no_icd);
  CHECK(r.code == 0);
  CHECK(has(r.err, "warning: no OpenCL device found"));
  r = box.halo("--strict " + run + " --verify", no_icd);
  CHECK(r.code == 69);
  CHECK(has(r.err, "error: no OpenCL device found"));
  r = box.halo("devices");
  CHECK(r.code == 0);
  CHECK(has(r.out, "0: "));
  CHECK(has(r.out, "compute"));
}

// A start-cost record claiming `seconds` for every device this machine lists, measured
// `days_ago`.
void record_start_costs(const Sandbox& box, double seconds, double days_ago = 0) {
  const double at =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() -
      days_ago * 86400;
  nlohmann::json costs = {
      {"list_seconds", 0}, {"list_seconds_at", at}, {"devices", nlohmann::json::object()}};
  for (const DeviceInfo& info : list_devices())
    costs["devices"][device_identity(info)] = {
        {"name", info.name}, {"start_seconds", seconds}, {"start_seconds_at", at}};
  fs::create_directories(box / "cache");
  std::ofstream(box / "cache/device-start.json") << costs.dump();
}

TEST_CASE("--device auto: the reference for small work, a device when its start pays off") {
  Sandbox box;
  write_image(box / "in.png", photo(64, 64, 3), SampleType::u8);
  const std::string env = "HALO_CACHE_DIR=" + box / "cache";
  const std::string run = "-v run " + box / "in.png" + " -f gaussian:r=8 -o " + box / "o.png";
  // Nothing on record: a 64x64 image is done before any device could start, and no OpenCL
  // platform is even listed.
  Result r = box.halo(run, env);
  CHECK(r.code == 0);
  CHECK(has(r.err, "--device auto: the reference: "));
  CHECK_FALSE(has(r.err, "launch shapes"));
  CHECK_FALSE(fs::exists(box / "cache/device-start.json"));
  // A device that was opened leaves what its start cost.
  REQUIRE(box.halo("--device 0 " + run, env).code == 0);
  std::ifstream recorded(box / "cache/device-start.json");
  const nlohmann::json costs = nlohmann::json::parse(recorded, nullptr, false);
  REQUIRE(costs.is_object());
  CHECK(costs["list_seconds"].get<double>() > 0);
  REQUIRE(costs["devices"].size() == 1);
  CHECK(costs["devices"].begin().value()["start_seconds"].get<double>() > 0);
  // Devices that start for free: the kernels' lower cost per sample wins.
  record_start_costs(box, 0);
  r = box.halo(run, env);
  CHECK(r.code == 0);
  CHECK(has(r.err, "expected first (reference "));
  CHECK(has(r.err, "in.png: device "));
  // Devices that take 100 s to start: the reference, without listing them.
  record_start_costs(box, 100);
  r = box.halo(run, env);
  CHECK(has(r.err, "less than starting any OpenCL device (100.000 s)"));
  CHECK_FALSE(has(r.err, "in.png: device "));
  // The same a fortnight old: left out (the defaults count until a device is measured again).
  record_start_costs(box, 100, 14);
  r = box.halo(run, env);
  CHECK(has(r.err, "less than starting any OpenCL device (0.050 s)"));
  // A slow start on record is replaced by a faster one, not by a slower one.
  record_start_costs(box, 100);
  REQUIRE(box.halo("--device 0 " + run, env).code == 0);
  const auto recorded_start = [&] {
    std::ifstream in(box / "cache/device-start.json");
    const auto doc = nlohmann::json::parse(in);
    return doc["devices"].begin().value()["start_seconds"].get<double>();
  };
  const double measured = recorded_start();
  CHECK(measured < 100);
  REQUIRE(box.halo("--device 0 " + run, env).code == 0);
  CHECK(recorded_start() <= measured);
  // --verify compares a device's result with the reference's: it always takes a device.
  r = box.halo(run + " --verify", env);
  CHECK(r.code == 0);
  CHECK(has(r.err, "in.png: device "));
  // The output is the same whichever ran it.
  CHECK(box.halo("--device ref run " + box / "in.png" + " -f gaussian:r=8 -o " + box / "ref.png")
            .code == 0);
  CHECK(box.halo("compare " + box / "o.png " + box / "ref.png --fail 1e-6").code == 0);
}

TEST_CASE("the second run of a command does not recompile") {
  Sandbox box;
  write_image(box / "in.png", photo(8, 8, 3), SampleType::u8);
  const std::string run = "-vv --device 0 run " + box / "in.png" + " -f emboss -o " + box / "o.png";
  const std::string env = "HALO_CACHE_DIR=" + box / "cache";
  const Result first = box.halo(run, env);
  CHECK(has(first.err, "kernel cache: 0 compiled") == false);
  const Result second = box.halo(run, env);
  CHECK(has(second.err, "kernel cache: 0 compiled"));
  const Result off = box.halo("--no-cache " + run, env);
  CHECK(has(off.err, "kernel cache: 0 compiled") == false);
}

TEST_CASE("presets: listed with their summary; bad lines name file and line") {
  Sandbox box;
  const Result list = box.halo("presets");
  CHECK(list.code == 0);
  CHECK(has(list.out, "emboss-gray"));
  CHECK(has(list.out, "Grey relief"));
  std::ofstream(box / "mine.halo") << "# my look\nsharpen:k=0.5\n\n# a comment\nemboss:gain=2\n";
  write_image(box / "in.png", photo(8, 8, 3), SampleType::u8);
  const Result bad =
      box.halo("run " + box / "in.png" + " --preset " + box / "mine.halo -o " + box / "o.png");
  CHECK(bad.code == 64);
  CHECK(has(bad.err, "mine.halo:5: filter 'emboss:gain=2': key 'gain'"));
  const Result unknown =
      box.halo("run " + box / "in.png" + " --preset nonesuch -o " + box / "o.png");
  CHECK(unknown.code == 64);
  CHECK(has(unknown.err, "unknown preset 'nonesuch'"));
}

TEST_CASE("filters lists parameters, defaults, ranges and kernels") {
  Sandbox box;
  const Result all = box.halo("filters");
  CHECK(all.code == 0);
  CHECK(has(all.out, "[2 0 0; 0 -1 0; 0 0 -1]"));
  CHECK(has(all.out, "zero|clamp|reflect|wrap, default clamp"));
  const Result one = box.halo("filters sharpen");
  CHECK(has(one.out, "number 0..100, default 1"));
  CHECK(box.halo("filters nope").code == 64);
}

TEST_CASE("hist: summary, JSON and CSV parsed back, plot, verify, errors") {
  Sandbox box;
  PixelBuffer grey(256, 2, 3, PixelType::u8);
  for (int i = 0; i < 512; ++i)
    for (int c = 0; c < 3; ++c) grey.samples<std::uint8_t>()[i * 3 + c] = std::uint8_t(i % 256);
  write_image(box / "grey.png", grey, SampleType::u8);
  const Result r = box.halo("hist " + box / "grey.png" + " --json " + box / "h.json" + " --csv " +
                            box / "h.csv" + " --plot " + box / "h.png --verify");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(has(r.out, "histogram luma 256 bins, 512 binned"));
  CHECK(has(r.out, "verify histogram: identical to the reference"));
  const auto json = nlohmann::json::parse(Sandbox::read(box / "h.json"));
  CHECK(json["schema"] == "halo.histogram/1");
  CHECK(json["mode"] == "luma");
  CHECK(json["binning"] == "codes");
  REQUIRE(json["counts"].size() == 1);
  for (int v = 0; v < 256; ++v) CHECK(json["counts"][0][v] == 2);
  const std::string csv = Sandbox::read(box / "h.csv");
  CHECK(csv.starts_with("bin,lower,upper,count\n0,0,1,2\n1,1,2,2\n"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 257);
  // Bars in a frame: a left margin for the count ticks, the axes drawn black.
  const PixelBuffer plot = read_image({box / "h.png", {}}).pixels;
  CHECK(plot.width > 256);
  const auto pixel = [&](int x, int y) {
    return plot.samples<std::uint8_t>()[(std::size_t(y) * plot.width + x) * 3];
  };
  CHECK(pixel(33, plot.height / 2) == 0);               // the count axis
  CHECK(pixel(plot.width / 2, plot.height - 18) == 0);  // the value axis
  // SVG: axes, ticks and words.
  REQUIRE(box.halo("hist " + box / "grey.png --bins 16 --plot " + box / "h.svg").code == 0);
  const std::string svg = Sandbox::read(box / "h.svg");
  CHECK(svg.starts_with("<svg"));
  CHECK(has(svg, "luma code (0..255)"));
  CHECK(has(svg, ">pixels<"));
  CHECK(has(svg, "16 bins"));
  CHECK(has(svg, ">100<"));  // a value tick

  // --stops: an HDR ramp of 1.5 * 2^k for k = -4..9 and one black pixel, 14 stops wide.
  Image hdr(15, 1, 3);
  for (int k = -4; k <= 9; ++k)
    for (int c = 0; c < 3; ++c) hdr.at(k + 4, 0, c) = 1.5f * std::ldexp(1.0f, k);
  write_image(box / "hdr.pfm", to_pixels(hdr, PixelType::f32), SampleType::f32);
  const Result stops = box.halo("hist " + box / "hdr.pfm --stops --bins 14 --range -4,10 --json " +
                                box / "s.json --plot " + box / "s.svg --verify");
  INFO(stops.err);
  REQUIRE(stops.code == 0);
  const auto s = nlohmann::json::parse(Sandbox::read(box / "s.json"));
  CHECK(s["quantity"] == "log2 luma (stops)");
  CHECK(s["counts"][0] == std::vector<int>(14, 1));  // one pixel in each stop
  CHECK(s["inf"] == 1);                              // black: log2(0) counted apart
  CHECK(has(Sandbox::read(box / "s.svg"), "log2 luma (stops)"));
  // Without --stops, 11 of the 15 pixels land in the first of 14 bins.
  REQUIRE(box.halo("hist " + box / "hdr.pfm --bins 14 --json " + box / "v.json").code == 0);
  CHECK(nlohmann::json::parse(Sandbox::read(box / "v.json"))["counts"][0][0] == 11);

  // hist streams the image: a float image in strips (range=auto found by a first pass over
  // the file) counts as the whole image does, on the device and the reference alike.
  write_image(box / "big.pfm", photo(300, 400, 3, PixelType::f32), SampleType::f32);
  const auto counted = [&](const std::string& how) {
    const Result r = box.halo(how + " hist " + box / "big.pfm --bins 64 --json " + box / "b.json");
    INFO(how, ": ", r.err);
    CHECK(r.code == 0);
    auto doc = nlohmann::json::parse(Sandbox::read(box / "b.json"));
    return std::tuple{doc["counts"], doc["range"], doc["under"], doc["over"]};
  };
  const auto whole = counted("--device ref");
  CHECK(counted("--device ref --max-memory 300K") == whole);
  CHECK(counted("--device 0 --max-memory 300K") == whole);
  CHECK(counted("--device 0") == whole);

  const Result rgb =
      box.halo("hist " + box / "grey.png" + " --mode rgb --bins 4 --json " + box / "rgb.json");
  CHECK(rgb.code == 0);
  const auto rgb_json = nlohmann::json::parse(Sandbox::read(box / "rgb.json"));
  CHECK(rgb_json["channels"] == nlohmann::json::array({"R", "G", "B"}));
  CHECK(rgb_json["counts"][2][3] == 128);

  CHECK(box.halo("hist " + box / "grey.png" + " --mode gray").code == 64);
  CHECK(box.halo("hist " + box / "grey.png" + " --bins 0").code == 64);
  CHECK(box.halo("hist " + box / "missing.png").code == 66);
  CHECK(box.halo("--device ref hist " + box / "grey.png").code == 0);
  const Result stage =
      box.halo("run " + box / "grey.png" + " -f histogram:bins=8 -o " + box / "same.png --verify");
  CHECK(stage.code == 0);
  CHECK(has(stage.out, "histogram:bins=8: histogram luma 8 bins, 512 binned"));
  CHECK(read_image({box / "same.png", {}}).pixels.bytes == grey.bytes);
}

TEST_CASE("thumbnail of a JPEG decodes it at 1/8 first, close to the full decode's, --verify ok") {
  Sandbox box;
  write_image(box / "big.jpg", photo(1600, 900, 3), SampleType::u8);
  const Result fast =
      box.halo("run " + box / "big.jpg -f thumbnail:w=96:h=96 -o " + box / "fast.png --verify -v");
  REQUIRE_MESSAGE(fast.code == 0, fast.err);
  CHECK(has(fast.err, "decoded at 1/8 of its size"));  // 200x113 holds 2x the 96x54 output
  REQUIRE(box.halo("run " + box / "big.jpg -f thumbnail:w=96:h=96:fast=0 -o " + box / "full.png")
              .code == 0);
  const PixelBuffer a = read_image({box / "fast.png", {}}).pixels;
  const PixelBuffer b = read_image({box / "full.png", {}}).pixels;
  REQUIRE(a.width == 96);
  REQUIRE(a.height == 54);
  REQUIRE(b.width == 96);
  REQUIRE(b.height == 54);
  const Result compare = box.halo("compare " + box / "fast.png " + box / "full.png");
  const auto at = compare.out.find("PSNR ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(compare.out.substr(at + 5)) > 35.0);
  // resize decodes the whole file unless fast=1.
  const Result exact = box.halo("run " + box / "big.jpg -f resize:w=96 -o " + box / "exact.png -v");
  CHECK_FALSE(has(exact.err, "decoded at"));
}

// A block factor that does not divide the image (1003 by 10) leaves a partial last block: the
// image spans 100.3 of the 101 shrunk pixels, and the resize maps onto that span (as Pillow's
// thumbnail does), not onto all 101, which would shrink the content and shift it left.
TEST_CASE("thumbnail read through partial blocks keeps the content where the full resize puts it") {
  Sandbox box;
  PixelBuffer edge(1003, 603, 3, PixelType::u8);
  auto* s = edge.samples<std::uint8_t>();
  for (int y = 0; y < 603; ++y)
    for (int x = 0; x < 1003; ++x)
      for (int c = 0; c < 3; ++c)
        s[(std::size_t(y) * 1003 + x) * 3 + c] = y >= 590 ? 200 : x >= 980 ? 255 : 0;
  write_image(box / "edge.png", edge, SampleType::u8);
  const Result fast = box.halo("run " + box / "edge.png -f thumbnail:w=47 -o " + box / "t.png -v");
  REQUIRE_MESSAGE(fast.code == 0, fast.err);
  CHECK(has(fast.err, "read at 1/10 of its size"));
  REQUIRE(
      box.halo("run " + box / "edge.png -f resize:w=47:h=28:fit=fill -o " + box / "r.png").code ==
      0);
  const PixelBuffer t = read_image({box / "t.png", {}}).pixels;
  const PixelBuffer r = read_image({box / "r.png", {}}).pixels;
  REQUIRE(t.sample_count() == r.sample_count());
  double light_t = 0, light_r = 0, off = 0;
  for (std::size_t i = 0; i < t.sample_count(); ++i) {
    light_t += t.samples<std::uint8_t>()[i];
    light_r += r.samples<std::uint8_t>()[i];
    off += std::abs(int(t.samples<std::uint8_t>()[i]) - int(r.samples<std::uint8_t>()[i]));
  }
  // Mapped onto all 101 pixels the white band came out 1.38x as bright, 4.9 codes off on average.
  CHECK(std::fabs(light_t / light_r - 1) < 0.08);
  CHECK(off / double(t.sample_count()) < 2.5);
}

TEST_CASE("--version names the program, OpenCL, the codecs, the colour libraries and the weights") {
  Sandbox box;
  const Result r = box.halo("--version");
  REQUIRE(r.code == 0);
  CHECK(has(r.out, "halo " HALO_VERSION_TEXT " (commit "));
  CHECK(has(r.out, "OpenCL: "));
  CHECK(has(r.out, "codecs: libpng 1.6"));
  CHECK(has(r.out, ", libdeflate 1."));
  CHECK(has(r.out, ", libwebp 1."));
  CHECK(has(r.out, "colour: OpenColorIO 2."));
  CHECK(has(r.out, ", LittleCMS 2."));
  CHECK(has(r.out, "denoise: "));
}
