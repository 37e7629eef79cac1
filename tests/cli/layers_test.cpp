// Multilayer EXR through the real binary: the filtered channels replace their originals and
// every other layer is kept under its own name; `halo compare` checks every channel (--ch to
// choose), reports idiff's PSNR, and exits as idiff does with --idiff-exit-codes.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/sandbox.hpp"
#include "io/image_io.hpp"

using namespace halo;
using namespace halo::test;

namespace {

const std::string kRender = HALO_RENDER_DATA "/scene_4spp.exr";

std::vector<std::string> channels_of(const std::string& path) {
  return open_reader(path)->header().channels;
}

nlohmann::json json_of(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("a multilayer EXR keeps every layer; only the filtered channels change") {
  Sandbox box;
  const std::vector<std::string> names = channels_of(kRender);
  REQUIRE(names.size() > 4);  // Combined RGBA, depth, normals, albedo
  REQUIRE(box.halo("run " + kRender + " -f bilateral -o " + box / "clean.exr").code == 0);
  CHECK(channels_of(box / "clean.exr") == names);
  for (const auto& name : names) {
    CAPTURE(name);
    const bool filtered = name.find("Combined.") != std::string::npos && !name.ends_with(".A");
    const Result r =
        box.halo("compare " + kRender + " " + box / "clean.exr --ch " + name + " --fail 0");
    CHECK(r.code == (filtered ? 1 : 0));  // the others, bit for bit
  }
  // A run that holds the whole image keeps the chunks it decoded for the other layers' reader
  // (an EXR chunk holds every channel of its rows), and the layers come out the same; under a
  // budget too small for them, they are decoded again, with the same result.
  for (const std::string budget : {"", " --max-memory 30M"}) {
    CAPTURE(budget);
    const Result whole = box.halo("run " + kRender + " -f box:r=1:border=wrap -v" + budget +
                                  " -o " + box / "whole.exr");
    REQUIRE(whole.code == 0);
    CHECK(has(whole.err, "the whole image at once"));
    CHECK(has(whole.err, "of decoded data kept for the other channels' reader") == budget.empty());
    for (const std::string name :
         {"ViewLayer.Depth.Z", "ViewLayer.Normal.X", "ViewLayer.DiffCol.B"})
      CHECK(box.halo("compare " + kRender + " " + box / "whole.exr --ch " + name + " --fail 0")
                .code == 0);
  }
  // --drop-layers: the filtered channels only.
  REQUIRE(
      box.halo("run " + kRender + " -f bilateral --drop-layers -o " + box / "beauty.exr").code ==
      0);
  CHECK(channels_of(box / "beauty.exr").size() == 4);
  // Other outputs hold what they can: the picked channels.
  REQUIRE(box.halo("run " + kRender + " -f box:r=1 -o " + box / "beauty.png").code == 0);
  CHECK(channels_of(box / "beauty.png").size() == 4);
}

TEST_CASE("a filter that makes grey from colour writes its channels in the colour's layer") {
  Sandbox box;
  const std::vector<std::string> names = channels_of(kRender);
  REQUIRE(box.halo("run " + kRender + " -f emboss -o " + box / "grey.exr").code == 0);
  const std::vector<std::string> got = channels_of(box / "grey.exr");
  // Combined.R, G, B, A become Combined.Y, A where Combined.R was; the rest as they were.
  std::vector<std::string> want;
  for (const auto& name : names) {
    if (name == "ViewLayer.Combined.R") {
      want.push_back("ViewLayer.Combined.Y");
      want.push_back("ViewLayer.Combined.A");
    }
    if (name.find(".Combined.") == std::string::npos) want.push_back(name);
  }
  CHECK(got == want);
  REQUIRE(box.halo("run " + kRender + " -f emboss --drop-layers -o " + box / "alone.exr").code ==
          0);
  const PixelBuffer beside =
      read_image(parse_input_ref(box / "grey.exr[ViewLayer.Combined.Y,ViewLayer.Combined.A]"))
          .pixels;
  const PixelBuffer alone = read_image(parse_input_ref(box / "alone.exr")).pixels;
  REQUIRE(beside.channels == 2);
  CHECK(beside.bytes == alone.bytes);
  CHECK(box.halo("compare " + kRender + " " + box / "grey.exr --ch ViewLayer.Depth.Z --fail 0")
            .code == 0);

  // A name the file already has is refused rather than written twice: R, G, B to grey is Y.
  PixelBuffer rgby = photo(9, 7, 4, PixelType::f32);
  OutputImage taken(box / "rgby.exr", 9, 7, SampleType::f32, {});
  taken.name_channels({"R", "G", "B", "Y"});
  taken.write({0, 7}, rgby);
  taken.commit();
  const Result r = box.halo("run '" + box / "rgby.exr[R,G,B]' -f emboss -o " + box / "y.exr");
  CHECK(r.code == 64);
  CHECK(has(r.err, "--drop-layers"));
  CHECK_FALSE(std::filesystem::exists(box / "y.exr"));
  CHECK(box.halo("run '" + box / "rgby.exr[R,G,B]' -f emboss --drop-layers -o " + box / "y.exr")
            .code == 0);
}

TEST_CASE("compare checks every layer: a doubled depth fails, as it does in idiff") {
  Sandbox box;
  // Depth times two, everything else as it was (the depth channel picked, the rest carried).
  REQUIRE(box.halo("run '" + kRender + "[ViewLayer.Depth.Z]' -f conv:k=2:scale=1 -o " +
                   box / "deep.exr")
              .code == 0);
  CHECK(channels_of(box / "deep.exr") == channels_of(kRender));
  const Result all =
      box.halo("compare " + kRender + " " + box / "deep.exr --json " + box / "r.json");
  CHECK(all.code == 1);
  CHECK(has(all.out, "channel ViewLayer.Depth.Z"));
  CHECK(json_of(box / "r.json")["pairs"][0]["channels"].size() == channels_of(kRender).size());
  const Result beauty = box.halo("compare " + kRender + " " + box / "deep.exr --ch " +
                                 "ViewLayer.Combined.R,ViewLayer.Combined.G,ViewLayer.Combined.B");
  CHECK(beauty.code == 0);

  // idiff's exit codes on request: 2 failure (channels that differ too), 0 pass, 4 unreadable.
  CHECK(box.halo("compare " + kRender + " " + box / "deep.exr --idiff-exit-codes").code == 2);
  CHECK(box.halo("compare " + kRender + " " + kRender + " --idiff-exit-codes").code == 0);
  REQUIRE(box.halo("run " + kRender + " --drop-layers -o " + box / "rgba.exr").code == 0);
  const Result fewer = box.halo("compare " + kRender + " " + box / "rgba.exr");
  CHECK(fewer.code == 3);
  CHECK(has(fewer.out, "has no channel ViewLayer.Depth.Z"));
  CHECK(box.halo("compare " + kRender + " " + box / "rgba.exr --idiff-exit-codes").code == 2);
  CHECK(box.halo("compare " + kRender + " " + box / "none.exr --idiff-exit-codes").code == 4);
  CHECK(box.halo("compare " + kRender + " " + box / "none.exr").code == 66);
}

TEST_CASE("compare's PSNR is idiff's: the peak is the largest value, at least 1") {
  Sandbox box;
  // a = [2, 0], b = [2, 0.5]: RMS sqrt(0.25 / 2), peak 2: 20 log10(2 / 0.353553) = 15.051 dB.
  Image a(2, 1, 1), b(2, 1, 1);
  a.at(0, 0, 0) = 2, b.at(0, 0, 0) = 2, b.at(1, 0, 0) = 0.5f;
  write_image(box / "a.pfm", to_pixels(a, PixelType::f32), SampleType::f32);
  write_image(box / "b.pfm", to_pixels(b, PixelType::f32), SampleType::f32);
  box.halo("compare " + box / "a.pfm " + box / "b.pfm --json " + box / "p.json");
  CHECK(json_of(box / "p.json")["pairs"][0]["psnr"].get<double>() ==
        doctest::Approx(20 * std::log10(2 / std::sqrt(0.125))).epsilon(1e-6));
}
