// OIDN's U-Net on an OpenCL device: one denoise_conv launch per layer (kernels/denoise.cl). On
// GPUs the convolution stages its input in local memory and reads the level below upsampled
// and pools its result itself; on CPUs it reads straight from memory, and upsampling and
// pooling are launches of their own.
#include <fmt/format.h>

#include "filters/denoise_net.hpp"
#include "filters/filter.hpp"

namespace halo {

namespace {

// The launch shape of denoise_conv on a device (Tuning's net_* fields; CPUs: vec).
struct ConvShape {
  bool tiled = true;
  int tile_x = 32, tile_y = 8;  // pixels per work-group (tiled)
  int oc_tile = 32;             // output channels per work-group (tiled) or work-item (vec)
  int oc_item = 8;              // output channels per work-item (tiled)
  int in_step = 8;              // input channels per local-memory stage (tiled)
  int vec = 0;                  // pixels per work-item (vec)
};

ConvShape conv_shape(const Device& device) {
  const Tuning& t = device.tuning();
  if (t.vec > 0) return {.tiled = false, .oc_tile = t.net_oc_item, .in_step = 1, .vec = t.vec};
  return {.tiled = true,
          .tile_x = t.net_tile_x,
          .tile_y = t.net_tile_y,
          .oc_tile = t.net_oc_tile,
          .oc_item = t.net_oc_item,
          .in_step = t.net_in_step};
}

// The layer's weights in the order denoise_conv reads them (see kernels/denoise.cl).
std::vector<float> packed_weights(const NetLayer& l, const ConvShape& s) {
  const int tiles = ceil_div(l.out, s.oc_tile);
  const int in_padded = ceil_div(l.in, s.in_step) * s.in_step;
  std::vector<float> packed(std::size_t(tiles) * in_padded * 9 * s.oc_tile, 0.0f);
  for (int o = 0; o < l.out; ++o)
    for (int c = 0; c < l.in; ++c)
      for (int k = 0; k < 9; ++k)
        packed[((std::size_t(o / s.oc_tile) * in_padded + c) * 9 + k) * s.oc_tile +
               o % s.oc_tile] = l.weight[(std::size_t(o) * l.in + c) * 9 + k];
  return packed;
}

std::vector<float> packed_bias(const NetLayer& l, const ConvShape& s) {
  std::vector<float> packed(std::size_t(ceil_div(l.out, s.oc_tile)) * s.oc_tile, 0.0f);
  std::copy(l.bias.begin(), l.bias.end(), packed.begin());
  return packed;
}

DeviceTensor tensor(Device& device, int channels, int height, int width, const std::string& what) {
  DeviceTensor t{{}, channels, height, width};
  t.buffer = device.buffer(std::size_t(channels) * height * width * sizeof(float), what);
  return t;
}

std::size_t bytes_of(const DeviceTensor& t) {
  return std::size_t(t.channels) * t.height * t.width * sizeof(float);
}

// A kernel of kernels/denoise.cl that runs over every (x, y, channel) of `out`'s shape.
void launch_per_sample(Device& device, const std::string& name, const DeviceTensor& in,
                       DeviceTensor& out, const std::string& label) {
  auto k = device.kernel("denoise.cl", name, {});
  const bool up = name == "denoise_upsample";
  set_args(k, in.buffer, out.buffer, in.height, in.width);
  device.launch(k, label, cl::NDRange(out.width, out.height, out.channels), cl::NDRange(16, 4, 1),
                bytes_of(in) + bytes_of(out));
  (void)up;
}

// One layer: its convolution reading `src` (upsampled when the layer says) and `skip`.
DeviceTensor conv_layer(Device& device, const NetLayer& l, const ConvShape& s,
                        const DeviceTensor& src, const DeviceTensor* skip) {
  const int h = l.upsample ? 2 * src.height : src.height;
  const int w = l.upsample ? 2 * src.width : src.width;
  DeviceTensor in = src;
  if (l.upsample && !s.tiled) {
    in = tensor(device, src.channels, h, w, l.name + " upsampled");
    launch_per_sample(device, "denoise_upsample", src, in, l.name + " upsample");
  }
  const bool fused_pool = l.pool && s.tiled;
  DeviceTensor out = tensor(device, l.out, fused_pool ? h / 2 : h, fused_pool ? w / 2 : w, l.name);
  Defines defines = {{s.tiled ? "CONV_TILED" : "CONV_VEC", "1"},
                     {"RELU", l.relu ? "1" : "0"},
                     {"UPSAMPLE", l.upsample && s.tiled ? "1" : "0"},
                     {"POOL", fused_pool ? "1" : "0"},
                     {"OC_TILE", std::to_string(s.oc_tile)},
                     {"IN_STEP", std::to_string(s.in_step)}};
  if (s.tiled) {
    defines.push_back({"TILE_X", std::to_string(s.tile_x)});
    defines.push_back({"TILE_Y", std::to_string(s.tile_y)});
    defines.push_back({"OC_ITEM", std::to_string(s.oc_item)});
  } else {
    defines.push_back({"VEC", std::to_string(s.vec)});
  }
  auto k = device.kernel("denoise.cl", "denoise_conv", defines);
  const cl::Buffer weights = device.constants(packed_weights(l, s), l.name + " weights");
  const cl::Buffer bias = device.constants(packed_bias(l, s), l.name + " bias");
  const cl::Buffer& skip_buffer = skip ? skip->buffer : src.buffer;  // unread without a skip
  set_args(k, in.buffer, src.channels, skip_buffer, weights, bias, out.buffer, l.in, l.out, h, w);
  const int tiles = ceil_div(l.out, s.oc_tile);
  const std::size_t bytes = std::size_t(l.in) * h * w * sizeof(float) + bytes_of(out);
  if (s.tiled) {
    const int lx = s.tile_x / 2, ly = s.tile_y / 2, lc = s.oc_tile / s.oc_item;
    device.launch(k, l.name,
                  cl::NDRange(std::size_t(ceil_div(w, s.tile_x)) * lx,
                              std::size_t(ceil_div(h, s.tile_y)) * ly, std::size_t(tiles) * lc),
                  cl::NDRange(lx, ly, lc), bytes);
    return out;
  }
  // One work-item a work-group: PoCL runs each as one call, its vectors as they are (larger
  // groups measured slower).
  device.launch(k, l.name, cl::NDRange(tiles, ceil_div(w, s.vec), h), cl::NDRange(1, 1, 1),
                bytes);
  if (!l.pool) return out;
  DeviceTensor pooled = tensor(device, l.out, h / 2, w / 2, l.name + " pooled");
  launch_per_sample(device, "denoise_pool", out, pooled, l.name + " pool");
  return pooled;
}

}  // namespace

DeviceTensor run_device(Device& device, const DenoiseNet& net, const DeviceTensor& input) {
  const ConvShape shape = conv_shape(device);
  const auto& layers = net.layers();
  std::vector<DeviceTensor> results(layers.size());
  const auto tensor_of = [&](int t) -> const DeviceTensor& {
    return t == NetLayer::kInput ? input : results[t];
  };
  for (int i = 0; i < int(layers.size()); ++i) {
    const NetLayer& l = layers[i];
    results[i] = conv_layer(device, l, shape, tensor_of(l.src),
                            l.skip == NetLayer::kNone ? nullptr : &tensor_of(l.skip));
    for (int t = 0; t < i; ++t)
      if (net.last_use(t) <= i) results[t] = DeviceTensor();
  }
  return std::move(results.back());
}

}  // namespace halo
