// halo tune end to end: what it stores, that later runs use it, that a damaged file is left
// out, that a candidate with a wrong result is caught, and its usage errors.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cl/tuning.hpp"
#include "cli/sandbox.hpp"
#include "io/image_io.hpp"

using namespace halo;
using namespace halo::test;

namespace {

std::string cache_env(const Sandbox& box) {
  return "HALO_CACHE_DIR=" + box / "cache";
}

// The one tuned file in the sandbox's cache, or "" when there is none.
std::string tuned_path(const Sandbox& box) {
  const fs::path dir = fs::path(box / "cache") / "tuning";
  if (!fs::exists(dir)) return "";
  std::string found;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".json") {
      CHECK(found.empty());
      found = entry.path().string();
    }
  return found;
}

}  // namespace

TEST_CASE("tune: stores checked, timed shapes that devices and runs then use") {
  Sandbox box;
  const Result r =
      box.halo("--device cpu tune --filters box,conv --size 96x64 --runs 1", cache_env(box));
  INFO(r.out, r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("box        box:r=32") != std::string::npos);
  CHECK(r.out.find("conv       sharpen") != std::string::npos);
  CHECK(r.out.find("gaussian ") == std::string::npos);  // not asked for
  CHECK(r.out.find("histogram ") == std::string::npos);
  CHECK(r.out.find("box_seg=16,box_rows=") != std::string::npos);  // a candidate's line
  CHECK(r.out.find("stored in ") != std::string::npos);

  const std::string file = tuned_path(box);
  REQUIRE(!file.empty());
  CHECK(r.out.find(file) != std::string::npos);
  std::ifstream in(file);
  const nlohmann::json doc = nlohmann::json::parse(in);
  CHECK(doc.at("image") == "96x64");
  CHECK(doc.at("settings").size() ==
        tuning_fields().size());  // every field of cl/tuning.hpp's Tuning
  REQUIRE(doc.at("families").size() == 2);
  for (const auto& family : doc.at("families")) {
    CHECK(family.at("candidates").size() >= 2);
    CHECK(family.at("tuned_ms").get<double>() > 0);
    CHECK(family.at("tuned_ms").get<double>() <= family.at("start_ms").get<double>());
    for (const auto& c : family.at("candidates")) {
      CHECK(c.at("status") == "");
      CHECK(c.at("ms").get<double>() > 0);
    }
  }

  // The device reports the tuned file; HALO_TUNING still overrides on top of it.
  Result d = box.halo("-v devices", cache_env(box));
  CHECK(d.out.find("tuning     tuned ") != std::string::npos);
  CHECK(d.out.find(file) != std::string::npos);
  d = box.halo("devices", cache_env(box) + " HALO_TUNING=box_seg=16");
  CHECK(d.out.find("+ HALO_TUNING") != std::string::npos);

  // A run takes the stored shapes: hand-set box_seg shows in the kernel it compiles (box
  // from r=17 on runs the running sums that box_seg shapes).
  nlohmann::json edited = doc;
  edited["settings"]["box_seg"] = 48;
  std::ofstream(file) << edited.dump();
  write_image(box / "in.pfm", photo(53, 31, 3), SampleType::f32);
  const Result run = box.halo(
      "-vv --device cpu run " + box / "in.pfm" + " -f box:r=20 -o " + box / "out.pfm" + " --verify",
      cache_env(box));
  INFO(run.err);
  CHECK(run.code == 0);
  CHECK(run.err.find("launch shapes from the tuned ") != std::string::npos);
  CHECK(run.err.find("BOX_SEG=48") != std::string::npos);

  // --forget: back to the table.
  Result f = box.halo("--device cpu tune --forget", cache_env(box));
  CHECK(f.code == 0);
  CHECK(f.out.find("removed") != std::string::npos);
  CHECK(tuned_path(box).empty());
  CHECK(box.halo("devices", cache_env(box)).out.find("tuning     table row ") != std::string::npos);
  f = box.halo("--device cpu tune --forget", cache_env(box));
  CHECK(f.code == 0);
  CHECK(f.out.find("nothing tuned to remove") != std::string::npos);
}

