// gaussian: weights against the closed form, radius/sigma rules, and the device against the
// reference for every radius 1..20 and large ones, on odd sizes and all borders.
#include <doctest/doctest.h>

#include <cmath>

#include "cl/tuning.hpp"
#include "core/error.hpp"
#include "filters/registry.hpp"
#include "separable_support.hpp"

using namespace halo;

TEST_CASE("gaussian weights follow exp(-i^2 / 2 sigma^2), normalised") {
  // The response to a unit impulse is the outer product of the 1D weights.
  for (const auto& [spec, r, sigma] :
       {std::tuple{"gaussian:r=2:sigma=1", 2, 1.0}, std::tuple{"gaussian:r=6", 6, 2.0},
        std::tuple{"gaussian:sigma=1.5", 5, 1.5}}) {
    Image impulse(2 * r + 1, 2 * r + 1, 1);
    impulse.at(r, r, 0) = 1.0f;
    const Image out = make_stage(std::string(spec) + ":border=zero")->reference(impulse);
    double norm = 0;
    for (int i = -r; i <= r; ++i) norm += std::exp(-i * i / (2 * sigma * sigma));
    for (int y = -r; y <= r; ++y)
      for (int x = -r; x <= r; ++x) {
        const double expected = std::exp(-(x * x + y * y) / (2 * sigma * sigma)) / (norm * norm);
        CHECK(out.at(r + x, r + y, 0) == doctest::Approx(expected).epsilon(1e-5));
      }
  }
}

TEST_CASE("gaussian blur keeps a constant image constant (weights sum to 1)") {
  Image flat(9, 7, 1);
  for (float& v : flat.data()) v = 0.75f;
  const Image out = make_stage("gaussian:r=5:border=reflect")->reference(flat);
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 9; ++x) CHECK(out.at(x, y, 0) == doctest::Approx(0.75f).epsilon(1e-6));
}

TEST_CASE("gaussian needs r or sigma; r beyond 512 is refused") {
  CHECK_THROWS_WITH_AS(make_stage("gaussian"), doctest::Contains("give r, sigma or both"), Error);
  CHECK_THROWS_WITH_AS(make_stage("gaussian:r=513"), doctest::Contains("out of range"), Error);
  CHECK_THROWS_WITH_AS(make_stage("gaussian:sigma=400"), doctest::Contains("> 512"), Error);
  CHECK_THROWS_WITH_AS(make_stage("gaussian:r=0"), doctest::Contains("out of range"), Error);
  CHECK(make_stage("gaussian:sigma=2")->details()[0].starts_with("radius 6"));
}

