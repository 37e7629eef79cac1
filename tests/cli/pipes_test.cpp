// Standard input and output through the real binary: `-` as input (the format from the
// content), `-o FMT:-` and `-o - --format FMT` as output, in every format halo writes; the
// bytes equal those of a run on files; a failed run writes nothing to standard output and
// leaves nothing in $TMPDIR.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/sandbox.hpp"
#include "io/image_io.hpp"

using namespace halo;
using namespace halo::test;
namespace fs = std::filesystem;

namespace {

// The sandbox's own TMPDIR, so leftovers of a run can be seen.
std::string private_tmp(const Sandbox& box) {
  fs::create_directories(box / "tmp");
  return "TMPDIR=" + (box / "tmp");
}

bool tmp_is_empty(const Sandbox& box) {
  return fs::is_empty(box / "tmp");
}

// The bytes a run wrote to standard output hold the same image as `file`: the same bytes for
// halo's own encoders; the same samples for EXR and TIFF, whose headers carry the time.
bool same_image(const Sandbox& box, const std::string& bytes, const std::string& file) {
  const std::string ext = extension(file);
  if (ext != ".exr" && ext != ".tif") return bytes == Sandbox::read(file);
  const std::string copy = box / ("piped" + ext);
  std::ofstream(copy, std::ios::binary) << bytes;
  const LoadedImage a = read_image({copy, {}}), b = read_image({file, {}});
  return a.stored == b.stored && a.channel_names == b.channel_names &&
         a.pixels.width == b.pixels.width && a.pixels.height == b.pixels.height &&
         a.pixels.bytes.size() == b.pixels.bytes.size() &&
         std::memcmp(a.pixels.bytes.data(), b.pixels.bytes.data(), a.pixels.bytes.size()) == 0;
}

}  // namespace

TEST_CASE("images go through pipes in every format, byte for byte as through files") {
  Sandbox box;
  write_image(box / "in.png", photo(61, 23, 3), SampleType::u8);
  const std::string env = private_tmp(box);
  for (const std::string format : {"png", "jpg", "pfm", "exr", "tif"}) {
    CAPTURE(format);
    const Result file =
        box.halo("run " + box / "in.png" + " -f box:r=1 -o " + box / "file." + format);
    REQUIRE(file.code == 0);
    // A real pipe on both sides: the input is spooled, the output copied out when complete.
    const Result piped =
        box.halo("run - -f box:r=1 -o " + format + ":-", "cat " + box / "in.png" + " | " + env);
    REQUIRE_MESSAGE(piped.code == 0, piped.err);
    CHECK(same_image(box, piped.out, box / ("file." + format)));
    CHECK(tmp_is_empty(box));
  }
  // The same output named by --format; an input redirected from a file is read in place.
  const Result named = box.halo("run - -f box:r=1 -o - --format exr < " + box / "in.png", env);
  REQUIRE(named.code == 0);
  CHECK(same_image(box, named.out, box / "file.exr"));
  // Formats recognised by their content when piped in: EXR, PFM, TIFF, JPEG.
  for (const std::string format : {"exr", "pfm", "tif", "jpg"}) {
    CAPTURE(format);
    REQUIRE(box.halo("run " + box / ("file." + format) + " -o " + box / "again.png").code == 0);
    const Result back = box.halo("run - -o png:-", "cat " + box / ("file." + format) + " | ");
    REQUIRE_MESSAGE(back.code == 0, back.err);
    CHECK(back.out == Sandbox::read(box / "again.png"));
  }
}

TEST_CASE("a pipeline of halo runs equals the chain of stages in one run") {
  Sandbox box;
  // RGB: with alpha, the PNG's straight colour is premultiplied around the whole chain of one
  // run, while the second run of a pipe gets an EXR (float), filtered as stored.
  write_image(box / "in.png", photo(40, 17, 3, PixelType::u16), SampleType::u16);
  REQUIRE(box.halo("run " + box / "in.png" + " -f gaussian:r=2 -f sharpen -o " + box / "one.exr" +
                   " --type float")
              .code == 0);
  const Result chained = box.halo(
      "run - -f sharpen -o exr:- --type float",
      box.halo_command("run " + box / "in.png" + " -f gaussian:r=2 -o exr:- --type float") + " | ");
  REQUIRE_MESSAGE(chained.code == 0, chained.err);
  CHECK(same_image(box, chained.out, box / "one.exr"));
}

TEST_CASE("reports go to stderr when the image goes to standard output") {
  Sandbox box;
  write_image(box / "in.png", photo(9, 7, 3), SampleType::u8);
  REQUIRE(box.halo("run " + box / "in.png" + " -f gaussian:r=2 -o " + box / "ref.png").code == 0);
  const Result r =
      box.halo("run - -f gaussian:r=2 --verify --timings -o png:- < " + box / "in.png");
  REQUIRE(r.code == 0);
  CHECK(r.out == Sandbox::read(box / "ref.png"));
  CHECK(has(r.err, "verify gaussian:r=2"));
  CHECK(has(r.err, "time decode"));
}

TEST_CASE("standard input and output with the other commands") {
  Sandbox box;
  write_image(box / "in.png", photo(12, 5, 3), SampleType::u8);
  const Result hist = box.halo("hist - --bins 8 --json -", "cat " + box / "in.png" + " | ");
  REQUIRE_MESSAGE(hist.code == 0, hist.err);
  CHECK(has(hist.out, "\"binned\": 60"));
  const Result same = box.halo("compare " + box / "in.png" + " -", "cat " + box / "in.png" + " | ");
  CHECK(same.code == 0);
  CHECK(has(same.out, "vs -: PASS"));
  CHECK(box.halo("compare - -", "cat " + box / "in.png" + " | ").code == 64);
}

TEST_CASE("pipes: misuse and bad data are clear errors, and a failed run writes nothing") {
  Sandbox box;
  write_image(box / "in.png", photo(64, 64, 3), SampleType::u8);
  const std::string env = private_tmp(box);
  const std::string in = box / "in.png";
  struct Case {
    std::string args, feed;
    int code;
    std::string message;
  };
  const Case cases[] = {
      {"run " + in + " -o -", "", 64, "use -o png:-"},
      {"run " + in + " -o bogus:-", "", 64, "'bogus' is not a format halo writes"},
      {"run " + in + " -o - --format bogus", "", 64, "--format bogus: not a format"},
      {"run " + in + " -o " + box / "x.jpg" + " --format png", "", 64,
       "applies to standard output"},
      {"run " + in + " -o png:- --format exr", "", 64, "disagree"},
      {"run " + in + " " + in + " -o png:-", "", 64, "takes one input, not 2"},
      {"run - " + in + " -o " + box / "x.png", "", 64, "must be the only input"},
      {"run " + in + " -f sharpen --write-flags - -o png:-", "", 64, "--write-flags cannot"},
      {"run - -o png:-", "printf '' | ", 65, "standard input: no data"},
      {"run - -o png:-", "echo not-an-image | ", 65,
       "standard input: not an image halo recognises by its content"},
      {"run - -f nosuch -o png:-", "cat " + in + " | ", 64, "nosuch"},
      // A cut PNG: decoding fails midway, after the output was begun.
      {"run - -f box:r=1 -o png:-", "head -c 2000 " + in + " | ", 65, "standard input"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const Result r = box.halo(c.args, c.feed + env);
    CHECK(r.code == c.code);
    CHECK_MESSAGE(has(r.err, c.message), r.err);
    CHECK(r.out.empty());
    CHECK(tmp_is_empty(box));
  }
}
