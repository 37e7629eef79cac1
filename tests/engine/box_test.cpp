// box: the reference against a brute-force mean, and the device against the reference.
#include <doctest/doctest.h>

#include "filters/registry.hpp"
#include "separable_support.hpp"

using namespace halo;

TEST_CASE("box reference equals a brute-force mean over the square") {
  const Image in = test::random_image(23, 17, 1, false, 3);
  for (int r : {1, 2, 4, 9, 17, 30}) {  // equal weights, then running sums
    const Image out = make_stage("box:r=" + std::to_string(r) + ":border=clamp")->reference(in);
    for (int y = 0; y < in.height(); ++y)
      for (int x = 0; x < in.width(); ++x) {
        double sum = 0;
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx)
            sum += in.at(std::clamp(x + dx, 0, in.width() - 1),
                         std::clamp(y + dy, 0, in.height() - 1), 0);
        CHECK(out.at(x, y, 0) == doctest::Approx(sum / ((2 * r + 1) * (2 * r + 1))).epsilon(1e-5));
      }
  }
}

TEST_CASE("box of the seed's box9 by hand: a 9x9 mean of a single bright pixel") {
  Image impulse(9, 9, 1);
  impulse.at(4, 4, 0) = 81.0f;
  const Image out = make_stage("box:r=4:border=zero")->reference(impulse);
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 9; ++x) CHECK(out.at(x, y, 0) == doctest::Approx(1.0f).epsilon(1e-6));
}

TEST_CASE("device matches reference: box radius 1..20 and large, every border" *
          doctest::test_suite("sweeps")) {
  // Equal weights up to r=16, running sums from 17: the loop takes each side of the switch.
  for (int r : test::sweep<int>(
           {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, {1, 16, 17}))
    for (const char* border : test::kBorders)
      test::check_device_matches("box:r=" + std::to_string(r) + ":border=" + border,
                                 test::random_image(53, 29, 1, false, unsigned(r)));
  for (int r : test::sweep<int>({31, 64, 128}, {64}))
    for (const char* border : test::kBorders)
      test::check_device_matches("box:r=" + std::to_string(r) + ":border=" + border,
                                 test::random_image(257, 131, 3));
  test::check_device_matches("box:r=4", test::random_image(1023, 517, 3));
}

TEST_CASE("devices without double precision run equal weights, agreeing to 1e-5" *
          doctest::test_suite("sweeps")) {
  DeviceInfo no_fp64 = test::device().info();
  no_fp64.fp64 = false;
  Device device(no_fp64, default_cache_dir());
  for (int r : test::sweep<int>({17, 20, 40}, {20}))
    for (const char* border : test::kBorders)
      test::check_device_matches(device, "box:r=" + std::to_string(r) + ":border=" + border,
                                 test::random_image(45, 23, 3, false, unsigned(r)));
}

TEST_CASE("box_walk (both passes at once) equals the reference bit for bit" *
          doctest::test_suite("sweeps")) {
  Device device(test::gpu_info(), default_cache_dir());
  // Widths of one and several chunks a row; steps of 1, 4 and 8 rows; bands shorter than a
  // step, than the radius and than the image, and longer; 2r + 1 taps against the steps.
  for (const char* shape :
       test::sweep<const char*>({"box_walk=64,box_walk_steps=8,box_walk_band=256",
                                 "box_walk=16,box_walk_steps=4,box_walk_band=7",
                                 "box_walk=8,box_walk_steps=8,box_walk_band=1",
                                 "box_walk=32,box_walk_steps=1,box_walk_band=600"},
                                {"box_walk=16,box_walk_steps=4,box_walk_band=7"})) {
    test::retune(device, shape);
    for (int r : test::sweep<int>({17, 20, 33}, {20}))
      for (const char* border : test::kBorders) {
        INFO(shape, " r=", r, " ", border);
        const std::string spec = "box:r=" + std::to_string(r) + ":border=" + border;
        test::check_device_matches(device, spec, test::random_image(101, 67, 3, false, unsigned(r)),
                                   0.0);
        test::check_device_matches(device, spec, test::random_image(7, 5, 1, false, unsigned(r)),
                                   0.0);
      }
    test::check_device_matches(device, "box:r=17", test::random_image(1, 1, 2), 0.0);
    test::check_device_matches(device, "box:r=64:border=reflect", test::random_image(2, 300, 1),
                               0.0);
    test::check_device_matches(device, "box:r=32:border=clamp", test::random_image(1023, 517, 1),
                               0.0);
    // Alpha passes through; gray=1 walks the one grey plane.
    test::check_device_matches(device, "box:r=18", test::random_image(45, 38, 4, true), 0.0);
    test::check_device_matches(device, "box:r=18:gray=1", test::random_image(45, 38, 4, true), 0.0);
  }
}

TEST_CASE("box: a NaN or infinity reaches exactly the outputs whose window holds it") {
  // Running sums would carry them on after they leave the window; each kernel sums the window
  // afresh while its sum is not finite, as the reference does.
  Image in = test::random_image(97, 83, 1, false, 5);
  in.at(48, 40, 0) = std::numeric_limits<float>::quiet_NaN();
  in.at(5, 70, 0) = std::numeric_limits<float>::infinity();  // near the left and bottom edges
  Device walk(test::gpu_info(), default_cache_dir());
  test::retune(walk, "box_walk=16,box_walk_steps=4,box_walk_band=7");
  for (const int r : {17, 20}) {
    const std::string spec = "box:r=" + std::to_string(r) + ":border=zero";
    const Image out = make_stage(spec)->reference(in);
    int nan = 0, inf = 0;
    for (int y = 0; y < out.height(); ++y)
      for (int x = 0; x < out.width(); ++x) {
        nan += std::isnan(out.at(x, y, 0));
        inf += std::isinf(out.at(x, y, 0));
      }
    const int side = 2 * r + 1;
    CHECK(nan == side * side);
    CHECK(inf == (std::min(70 + r, 82) - (70 - r) + 1) * (5 + r + 1));  // cut by two edges
    test::check_device_matches(test::device(), spec, in, 0.0);
    test::check_device_matches(walk, spec, in, 0.0);
  }
}

TEST_CASE("box_walk runs where box_walk is set and its local memory fits") {
  DeviceInfo info = test::gpu_info();
  info.local_memory = 48 * 1024;
  Device gpu(info, default_cache_dir());
  test::retune(gpu, "box_walk=128,box_walk_steps=8");
  CHECK(test::launched_kernels(gpu, "box:r=32") == "box_walk");
  CHECK(test::launched_kernels(gpu, "box:r=100") == "box_walk");           // at 32 columns a group
  CHECK(test::launched_kernels(gpu, "box:r=400") == "box_rows box_cols");  // not even at 8
  // r=16 sums equal weights (the separable kernels), a different arithmetic.
  CHECK(test::launched_kernels(gpu, "box:r=16").find("box_walk") == std::string::npos);
  test::retune(gpu, "box_walk=0");
  CHECK(test::launched_kernels(gpu, "box:r=32") == "box_rows box_cols");
}
