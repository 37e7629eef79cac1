// Host side of kernels/convert.cl and the CPU reference of luminance.
#include "filters/convert.hpp"

#include "cl/tuning.hpp"
#include "core/error.hpp"
#include "filters/filter.hpp"

namespace halo {

namespace {

Defines sample_defines(PixelType type, int channels) {
  const char* sample = type == PixelType::u8    ? "uchar"
                       : type == PixelType::u16 ? "ushort"
                                                : "float";
  const char* max_code = type == PixelType::u8    ? "255.0f"
                         : type == PixelType::u16 ? "65535.0f"
                                                  : "1.0f";
  return {{"SAMPLE", sample},
          {"CHANNELS", std::to_string(channels)},
          {"QUANTIZE", type == PixelType::f32 ? "0" : "1"},
          {"MAX_CODE", max_code}};
}

const cl::NDRange kGroup2D(16, 16);

// The per-pixel conversion kernel, or on CPUs (tuning vec > 0) its VEC-pixels-per-work-item
// form.
struct Launch {
  std::string name;
  cl::NDRange global, local;
  int vec = 0;
  Defines defines(PixelType type, int channels) const {
    Defines d = sample_defines(type, channels);
    if (vec) d.emplace_back("VEC", std::to_string(vec));
    return d;
  }
};

Launch launch_for(const Device& device, int width, int height, const std::string& kernel) {
  const Tuning t = tuning_for(device.info());
  if (t.vec == 0) return {kernel, cl::NDRange(width, height), kGroup2D, 0};
  return {kernel + "_vec", cl::NDRange(std::size_t((width + t.vec - 1) / t.vec), height),
          cl::NDRange(t.vec_w, t.vec_h), t.vec};
}

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

DeviceImage upload(Device& device, const PixelBuffer& pixels) {
  return upload(device, pixels, {0, pixels.height}, pixels.height);
}

DeviceImage upload(Device& device, const PixelBuffer& pixels, Span span, int full_height) {
  const std::size_t bytes = pixels.bytes.size();
  cl::Buffer staging = device.buffer(bytes, "upload");
  device.write(staging, pixels.bytes.data(), bytes, "upload");
  DeviceImage image = device.image(pixels.width, pixels.height, pixels.channels, pixels.alpha);
  image.y0 = span.first;
  image.full_height = full_height;
  image.source = pixels.type;
  enqueue_to_planar(device, staging, pixels.type, image);
  return image;
}

void enqueue_to_planar(Device& device, const cl::Buffer& staging, PixelType type,
                       const DeviceImage& image) {
  const Launch l = launch_for(device, image.width, image.height, "convert_to_planar");
  auto kernel = device.kernel("convert.cl", l.name, l.defines(type, image.channels));
  set_args(kernel, staging, image.buffer, image.width, image.height, image.pitch, unit_scale(type));
  const std::size_t samples = std::size_t(image.width) * image.height * image.channels;
  device.launch(kernel, "convert_to_planar", l.global, l.local,
                samples * (sample_size(type) + sizeof(float)));
}

void enqueue_from_planar(Device& device, const DeviceImage& image, Span rows, PixelType type,
                         cl::Buffer& staging) {
  const Launch l = launch_for(device, image.width, rows.count(), "convert_from_planar");
  auto kernel = device.kernel("convert.cl", l.name, l.defines(type, image.channels));
  set_args(kernel, image.buffer, staging, image.width, image.pitch, image.height,
           rows.first - image.y0, rows.count());
  const std::size_t samples = std::size_t(image.width) * rows.count() * image.channels;
  device.launch(kernel, "convert_from_planar", l.global, l.local,
                samples * (sample_size(type) + sizeof(float)));
}

PixelBuffer download(Device& device, const DeviceImage& image, PixelType type,
                     std::pmr::memory_resource* memory) {
  return download(device, image, type, image.span(), memory);
}

PixelBuffer download(Device& device, const DeviceImage& image, PixelType type, Span rows,
                     std::pmr::memory_resource* memory) {
  PixelBuffer pixels(image.width, rows.count(), image.channels, type, image.alpha, memory);
  cl::Buffer staging = device.buffer(pixels.bytes.size(), "download");
  enqueue_from_planar(device, image, rows, type, staging);
  device.read(staging, pixels.bytes.data(), pixels.bytes.size(), "download");
  return pixels;
}

Image download_image(Device& device, const DeviceImage& image) {
  Image out(image.width, image.span(), image.full_height, image.channels, image.alpha);
  out.set_source(image.source);
  device.read(image.buffer, out.data().data(), image.bytes(), "download");
  return out;
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
  device.launch(kernel, "to_gray", cl::NDRange(in.width, in.height), kGroup2D,
                4 * sizeof(float) * std::size_t(in.width) * in.height);
  copy_alpha(device, in, out);
  return out;
}

Image gray_if(bool gray, const Image& in, const std::string& filter) {
  return gray ? to_gray(in, luma_weights(in.source()), filter) : in;
}

DeviceImage gray_if(bool gray, Device& device, const DeviceImage& in, const std::string& filter) {
  return gray ? to_gray(device, in, luma_weights(in.source), filter) : in;
}

}  // namespace halo
