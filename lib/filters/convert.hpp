// Moving images onto and off the device (converting samples there), and luminance.
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

// The two conversions on buffers the caller owns (a streaming executor reuses them): samples
// as stored in `staging`, `image`'s rows; and `image`'s rows `rows` into `staging`.
void enqueue_to_planar(Device& device, const cl::Buffer& staging, PixelType type,
                       const DeviceImage& image);
void enqueue_from_planar(Device& device, const DeviceImage& image, Span rows, PixelType type,
                         cl::Buffer& staging);

// Luminance weights: Rec.601 for integer data, Rec.709 for float (scene-linear) data.
struct LumaWeights {
  float r, g, b;
};
LumaWeights luma_weights(PixelType source);

// One colour channel of luminance (plus alpha). Images with one colour channel pass unchanged;
// other counts than 1 or 3 are a Usage error naming the filter.
Image to_gray(const Image& in, LumaWeights weights, const std::string& filter);
DeviceImage to_gray(Device& device, const DeviceImage& in, LumaWeights weights,
                    const std::string& filter);

// What a filter with gray=1 works on: the luminance (weights chosen by the image's source
// type), else the image itself.
Image gray_if(bool gray, const Image& in, const std::string& filter);
DeviceImage gray_if(bool gray, Device& device, const DeviceImage& in, const std::string& filter);

}  // namespace halo
