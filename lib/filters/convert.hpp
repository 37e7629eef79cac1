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
// share the host's memory, so host code converts in the mapped buffer (convert_host.cpp).
void fill_planar(Device& device, const PixelBuffer& pixels, const DeviceImage& image,
                 Staging& staging);
void read_planar(Device& device, const DeviceImage& image, Span rows, PixelBuffer& out,
                 Staging& staging);

// The host code of kernels/convert.cl, same bits: samples into planes of `pixels.height` rows
// `pitch` floats apart; and rows row0.. of planes of `rows` rows into `out`'s rows.
void convert_to_planar(const PixelBuffer& pixels, float* planes, int pitch);
void convert_from_planar(const float* planes, int pitch, int rows, int row0, PixelBuffer& out);

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
