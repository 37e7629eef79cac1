// OIDN's U-Net on an OpenCL device: one denoise_conv launch per layer (kernels/denoise.cl). On
// GPUs the convolution stages its input in local memory and reads the level below upsampled
// and pools its result itself; on CPUs it reads straight from memory, and upsampling and
// pooling are launches of their own.
#include <fmt/format.h>

// Imath's conversion without its table, which lives in libImath.
#define IMATH_HALF_NO_LOOKUP_TABLE
#include <Imath/half.h>

#include <bit>
#include <cstdint>

#include "cl/groups.hpp"
#include "cl/tuning.hpp"
#include "core/image.hpp"
#include "net/denoise_net.hpp"

namespace halo {

namespace {

// The launch shape of denoise_conv for one layer (Tuning's net_* fields; CPUs: vec).
struct ConvShape {
  bool tiled = true;
  bool mma = false;             // on the tensor cores (tiled too)
  int tile_x = 32, tile_y = 8;  // pixels per work-group (tiled)
  int oc_tile = 32;             // output channels per work-group (tiled) or work-item (vec)
  int oc_item = 8;              // output channels per work-item (tiled)
  int in_step = 8;              // input channels per local-memory stage (tiled)
  int vec = 0;                  // pixels per work-item (vec)
};

ConvShape conv_shape(const Device& device, const NetLayer& l, NetPrecision precision) {
  const Tuning& t = device.tuning();
  if (device.profile().vector_kernels)
    return {.tiled = false, .oc_tile = t.net_oc_item, .in_step = 1, .vec = t.vec};
  if (precision != NetPrecision::fp32 && device.profile().tensor_cores)
    return {.tiled = true,
            .mma = true,
            .tile_x = t.net_mma_x,
            .tile_y = t.net_mma_y,
            .oc_tile = l.out <= 8 ? 8 : t.net_mma_oc,
            .in_step = precision == NetPrecision::fp16 ? 16 : 8};
  ConvShape s{.tiled = true,
              .tile_x = t.net_tile_x,
              .tile_y = t.net_tile_y,
              .oc_tile = t.net_oc_tile,
              .oc_item = t.net_oc_item,
              .in_step = t.net_in_step};
  // A layer of few outputs (the last one's 3) takes one work-item's worth of channels, not a
  // tile of mostly zero weights; a few inputs past whole stages (the first layer's 9) go in
  // one stage.
  if (l.out <= s.oc_item) s.oc_tile = s.oc_item;
  if (l.in % s.in_step && l.in < 2 * s.in_step) s.in_step = l.in;
  return s;
}

// f rounded to TF32 (10 mantissa bits; ties away from zero, as cvt.rna.tf32.f32).
float to_tf32(float f) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0x1000u) & 0xffffe000u;
  return std::bit_cast<float>(bits);
}

// The layer's weights in the order denoise_conv reads them (see kernels/denoise.cl), as 32-bit
// words: a float each (TF32-rounded for tf32), or two halves each (half_pairs), input channel c
// at position c of the source's channels rounded up to even, then the skip's.
std::vector<std::uint32_t> packed_weights(const NetLayer& l, int oc_tile, int in_step,
                                          WeightForm form, int src_c) {
  const bool halves = form == WeightForm::half_pairs;
  const int src_even = halves ? ceil_div(src_c, 2) * 2 : src_c;
  const auto position = [&](int c) { return c < src_c ? c : src_even + (c - src_c); };
  const int positions = position(l.in - 1) + 1;
  const int per_word = halves ? 2 : 1;
  const int words = ceil_div(positions, per_word);
  const int words_padded = ceil_div(words, in_step / per_word) * (in_step / per_word);
  const int tiles = ceil_div(l.out, oc_tile);
  std::vector<std::uint32_t> packed(std::size_t(tiles) * words_padded * 9 * oc_tile, 0);
  for (int o = 0; o < l.out; ++o)
    for (int c = 0; c < l.in; ++c)
      for (int k = 0; k < 9; ++k) {
        const float v = l.weight[(std::size_t(o) * l.in + c) * 9 + k];
        const int at = position(c);
        std::uint32_t& word =
            packed[((std::size_t(o / oc_tile) * words_padded + at / per_word) * 9 + k) * oc_tile +
                   o % oc_tile];
        if (halves)
          word |= std::uint32_t(imath_float_to_half(v)) << (16 * (at % 2));
        else
          word = std::bit_cast<std::uint32_t>(form == WeightForm::tf32 ? to_tf32(v) : v);
      }
  return packed;
}