TEST_CASE("device matches reference: gaussian radius 1..20, every border" *
          doctest::test_suite("sweeps")) {
  // Each radius is a program: the loop takes the smallest, one between and the largest.
  for (int r : test::sweep<int>(
           {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, {1, 6, 20}))
    for (const char* border : test::kBorders)
      test::check_device_matches("gaussian:r=" + std::to_string(r) + ":border=" + border,
                                 test::random_image(67, 45, 3, false, unsigned(r)));
}

TEST_CASE("device matches reference: gaussian large radii and awkward sizes" *
          doctest::test_suite("sweeps")) {
  for (int r : test::sweep<int>({31, 64, 128}, {64}))
    for (const char* border : test::kBorders) {
      const std::string spec = "gaussian:r=" + std::to_string(r) + ":border=" + border;
      test::check_device_matches(spec, test::random_image(7, 5, 1));
      test::check_device_matches(spec, test::random_image(300, 170, 4, true));
    }
  test::check_device_matches("gaussian:r=8", test::random_image(1023, 517, 3));
  test::check_device_matches("gaussian:r=3:gray=1", test::random_image(1, 1, 3));
  test::check_device_matches("gaussian:r=3", test::random_image(2, 3, 4, true));
}

TEST_CASE("with little local memory: the two-pass kernels, and direct columns for big radii" *
          doctest::test_suite("sweeps")) {
  // Pretending the device has 8 KiB of local memory rules out the fused kernel, so the rows
  // and columns passes run (and for r >= 64 the direct columns kernel). Typed as a GPU without
  // a tuning row, so a CPU test device runs the tiled kernels, not the CPU vector ones.
  DeviceInfo small = test::device().info();
  small.local_memory = 8 * 1024;
  small.type = "gpu";
  Device device(small, default_cache_dir());
  for (int r : test::sweep<int>(
           {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, {2, 13}))
    for (const char* border : test::kBorders)
      test::check_device_matches(device, "gaussian:r=" + std::to_string(r) + ":border=" + border,
                                 test::random_image(67, 45, 3, false, unsigned(r)));
  for (int r : test::sweep<int>({64, 128}, {64}))
    for (const char* border : test::kBorders)
      test::check_device_matches(device, "box:r=" + std::to_string(r) + ":border=" + border,
                                 test::random_image(61, 300, 1));
}

TEST_CASE("the tiled separable kernels with the device's own local memory" *
          doctest::test_suite("sweeps")) {
  Device device(test::gpu_info(), default_cache_dir());
  for (int r : test::sweep<int>({1, 2, 5, 8, 16, 31}, {2, 16}))
    for (const char* border : test::kBorders)
      test::check_device_matches(device, "gaussian:r=" + std::to_string(r) + ":border=" + border,
                                 test::random_image(101, 67, 3, false, unsigned(r)));
  test::check_device_matches(device, "sep:h=1,2,1:v=1,4,6,4,1:offset=0.25",
                             test::random_image(1023, 517, 1));
}

TEST_CASE("sliding-window rows and columns passes (rows_slide, cols_slide) equal the reference" *
          doctest::test_suite("sweeps")) {
  Device device(test::gpu_info(), default_cache_dir());
  // From radius 1 at several window lengths, and from radius 9 (r=8 strided, r=31 sliding).
  for (const char* shape : test::sweep<const char*>(
           {"rows_slide=1,cols_slide=1,rows_slide_steps=5,cols_slide_steps=8",
            "rows_slide=1,cols_slide=1,rows_slide_steps=1,cols_slide_steps=3,cols_h=4",
            "rows_slide=1,rows_slide_steps=7,rows_w=16,cols_slide=1,cols_slide_steps=16",
            "rows_slide=9,cols_slide=9"},
           {"rows_slide=1,cols_slide=1,rows_slide_steps=5,cols_slide_steps=8"})) {
    test::retune(device, shape);
    for (int r : test::sweep<int>({1, 8, 31}, {1, 31}))
      for (const char* border : test::kBorders) {
        INFO(shape, " r=", r, " ", border);
        const std::string b = std::string(":border=") + border;
        test::check_device_matches(device, "gaussian:r=" + std::to_string(r) + b,
                                   test::random_image(101, 67, 3, false, unsigned(r)));
        test::check_device_matches(device, "box:r=" + std::to_string(r) + b,
                                   test::random_image(7, 5, 1, false, unsigned(r)));
      }
    test::check_device_matches(device, "sep:h=1,2,1:v=1,4,6,4,1:offset=0.25",
                               test::random_image(1023, 517, 1));
    test::check_device_matches(device, "gaussian:r=3", test::random_image(1, 1, 2));
  }
}

TEST_CASE("the fused kernel (both passes at once) equals the reference bit for bit" *
          doctest::test_suite("sweeps")) {
  Device device(test::gpu_info(), default_cache_dir());
  // Odd and even steps; bands shorter than, equal to and longer than a step, and than the
  // image; radii whose 2r is and is not a multiple of the steps (each radius is a program).
  using Case = std::pair<const char*, std::vector<int>>;
  for (const Case& c :
       test::sweep<Case>({{"fused_radius=16,fused_steps=5,fused_band=64", {1, 2, 5, 8, 16}},
                          {"fused_radius=16,fused_steps=3,fused_band=1", {2, 3, 16}},
                          {"fused_radius=16,fused_steps=4,fused_band=7", {2, 5, 16}},
                          {"fused_radius=16,fused_steps=1,fused_band=600", {1, 7}}},
                         {{"fused_radius=16,fused_steps=3,fused_band=7", {3}}})) {
    const char* shape = c.first;  // not a binding: INFO captures it
    const std::vector<int>& radii = c.second;
    test::retune(device, shape);
    for (int r : radii)
      for (const char* border : test::kBorders) {
        INFO(shape, " r=", r, " ", border);
        const std::string b = std::string(":border=") + border;
        test::check_device_matches(device, "gaussian:r=" + std::to_string(r) + b,
                                   test::random_image(101, 67, 3, false, unsigned(r)), 0.0);
        test::check_device_matches(device, "gaussian:r=" + std::to_string(r) + b,
                                   test::random_image(7, 5, 1, false, unsigned(r)), 0.0);
      }
    test::check_device_matches(device, "box:r=4:border=reflect", test::random_image(33, 9, 1), 0.0);
    test::check_device_matches(device, "sep:h=1,2,1:v=1,4,6,4,1,2,3:offset=0.25",
                               test::random_image(1023, 517, 1), 0.0);
    test::check_device_matches(device, "sep:h=1,4,6,4,1,2,3,5,7:v=1,2,1:border=reflect",
                               test::random_image(161, 33, 2), 0.0);
    test::check_device_matches(device, "gaussian:r=3", test::random_image(1, 1, 2), 0.0);
    test::check_device_matches(device, "gaussian:r=16:border=reflect",
                               test::random_image(2, 300, 1), 0.0);
  }
}

TEST_CASE("the direct kernel (both passes in registers) equals the reference bit for bit" *
          doctest::test_suite("sweeps")) {
  Device device(test::gpu_info(), default_cache_dir());
  // Rows per work-item fewer than, equal to and more than 2r; images narrower than a vector,
  // a span and a group, widths not a multiple of 4, and a strip's last rows inside a run.
  for (const char* shape :
       test::sweep<const char*>({"direct_radius=4,direct_rows=4", "direct_radius=4,direct_rows=1",
                                 "direct_radius=4,direct_rows=5,vec_w=8,vec_h=2"},
                                {"direct_radius=4,direct_rows=5,vec_w=8,vec_h=2"})) {
    test::retune(device, shape);
    for (int r : test::sweep<int>({1, 2, 4}, {2}))
      for (const char* border : test::kBorders) {
        INFO(std::string(shape), " r=", r, " ", std::string(border));
        const std::string spec = "gaussian:r=" + std::to_string(r) + ":border=" + border;
        test::check_device_matches(device, spec, test::random_image(101, 67, 3, false, unsigned(r)),
                                   0.0);
        test::check_device_matches(device, spec, test::random_image(7, 5, 1, false, unsigned(r)),
                                   0.0);
        test::check_device_matches(device, spec, test::random_image(1, 1, 2, false, 3), 0.0);
        test::check_device_matches(device, spec, test::random_image(2, 300, 1, false, 4), 0.0);
      }
    test::check_device_matches(device, "box:r=2:border=reflect", test::random_image(33, 9, 1), 0.0);
    test::check_device_matches(device, "sep:h=1,2,1:v=1,4,6,4,-1,2,3:offset=0.25",
                               test::random_image(1023, 517, 1), 0.0);
    test::check_device_matches(device, "sep:h=1,4,-6,4,1,2,3,5,7:v=1,2,1:border=reflect",
                               test::random_image(161, 33, 2), 0.0);
  }
}

TEST_CASE("the direct kernel runs up to direct_radius, before the fused kernel") {
  Device gpu(test::gpu_info(), default_cache_dir());
  test::retune(gpu, "direct_radius=2,fused_radius=7");
  CHECK(test::launched_kernels(gpu, "gaussian:r=2") == "gaussian_direct");
  CHECK(test::launched_kernels(gpu, "sep:h=1,2,1:v=1,2,3,4,5") == "sep_direct");
  CHECK(test::launched_kernels(gpu, "gaussian:r=3") == "gaussian_fused");
  CHECK(test::launched_kernels(gpu, "sep:h=1,2,1:v=1,2,3,4,5,6,7") == "sep_fused");
  if (test::device().tuning().vec > 0) {  // CPUs run the vector kernels whatever it says
    Device host(test::device().info(), default_cache_dir());
    test::retune(host, "direct_radius=2");
    CHECK(test::launched_kernels(host, "gaussian:r=2") == "gaussian_rows_vec gaussian_cols_vec");
  }
}

TEST_CASE("the two passes with their weights compiled in equal the reference bit for bit" *
          doctest::test_suite("sweeps")) {
  Device device(test::gpu_info(), default_cache_dir());
  // Tiled and sliding passes, both from r=1; fused_radius 0 so every radius runs two passes.
  test::retune(device, "inline_weights=1,fused_radius=0,rows_slide=8,cols_slide=16");
  for (int r : test::sweep<int>({1, 3, 8, 16, 40}, {3, 16}))
    for (const char* border : test::kBorders) {
      INFO("r=", r, " ", border);
      test::check_device_matches(device, "gaussian:r=" + std::to_string(r) + ":border=" + border,
                                 test::random_image(101, 67, 2, false, unsigned(r)), 0.0);
    }
  // Weights that are not a gaussian's: negative, tiny, rx != ry, with an offset.
  test::check_device_matches(device, "sep:h=-1,2e-7,3.5:v=1,-4,6,-4,1:offset=0.25",
                             test::random_image(1023, 517, 1), 0.0);
}

TEST_CASE("the fused kernel runs up to fused_radius, on devices without the vector kernels") {
  DeviceInfo info = test::gpu_info();
  Device gpu(info, default_cache_dir());
  test::retune(gpu, "fused_radius=7");
  CHECK(test::launched_kernels(gpu, "gaussian:r=7") == "gaussian_fused");
  CHECK(test::launched_kernels(gpu, "gaussian:r=8") == "gaussian_rows gaussian_cols");
  CHECK(test::launched_kernels(gpu, "sep:h=1,2,1:v=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17") ==
        "sep_rows sep_cols");
  // Local memory too small for the tile and the rows-pass rows: the two passes.
  DeviceInfo small = info;
  small.local_memory = 2 * 1024;
  Device tiny(small, default_cache_dir());
  test::retune(tiny, "fused_radius=7,direct_radius=0");  // NVIDIA's row runs r=2 direct
  CHECK(test::launched_kernels(tiny, "gaussian:r=2") == "gaussian_rows gaussian_cols");
  // CPUs run the vector kernels whatever fused_radius says.
  if (test::device().tuning().vec > 0) {
    Device host(test::device().info(), default_cache_dir());
    test::retune(host, "fused_radius=7");
    CHECK(test::launched_kernels(host, "gaussian:r=2") == "gaussian_rows_vec gaussian_cols_vec");
  }
}