TEST_CASE("tune: a damaged or foreign tuned file is left out, never fatal") {
  Sandbox box;
  REQUIRE(box.halo("--device cpu tune --filters conv --size 32x32 --runs 1", cache_env(box)).code ==
          0);
  const std::string file = tuned_path(box);
  REQUIRE(!file.empty());
  write_image(box / "in.pfm", photo(17, 9, 1), SampleType::f32);
  for (const std::string& text :
       {std::string("{\"settings\": {\"box_seg\": "),  // truncated
        std::string("{\"settings\": {\"warp_size\": 32}}"),
        std::string("{\"settings\": {\"box_seg\": 0}}"),
        std::string("{\"settings\": {\"box_seg\": \"64\"}}"), std::string("[]")}) {
    std::ofstream(file) << text;
    INFO(text);
    const Result d = box.halo("-v devices", cache_env(box));
    CHECK(d.code == 0);
    CHECK(d.out.find("tuning     table row ") != std::string::npos);
    CHECK(d.err.find("left out") != std::string::npos);
    const Result run = box.halo(
        "--device cpu run " + box / "in.pfm" + " -f box:r=2 -o " + box / "out.pfm" + " --verify",
        cache_env(box));
    CHECK(run.code == 0);
  }
}

TEST_CASE(
    "tune: a candidate whose result differs from the reference is left out, exit 1 "
    "(fault layer)") {
  Sandbox box;
  // The third read-back is corrupted (tests/fault/cl_fault.cpp): conv's checks read back once
  // per candidate, the start first, so the second candidate after it looks wrong.
  const Result r =
      box.halo("--device cpu tune --filters conv --size 48x32 --runs 1",
               cache_env(box) + " LD_PRELOAD=" HALO_CL_FAULT " HALO_FAULT=clEnqueueReadBuffer:3:1");
  INFO(r.out, r.err);
  CHECK(r.code == 1);
  CHECK(r.out.find("left out: differs from the reference") != std::string::npos);
  CHECK(r.err.find("differs from the CPU reference on sharpen") != std::string::npos);
  CHECK(r.err.find("1 candidate shape(s)") != std::string::npos);
  const std::string file = tuned_path(box);
  REQUIRE(!file.empty());  // the others were fine: stored
  std::ifstream in(file);
  const nlohmann::json doc = nlohmann::json::parse(in);  // alive through the loop
  int left_out = 0;
  for (const auto& c : doc.at("families").at(0).at("candidates")) left_out += c.at("status") != "";
  CHECK(left_out == 1);
}

TEST_CASE("tune: a candidate the device refuses is left out with the OpenCL error (fault layer)") {
  Sandbox box;
  // Launches fail from the 8th on for one candidate's worth of calls only: the start's check
  // and timing pass, some later candidate's launch fails, and the search goes on.
  const Result r = box.halo(
      "--device cpu tune --filters conv --size 48x32 --runs 1 --dry-run",
      cache_env(box) + " LD_PRELOAD=" HALO_CL_FAULT " HALO_FAULT=clEnqueueNDRangeKernel:8");
  INFO(r.out, r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("left out: clEnqueueNDRangeKernel") != std::string::npos);
  CHECK(r.out.find("CL_OUT_OF_RESOURCES") != std::string::npos);
  CHECK(tuned_path(box).empty());  // --dry-run
}

TEST_CASE("tune: usage errors and where it cannot store") {
  Sandbox box;
  CHECK(box.halo("tune --filters blur", cache_env(box)).code == 64);
  CHECK(box.halo("tune --size 0x5", cache_env(box)).code == 64);
  CHECK(box.halo("tune --size 64", cache_env(box)).code == 64);
  CHECK(box.halo("tune --runs 0", cache_env(box)).code == 64);
  Result r = box.halo("--device ref tune", cache_env(box));
  CHECK(r.code == 64);
  CHECK(r.err.find("needs an OpenCL device") != std::string::npos);
  r = box.halo("--device cpu tune --filters conv --size 16x16 --runs 1", "HALO_NO_CACHE=1");
  CHECK(r.code == 73);
  CHECK(r.err.find("--dry-run") != std::string::npos);
  r = box.halo("--device cpu tune --filters conv --size 16x16 --runs 1 --dry-run",
               "HALO_NO_CACHE=1");
  CHECK(r.code == 0);
  CHECK(r.out.find("stored") == std::string::npos);
  const std::string help = box.halo("tune --help").out;
  CHECK(help.find("--filters") != std::string::npos);
  CHECK(help.find("Exit codes") != std::string::npos);
}
