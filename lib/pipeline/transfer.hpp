// Moving images onto and off the device, converting samples there (lib/pipeline: the executor,
// the tuner and benchmarks move images; filters work on what is already there).
#pragma once

#include "cl/device.hpp"
#include "core/image.hpp"

namespace halo {

// Uploads samples as stored (8-bit stays 8-bit on the bus) and widens them on the device.
DeviceImage upload(Device& device, const PixelBuffer& pixels);
// A strip: `pixels` holds the image rows `span` of an image `full_height` rows tall.
DeviceImage upload(Device& device, const PixelBuffer& pixels, Span span, int full_height);
// Quantises on the device and reads back samples of the given type: every row the image holds,
// or the image rows `rows` among them.
// memory: where the samples go (nullptr: the heap); page-locked memory downloads faster.
PixelBuffer download(Device& device, const DeviceImage& image, PixelType type,
                     std::pmr::memory_resource* memory = nullptr);
PixelBuffer download(Device& device, const DeviceImage& image, PixelType type, Span rows,
                     std::pmr::memory_resource* memory = nullptr);
// Reads back the planar float32 channels as they are (for verification), strip rows included.
Image download_image(Device& device, const DeviceImage& image);

// A buffer for samples as stored, on their way to or from the device; kept by a caller that
// moves many strips (a streaming executor) and grown when a strip needs more.
struct Staging {
  cl::Buffer buffer;
  std::size_t bytes = 0;
  cl::Buffer& at_least(Device& device, std::size_t size, const std::string& what);
};

// The two conversions into and out of a planar image the caller owns: the samples of `pixels`
// into `image`'s rows, and `image`'s rows `rows` into `out` (sized for them). On GPUs the
// samples cross the bus as stored, through `staging`, and kernels convert them; CPU devices
// share the host's memory, so host code converts in the mapped buffer (core/planar_rows.cpp).
void fill_planar(Device& device, const PixelBuffer& pixels, const DeviceImage& image,
                 Staging& staging);
void read_planar(Device& device, const DeviceImage& image, Span rows, PixelBuffer& out,
                 Staging& staging);

}  // namespace halo
