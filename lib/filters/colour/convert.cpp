// Luminance: the host side of kernels/convert.cl's to_gray and its CPU reference.
#include "filters/colour/convert.hpp"

#include "cl/groups.hpp"
#include "core/error.hpp"
#include "filters/filter.hpp"

namespace halo {

namespace {

void check_gray_input(int color_channels, const std::string& filter) {
  if (color_channels != 1 && color_channels != 3)
    throw Error(ErrorKind::Usage, "filter '" + filter +
                                      "': gray needs 1 or 3 colour channels, "
                                      "the image has " +
                                      std::to_string(color_channels));
}

}  // namespace

LumaWeights luma_weights(PixelType source) {
  if (source == PixelType::f32) return {0.2126f, 0.7152f, 0.0722f};
  return {0.299f, 0.587f, 0.114f};
}

Image to_gray(const Image& in, LumaWeights w, const std::string& filter) {
  check_gray_input(in.color_channels(), filter);
  if (in.color_channels() == 1) return in;
  Image out = in.like(in.alpha() ? 2 : 1, in.alpha());
  for (int y = 0; y < in.height(); ++y) {
    const float *r = in.row(0, y), *g = in.row(1, y), *b = in.row(2, y);
    float* dst = out.row(0, y);
    for (int x = 0; x < in.width(); ++x) {
      float v = w.r * r[x];
      v = v + w.g * g[x];
      v = v + w.b * b[x];
      dst[x] = v;
    }
  }
  copy_alpha(in, out);
  return out;
}

DeviceImage to_gray(Device& device, const DeviceImage& in, LumaWeights w,
                    const std::string& filter) {
  check_gray_input(in.color_channels(), filter);
  if (in.color_channels() == 1) return in;
  DeviceImage out = device.image_like(in, in.alpha ? 2 : 1, in.alpha);
  auto kernel = device.kernel("convert.cl", "to_gray", {});
  set_args(kernel, in.buffer, out.buffer, in.width, in.height, in.pitch, w.r, w.g, w.b);
  device.launch(kernel, "to_gray", cl::NDRange(in.width, in.height), groups::square,
                4 * sizeof(float) * std::size_t(in.width) * in.height);
  copy_alpha(device, in, out);
  return out;
}

const Image& gray_if(bool gray, const Image& in, Image& luminance, const std::string& filter) {
  if (!gray) return in;
  luminance = to_gray(in, luma_weights(in.source()), filter);
  return luminance;
}

DeviceImage gray_if(bool gray, Device& device, const DeviceImage& in, const std::string& filter) {
  return gray ? to_gray(device, in, luma_weights(in.source), filter) : in;
}

}  // namespace halo