std::vector<float> packed_bias(const NetLayer& l, int oc_tile) {
  std::vector<float> packed(std::size_t(ceil_div(l.out, oc_tile)) * oc_tile, 0.0f);
  std::copy(l.bias.begin(), l.bias.end(), packed.begin());
  return packed;
}

std::size_t bytes_of(const DeviceTensor& t) {
  const std::size_t planes = t.pairs ? ceil_div(t.channels, 2) : t.channels;
  return planes * t.height * t.width * sizeof(float);
}

// denoise_upsample or denoise_pool over every (x, y, channel) of `out`.
void launch_per_sample(Device& device, const std::string& name, const DeviceTensor& in,
                       DeviceTensor& out, const std::string& label) {
  auto k = device.kernel("denoise.cl", name, {});
  set_args(k, in.buffer, out.buffer, in.height, in.width);
  device.launch(k, label, cl::NDRange(out.width, out.height, out.channels), groups::net,
                bytes_of(in) + bytes_of(out));
}

// One layer: its convolution reading `src` (upsampled when the layer says) and `skip`. The
// network's `last` layer writes float planes whatever the precision.
DeviceTensor conv_layer(Device& device, NetBuffers& buffers, const NetLayer& l,
                        const DeviceTensor& src, const DeviceTensor* skip, NetPrecision precision,
                        bool last) {
  const ConvShape s = conv_shape(device, l, precision);
  const int h = l.upsample ? 2 * src.height : src.height;
  const int w = l.upsample ? 2 * src.width : src.width;
  DeviceTensor upsampled;
  if (l.upsample && !s.tiled) {
    upsampled = buffers.tensor(device, src.channels, h, w, l.name + " upsampled");
    launch_per_sample(device, "denoise_upsample", src, upsampled, l.name + " upsample");
  }
  const DeviceTensor& in = upsampled.channels ? upsampled : src;
  const bool fused_pool = l.pool && s.tiled;
  const WeightForm form = !s.mma                            ? WeightForm::float32
                          : precision == NetPrecision::fp16 ? WeightForm::half_pairs
                                                            : WeightForm::tf32;
  const bool halves = form == WeightForm::half_pairs;
  DeviceTensor out = buffers.tensor(device, l.out, fused_pool ? h / 2 : h, fused_pool ? w / 2 : w,
                                    l.name, halves && !last);
  Defines defines = {{s.mma     ? "NET_MMA"
                      : s.tiled ? "NET_TILED"
                                : "NET_VEC",
                      "1"},
                     {"RELU", l.relu ? "1" : "0"},
                     {"UPSAMPLE", l.upsample && s.tiled ? "1" : "0"},
                     {"POOL", fused_pool ? "1" : "0"},
                     knob_define(&Tuning::net_oc_tile, s.oc_tile),
                     knob_define(&Tuning::net_in_step, s.in_step)};
  if (halves)
    defines.insert(defines.end(), {{"NET_F16", "1"},
                                   {"SRC_PAIRS", in.pairs ? "1" : "0"},
                                   {"SKIP_PAIRS", skip && skip->pairs ? "1" : "0"},
                                   {"DST_PAIRS", out.pairs ? "1" : "0"}});
  if (s.tiled) {
    defines.push_back(knob_define(&Tuning::net_tile_x, s.tile_x));
    defines.push_back(knob_define(&Tuning::net_tile_y, s.tile_y));
    if (!s.mma) defines.push_back(knob_define(&Tuning::net_oc_item, s.oc_item));
  } else {
    defines.push_back(knob_define(&Tuning::vec, s.vec));
  }
  auto k = device.kernel("denoise.cl", "denoise_conv", defines);
  const auto& [weights, bias] =
      buffers.weights(device, l, s.oc_tile, s.in_step, form, src.channels);
  const cl::Buffer& skip_buffer = skip ? skip->buffer : src.buffer;  // unread without a skip
  set_args(k, in.buffer, src.channels, skip_buffer, weights, bias, out.buffer, l.in, l.out, h, w);
  const int tiles = ceil_div(l.out, s.oc_tile);
  const std::size_t bytes =
      std::size_t(l.in) * h * w * (halves ? sizeof(float) / 2 : sizeof(float)) + bytes_of(out);
  if (s.mma) {
    const int threads = 32 * (s.tile_x / 16) * (s.tile_y / 2);  // a warp per 16 x 2 pixels
    device.launch(
        k, l.name,
        cl::NDRange(std::size_t(ceil_div(w, s.tile_x)) * threads, ceil_div(h, s.tile_y), tiles),
        cl::NDRange(threads, 1, 1), bytes);
    return out;
  }
  if (s.tiled) {
    const int lx = s.tile_x / 2, ly = s.tile_y / 2, lc = s.oc_tile / s.oc_item;
    device.launch(k, l.name,
                  cl::NDRange(std::size_t(ceil_div(w, s.tile_x)) * lx,
                              std::size_t(ceil_div(h, s.tile_y)) * ly, std::size_t(tiles) * lc),
                  cl::NDRange(lx, ly, lc), bytes);
    return out;
  }
  // One work-item a work-group: PoCL runs each as one call, its vectors as they are (larger
  // groups measured slower); output channel tiles first, so that neighbouring work-groups
  // share their input rows in the cache.
  device.launch(k, l.name, cl::NDRange(tiles, ceil_div(w, s.vec), h), groups::single, bytes);
  buffers.release(upsampled);
  if (!l.pool) return out;
  DeviceTensor pooled = buffers.tensor(device, l.out, h / 2, w / 2, l.name + " pooled");
  launch_per_sample(device, "denoise_pool", out, pooled, l.name + " pool");
  buffers.release(out);
  return pooled;
}

}  // namespace

