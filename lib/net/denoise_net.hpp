// The network behind the denoise filter: the U-Net of Intel Open Image Denoise (OIDN) with the
// weights it publishes (lib/net/tza.hpp), built from whatever an archive holds (the
// default, _small and _large variants differ in widths and in one or two convolutions per level),
// run layer by layer on the plain C++ reference or enqueued on an OpenCL device
// (kernels/denoise.cl).
//
// Every layer is a 3x3 convolution (zero padding, bias) with ReLU, except the last; 2x2 max
// pooling follows the encoder's last convolution of each level; the decoder's first convolution
// of a level reads the level below 2x upsampled (nearest) with the encoder's skip tensor of its
// level concatenated after it. Activations are planar float32, channel after channel.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "cl/device.hpp"
#include "net/tza.hpp"

namespace halo {

// One convolution and what follows it.
struct NetLayer {
  static constexpr int kInput = -1;  // `src`/`skip`: the network's input tensor
  static constexpr int kNone = -2;   // `skip`: nothing concatenated

  std::string name;       // the weights' name: enc_conv0, dec_conv4a, ...
  int in = 0, out = 0;    // channels read (src's, then skip's) and written
  int src = kInput;       // the tensor read: kInput or an earlier layer's index
  bool upsample = false;  // src is read 2x upsampled
  int skip = kNone;       // concatenated after src: kInput, kNone or an earlier layer's index
  bool relu = true;
  bool pool = false;          // the result is 2x2 max-pooled
  int level = 0;              // the convolution's resolution: the input's / 2^level
  std::vector<float> weight;  // out x in x 3 x 3, as the archive stores it (oihw)
  std::vector<float> bias;    // out
};

class DenoiseNet {
 public:
  // The network an archive describes; Error(BadData) naming `what` when a tensor is missing or
  // its shape does not fit the layers around it.
  DenoiseNet(const TensorMap& tensors, const std::string& what);
  // One of OIDN's networks by name (rt_hdr_alb_nrm: rt_hdr_alb_nrm.tza in $HALO_WEIGHTS_PATH's
  // folders, then PREFIX/share/halo/weights beside the executable, checked against the SHA-256
  // halo was built with), or a .tza file by path, read as it is. Errors name the file and how
  // to get OIDN's (scripts/fetch-weights).
  static std::shared_ptr<const DenoiseNet> load(const std::string& name_or_file);
  // The folder OIDN's networks are found in by name, and how many .tza files it holds; an
  // empty folder when none is installed.
  static std::pair<std::string, int> installed();

  const std::vector<NetLayer>& layers() const { return layers_; }
  int input_channels() const { return layers_.front().in; }
  int output_channels() const { return layers_.back().out; }
  // Tile sides are multiples of this (the pooling levels).
  static constexpr int kAlignment = 16;
  // Pixels on each side of an output pixel that its value depends on, for tiles whose first
  // row and column are multiples of kAlignment (pooling windows then fall where they fall on the
  // whole image): a tile that holds them gives the whole image's result there.
  int receptive_radius() const { return radius_; }
  // The same for any network of OIDN's default (and _small) or _large structure: the widths
  // do not change it.
  static int receptive_radius(bool large);
  // Multiply-adds per input pixel (one tile pixel at level 0).
  double macs_per_pixel() const;
  // Floats per tile pixel held at once while the network runs (its largest set of live tensors).
  double floats_per_pixel() const;
  // The index of the last layer reading tensor t (kInput or a layer), for freeing it.
  int last_use(int t) const;

 private:
  std::vector<NetLayer> layers_;
  int radius_ = 0;
};

// A tensor of activations on the host: `channels` planes of height x width floats.
struct Activation {
  int channels = 0, height = 0, width = 0;
  std::vector<float> values;

  Activation() = default;
  Activation(int c, int h, int w)
      : channels(c), height(h), width(w), values(std::size_t(c) * h * w) {}
  float* plane(int c) { return values.data() + std::size_t(c) * height * width; }
  const float* plane(int c) const { return values.data() + std::size_t(c) * height * width; }
  float& at(int c, int y, int x) { return plane(c)[std::size_t(y) * width + x]; }
  float at(int c, int y, int x) const { return plane(c)[std::size_t(y) * width + x]; }
};

// The reference of each layer kind, as plain loops.
Activation upsample2x(const Activation& a);
Activation concat(const Activation& a, const Activation& b);
Activation conv3x3(const Activation& a, const NetLayer& layer);  // with the layer's ReLU
Activation maxpool2x2(const Activation& a);

// The network on the reference: `input` (input_channels() planes, sides multiples of
// kAlignment) to output_channels() planes of the same size.
Activation run_reference(const DenoiseNet& net, const Activation& input);

// How a device multiplies: float32 everywhere, or on the tensor cores (NVIDIA from Ampere on;
// float32 elsewhere) with float32 sums: TF32 products, or half products with the tensors
// between the layers stored in half.
enum class NetPrecision { fp32, tf32, fp16 };

// A tensor on a device, planar like Activation: float planes, or (`pairs`, between the layers
// of precision=fp16) planes of channel pairs, two halves in a 32-bit word (kernels/denoise.cl).
struct DeviceTensor {
  cl::Buffer buffer;
  int channels = 0, height = 0, width = 0;
  bool pairs = false;
};

// How a layer's weights are stored for denoise_conv: floats (PoCL's vector and tiled forms),
// floats rounded to TF32, or pairs of halves (fp16 on the tensor cores).
enum class WeightForm { float32, tf32, half_pairs };

// What runs of networks on one device keep from call to call: each layer's weights packed and
// uploaded once, and tensors whose buffers are reused (a tile's network allocates the same
// sizes as the last tile's).
class NetBuffers {
 public:
  // The layer's weights and bias as denoise_conv reads them for `oc_tile` output channels a
  // work-group and `in_step` input channels a stage, in `form` (half pairs: the source's `src_c`
  // channels and the skip's, each rounded up to even).
  const std::pair<cl::Buffer, cl::Buffer>& weights(Device& device, const NetLayer& layer,
                                                   int oc_tile, int in_step, WeightForm form,
                                                   int src_c);
  DeviceTensor tensor(Device& device, int channels, int height, int width, const std::string& what,
                      bool pairs = false);
  // A tensor no longer needed: its buffer serves a later tensor of at most its size.
  void release(DeviceTensor& t);

 private:
  std::map<std::tuple<const NetLayer*, int, int, WeightForm>, std::pair<cl::Buffer, cl::Buffer>>
      weights_;
  std::multimap<std::size_t, cl::Buffer> free_;  // by size in bytes
};

// The network on `device`: every layer one launch of kernels/denoise.cl's denoise_conv (and
// on CPUs one each for upsampling and pooling). The result is a tensor of `buffers`.
DeviceTensor run_device(Device& device, const DenoiseNet& net, const DeviceTensor& input,
                        NetBuffers& buffers, NetPrecision precision = NetPrecision::fp32);

}  // namespace halo
