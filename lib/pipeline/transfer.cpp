// Moving images onto and off the device: kernels/convert.cl's two sample conversions on GPUs,
// host code in mapped buffers on CPU devices (core/planar_rows.cpp).
#include "pipeline/transfer.hpp"

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

}  // namespace

DeviceImage upload(Device& device, const PixelBuffer& pixels) {
  return upload(device, pixels, {0, pixels.height}, pixels.height);
}

DeviceImage upload(Device& device, const PixelBuffer& pixels, Span span, int full_height) {
  DeviceImage image = device.image(pixels.width, pixels.height, pixels.channels, pixels.alpha);
  image.y0 = span.first;
  image.full_height = full_height;
  image.source = pixels.type;
  Staging staging;
  fill_planar(device, pixels, image, staging);
  return image;
}

cl::Buffer& Staging::at_least(Device& device, std::size_t size, const std::string& what) {
  if (size > bytes) buffer = device.buffer(size, what), bytes = size;
  return buffer;
}

void fill_planar(Device& device, const PixelBuffer& pixels, const DeviceImage& image,
                 Staging& staging) {
  const std::size_t samples = pixels.sample_count();
  const std::size_t moved = samples * (sample_size(pixels.type) + sizeof(float));
  if (device.shares_host_memory()) {
    device.on_host(image.buffer, image.bytes(), CL_MAP_WRITE_INVALIDATE_REGION,
                   "convert_to_planar (host)", moved, [&](void* planes) {
                     convert_to_planar(pixels, static_cast<float*>(planes), image.pitch);
                   });
    return;
  }
  const std::size_t bytes = pixels.bytes.size();
  cl::Buffer& buffer = staging.at_least(device, bytes, "upload");
  device.write(buffer, pixels.bytes.data(), bytes, "upload");
  auto kernel =
      device.kernel("convert.cl", "convert_to_planar", sample_defines(pixels.type, image.channels));
  set_args(kernel, buffer, image.buffer, image.width, image.height, image.pitch,
           unit_scale(pixels.type));
  device.launch(kernel, "convert_to_planar", cl::NDRange(image.width, image.height), kGroup2D,
                moved);
}

void read_planar(Device& device, const DeviceImage& image, Span rows, PixelBuffer& out,
                 Staging& staging) {
  const std::size_t moved = out.sample_count() * (sample_size(out.type) + sizeof(float));
  const int row0 = rows.first - image.y0;
  if (device.shares_host_memory()) {
    device.on_host(image.buffer, image.bytes(), CL_MAP_READ, "convert_from_planar (host)", moved,
                   [&](void* planes) {
                     convert_from_planar(static_cast<const float*>(planes), image.pitch,
                                         image.height, row0, out);
                   });
    return;
  }
  const std::size_t bytes = out.bytes.size();
  cl::Buffer& buffer = staging.at_least(device, bytes, "download");
  auto kernel =
      device.kernel("convert.cl", "convert_from_planar", sample_defines(out.type, image.channels));
  set_args(kernel, image.buffer, buffer, image.width, image.pitch, image.height, row0,
           rows.count());
  device.launch(kernel, "convert_from_planar", cl::NDRange(image.width, rows.count()), kGroup2D,
                moved);
  device.read(buffer, out.bytes.data(), bytes, "download");
}

PixelBuffer download(Device& device, const DeviceImage& image, PixelType type,
                     std::pmr::memory_resource* memory) {
  return download(device, image, type, image.span(), memory);
}

PixelBuffer download(Device& device, const DeviceImage& image, PixelType type, Span rows,
                     std::pmr::memory_resource* memory) {
  PixelBuffer pixels(image.width, rows.count(), image.channels, type, image.alpha, memory);
  Staging staging;
  read_planar(device, image, rows, pixels, staging);
  return pixels;
}

Image download_image(Device& device, const DeviceImage& image) {
  Image out(image.width, image.span(), image.full_height, image.channels, image.alpha);
  out.set_source(image.source);
  device.read(image.buffer, out.data().data(), image.bytes(), "download");
  return out;
}

}  // namespace halo