const std::pair<cl::Buffer, cl::Buffer>& NetBuffers::weights(Device& device, const NetLayer& l,
                                                             int oc_tile, int in_step,
                                                             WeightForm form, int src_c) {
  auto& slot = weights_[{&l, oc_tile, in_step, form}];
  if (!slot.first()) {
    const auto upload = [&](const auto& v, const std::string& what) {
      const std::size_t bytes = v.size() * sizeof(v[0]);
      cl::Buffer b = device.buffer(bytes, what);
      device.write(b, v.data(), bytes, "upload");
      return b;
    };
    slot = {upload(packed_weights(l, oc_tile, in_step, form, src_c), l.name + " weights"),
            upload(packed_bias(l, oc_tile), l.name + " bias")};
  }
  return slot;
}

DeviceTensor NetBuffers::tensor(Device& device, int channels, int height, int width,
                                const std::string& what, bool pairs) {
  DeviceTensor t{{}, channels, height, width, pairs};
  const std::size_t bytes = bytes_of(t);
  // The smallest free buffer that holds it, unless that wastes more than half of it.
  const auto it = free_.lower_bound(bytes);
  if (it != free_.end() && it->first <= 2 * bytes) {
    t.buffer = it->second;
    free_.erase(it);
  } else {
    t.buffer = device.buffer(bytes, what);
  }
  return t;
}

void NetBuffers::release(DeviceTensor& t) {
  if (t.buffer()) free_.emplace(bytes_of(t), std::move(t.buffer));
  t = DeviceTensor();
}

DeviceTensor run_device(Device& device, const DenoiseNet& net, const DeviceTensor& input,
                        NetBuffers& buffers, NetPrecision precision) {
  const auto& layers = net.layers();
  std::vector<DeviceTensor> results(layers.size());
  const auto tensor_of = [&](int t) -> const DeviceTensor& {
    return t == NetLayer::kInput ? input : results[t];
  };
  for (int i = 0; i < int(layers.size()); ++i) {
    const NetLayer& l = layers[i];
    results[i] = conv_layer(device, buffers, l, tensor_of(l.src),
                            l.skip == NetLayer::kNone ? nullptr : &tensor_of(l.skip), precision,
                            i + 1 == int(layers.size()));
    for (int t = 0; t < i; ++t)
      if (net.last_use(t) <= i) buffers.release(results[t]);
  }
  return std::move(results.back());
}

}  // namespace halo
