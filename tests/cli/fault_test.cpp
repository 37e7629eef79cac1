// OpenCL failures on purpose (tests/fault/cl_fault.cpp, preloaded): each fault ends in either a
// correct output (the reference, with a warning, under --device auto) or a clean failure of
// that file (exit 69 naming the call and its CL_* code, no output, no temporary); a failed
// build is never cached; a batch whose device keeps failing stops using it.
#include <doctest/doctest.h>

#include "cli/sandbox.hpp"
#include "io/image_io.hpp"

using namespace halo;
using namespace halo::test;

namespace {

std::string with_fault(const Sandbox& box, const std::string& fault) {
  return "LD_PRELOAD=" HALO_CL_FAULT " HALO_FAULT=" + fault + " HALO_CACHE_DIR=" + box / "cache";
}

bool no_temporaries(const Sandbox& box) {
  for (const auto& entry : fs::directory_iterator(box.dir))
    if (entry.path().filename().string().starts_with(".halo-")) return false;
  return true;
}

}  // namespace

TEST_CASE("a failing OpenCL call on the chosen device: exit 69 naming it, nothing written") {
  Sandbox box;
  write_image(box / "in.png", photo(61, 37, 3), SampleType::u8);
  const std::string run =
      "--device cpu run " + box / "in.png" + " -f gaussian:r=3 -f sharpen -o " + box / "o.png";
  struct Case {
    const char* fault;
    const char* code;
  };
  for (const Case c : {Case{"clCreateBuffer:1", "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
                       Case{"clCreateBuffer:4", "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
                       Case{"clBuildProgram:1", "CL_BUILD_PROGRAM_FAILURE"},
                       Case{"clEnqueueNDRangeKernel:1", "CL_OUT_OF_RESOURCES"},
                       Case{"clEnqueueNDRangeKernel:3", "CL_OUT_OF_RESOURCES"},
                       Case{"clEnqueueMapBuffer:2", "CL_OUT_OF_RESOURCES"},
                       Case{"clFinish:1:-6", "CL_OUT_OF_HOST_MEMORY"}}) {
    INFO(c.fault);
    fs::remove_all(box / "cache");
    const Result r = box.halo(run, with_fault(box, c.fault));
    INFO(r.err);
    CHECK(r.code == 69);
    const std::string call = std::string(c.fault).substr(0, std::string(c.fault).find(':'));
    CHECK(has(r.err, call));
    CHECK(has(r.err, c.code));
    CHECK_FALSE(fs::exists(box / "o.png"));
    CHECK(no_temporaries(box));
  }
}

// --verify makes --device auto take a device even for images this small (device_choice.hpp).
TEST_CASE("under --device auto a failing call falls back to the reference, same pixels") {
  Sandbox box;
  write_image(box / "in.png", photo(61, 37, 3), SampleType::u8);
  const std::string filters = " -f gaussian:r=3 -f sharpen --verify -o ";
  REQUIRE(box.halo("--device ref run " + box / "in.png" + filters + box / "ref.png").code == 0);
  for (const char* fault : {"clEnqueueNDRangeKernel:2", "clCreateBuffer:3", "clBuildProgram:1"}) {
    INFO(fault);
    fs::remove_all(box / "cache");
    fs::remove(box / "o.png");
    const Result r =
        box.halo("run " + box / "in.png" + filters + box / "o.png", with_fault(box, fault));
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(has(r.err, "running the CPU reference instead"));
    CHECK(box.halo("compare " + box / "o.png " + box / "ref.png --fail 0").code == 0);
    CHECK(no_temporaries(box));
  }
}

TEST_CASE("a failed build is not cached: the next run compiles and succeeds") {
  Sandbox box;
  write_image(box / "in.png", photo(20, 10, 3), SampleType::u8);
  const std::string run = "--device cpu run " + box / "in.png" + " -f emboss -o " + box / "o.png";
  CHECK(box.halo(run, with_fault(box, "clBuildProgram:1")).code == 69);
  const Result r = box.halo("-vv " + run, "HALO_CACHE_DIR=" + box / "cache");
  CHECK(r.code == 0);
  CHECK_FALSE(has(r.err, "loaded from disk: 1"));
  CHECK(has(r.err, "compiled"));
}

TEST_CASE("a batch whose device fails file after file stops using it and says so") {
  Sandbox box;
  fs::create_directories(box / "in");
  for (int i = 0; i < 5; ++i)
    write_image(box / ("in/" + std::to_string(i) + ".png"), photo(23, 11, 3), SampleType::u8);
  const Result r = box.halo(
      "run " + box / "in" + " -f box:r=1 -j 1 --verify -o " + box / "out/{stem}.png" + " --mkdir",
      with_fault(box, "clEnqueueNDRangeKernel:1-"));
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(has(r.err, "OpenCL failed on 3 files in a row"));
  std::size_t fallbacks = 0;
  for (auto at = r.err.find("running the CPU reference instead"); at != std::string::npos;
       at = r.err.find("running the CPU reference instead", at + 1))
    ++fallbacks;
  CHECK(fallbacks == 3);  // the last two never asked the device
  for (int i = 0; i < 5; ++i) CHECK(fs::exists(box / ("out/" + std::to_string(i) + ".png")));
}
