// Luminance: what filters with gray=1 work on.
#pragma once

#include "cl/device.hpp"
#include "core/image.hpp"

namespace halo {

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
// type), kept in `luminance`, else the image itself (not a copy: a strip's worth of memory).
const Image& gray_if(bool gray, const Image& in, Image& luminance, const std::string& filter);
DeviceImage gray_if(bool gray, Device& device, const DeviceImage& in, const std::string& filter);

}  // namespace halo
