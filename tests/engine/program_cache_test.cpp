// The on-disk program cache: a second process (here, a second Device) must not recompile.
#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <thread>

#include "cl/cl_error.hpp"
#include "pipeline/pipeline.hpp"
#include "support.hpp"

using namespace halo;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const char* name) {
  const fs::path dir = fs::temp_directory_path() / (std::string(name) + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

}  // namespace

TEST_CASE("programs are compiled once, then loaded from disk") {
  const fs::path dir = fresh_dir("halo-cache-test-");
  const DeviceInfo info = test::device().info();
  const Defines defines = {{"KW", "5"}, {"KH", "3"}};
  {
    Device first(info, dir);
    first.kernel("conv.cl", "conv_tile", defines);
    first.kernel("conv.cl", "conv_tile", defines);  // memory hit
    CHECK(first.programs().compiled() == 1);
    CHECK(first.programs().loaded_from_disk() == 0);
  }
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);  // .bin .key
  {
    Device second(info, dir);
    second.kernel("conv.cl", "conv_tile", defines);
    CHECK(second.programs().compiled() == 0);
    CHECK(second.programs().loaded_from_disk() == 1);
    second.kernel("conv.cl", "conv_tile", {{"KW", "7"}, {"KH", "3"}});  // other defines: compile
    CHECK(second.programs().compiled() == 1);
  }
  fs::remove_all(dir);
}

TEST_CASE("a corrupt cache entry is rebuilt, not fatal") {
  const fs::path dir = fresh_dir("halo-cache-corrupt-");
  const DeviceInfo info = test::device().info();
  { Device(info, dir).kernel("convert.cl", "to_gray", {}); }
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".bin") fs::resize_file(entry.path(), 10);
  Device again(info, dir);
  again.kernel("convert.cl", "to_gray", {});
  CHECK(again.programs().compiled() == 1);
  fs::remove_all(dir);
}

TEST_CASE("without a cache folder every process compiles") {
  Device device(test::device().info(), std::nullopt);
  device.kernel("convert.cl", "to_gray", {});
  CHECK(device.programs().compiled() == 1);
}

TEST_CASE("OpenCL failures carry the CL_* name and the launch sizes") {
  CHECK(cl_error_name(CL_INVALID_WORK_GROUP_SIZE) == "CL_INVALID_WORK_GROUP_SIZE");
  CHECK(cl_error_name(-9999) == "CL_UNKNOWN_ERROR(-9999)");
  Device& device = test::device();
  auto kernel = device.kernel("conv.cl", "conv_tile", {{"CONV_W", "16"}, {"CONV_H", "16"}});
  try {
    // conv_tile requires 16x16 work-groups; 8x8 must fail with a readable reason.
    device.launch(kernel, "conv_tile", cl::NDRange(32, 32, 1), cl::NDRange(8, 8, 1));
    device.finish();
    FAIL("launch with a wrong work-group size succeeded");
  } catch (const ClError& e) {
    const std::string what = e.what();
    CHECK(what.find("clEnqueueNDRangeKernel failed: CL_INVALID") != std::string::npos);
    CHECK(what.find("kernel conv_tile, global 32x32x1, local 8x8x1") != std::string::npos);
  }
}

TEST_CASE("build errors keep the compiler log") {
  Device& device = test::device();
  try {
    device.kernel("conv.cl", "conv_tile", {{"KW", "(("}});
    FAIL("a broken define compiled");
  } catch (const BuildError& e) {
    CHECK(std::string(e.what()).find("CL_BUILD_PROGRAM_FAILURE") != std::string::npos);
    CHECK_FALSE(e.log().empty());
  }
}

TEST_CASE("queues of one context share its programs; threads filter on them at once") {
  Device first(test::device().info(), std::nullopt);
  const auto second = std::make_unique<Device>(first.shared());
  first.kernel("convert.cl", "to_gray", {});
  second->kernel("convert.cl", "to_gray", {});
  CHECK(&first.programs() == &second->programs());
  CHECK(first.programs().compiled() == 1);
  // Two threads, one queue each, the same pipeline: both results equal the reference.
  const Pipeline pipeline({{"gaussian:r=3", ""}, {"sharpen", ""}});
  const Image image = test::random_image(67, 41, 3);
  const PixelBuffer input = to_pixels(image, PixelType::f32);
  const PixelBuffer expected = run_reference(pipeline, input, PixelType::f32);
  PixelBuffer results[2];
  {
    std::jthread a(
        [&] { results[0] = run_device(first, pipeline, input, PixelType::f32, {}).pixels; });
    std::jthread b(
        [&] { results[1] = run_device(*second, pipeline, input, PixelType::f32, {}).pixels; });
  }
  for (const auto& result : results) {
    const Comparison c = compare(to_image(result), to_image(expected), 1e-5);
    CHECK_MESSAGE(c.ok(), c.summary());
  }
}

TEST_CASE("programs ask for correctly rounded sqrt and division where the device offers it") {
  // Without the option NVIDIA's sqrt differed from std::sqrt in the last bit (Sobel, H100).
  Device device(test::device().info(), std::nullopt);
  const cl::Program program = device.programs().get("conv.cl", {{"KW", "3"}, {"KH", "3"}});
  cl_device_fp_config fp = 0;
  test::device().info().device.getInfo(CL_DEVICE_SINGLE_FP_CONFIG, &fp);
  const std::string options =
      program.getBuildInfo<CL_PROGRAM_BUILD_OPTIONS>(test::device().info().device);
  CHECK((options.find("-cl-fp32-correctly-rounded-divide-sqrt") != std::string::npos) ==
        bool(fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT));
  CHECK(options.find("-cl-std=CL1.2") != std::string::npos);
}
