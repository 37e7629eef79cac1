// Test helpers: seeded random images and the shared OpenCL device.
#pragma once

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cl/device.hpp"
#include "cl/tuning.hpp"
#include "core/image.hpp"

namespace halo::test {

// The exhaustive sweeps (every radius, shape, size, border and strip height) run under ctest's
// label `long` (HALO_TEST_LONG=1; .ci/run runs it); the contributor's loop, README's ctest, runs
// a representative part of each: the kernels it picks and its edge cases, in minutes.
inline bool long_tests() {
  static const bool on = [] {
    const char* v = std::getenv("HALO_TEST_LONG");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

// `all` under the long label, else `some` (of the same kind).
template <class T>
std::vector<T> sweep(std::vector<T> all, std::vector<T> some) {
  return long_tests() ? all : some;
}

// Sample (x, y, c) of `pixels` as a float: the stored code or value, not scaled.
inline float stored(const PixelBuffer& pixels, int x, int y, int c) {
  const std::size_t i = (std::size_t(y) * pixels.width + x) * pixels.channels + c;
  switch (pixels.type) {
    case PixelType::u8:
      return pixels.samples<std::uint8_t>()[i];
    case PixelType::u16:
      return pixels.samples<std::uint16_t>()[i];
    case PixelType::f32:
      return pixels.samples<float>()[i];
  }
  return 0.0f;
}

// Values in [lo, hi), reproducible by seed; never constant, so tiles and borders all matter.
inline Image random_image(int width, int height, int channels, bool alpha = false,
                          unsigned seed = 7, float lo = 0.0f, float hi = 1.0f) {
  Image image(width, height, channels, alpha);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int c = 0; c < channels; ++c)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) image.at(x, y, c) = dist(rng);
  return image;
}

inline PixelBuffer random_pixels(int width, int height, int channels, PixelType type,
                                 unsigned seed = 11) {
  return halo::random_pixels(width, height, channels, type, seed);
}

// The device the tests run on: HALO_DEVICE if set, else auto (PoCL on machines without a GPU).
inline Device& device() {
  static Device device = [] {
    const char* choice = std::getenv("HALO_DEVICE");
    return Device(select_device(choice && *choice ? choice : "auto"), default_cache_dir());
  }();
  return device;
}

// The test device's description typed as a GPU without a tuning row: a device made from it
// runs the tiled kernels GPUs run, not the CPU vector ones, so they are checked on any machine.
inline DeviceInfo gpu_info() {
  DeviceInfo info = device().info();
  info.type = "gpu";
  return info;
}

// One such device, shared.
inline Device& tiled_device() {
  static Device tiled(gpu_info(), default_cache_dir());
  return tiled;
}

// Applies "name=value,..." over a device's current launch shapes: a path the table does not
// take on this machine.
inline void retune(Device& device, const std::string& settings) {
  Tuning t = device.tuning();
  apply_settings(t, settings, "test");
  device.set_tuning(t, "test");
}

// A 1-channel image from rows of values, for hand-computed cases.
inline Image from_rows(const std::vector<std::vector<float>>& rows) {
  Image image(int(rows[0].size()), int(rows.size()), 1);
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) image.at(x, y, 0) = rows[y][x];
  return image;
}

}  // namespace halo::test
