// OIDN's U-Net: the layers an archive describes, its receptive field, and the reference of
// every layer kind. The device side is in denoise_net_device.cpp.
#include "net/denoise_net.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/paths.hpp"
#include "core/settings.hpp"

namespace halo {

extern const char* const kDenoiseWeightSums;  // scripts/denoise-weights.sha256, built in

namespace {

namespace fs = std::filesystem;

// The layers of OIDN's U-Net without their weights: the encoder's convolutions per level (the
// last one of each is pooled), the bottleneck's, and the decoder's from the deepest level up
// (the first one of each reads the level below upsampled, with the encoder's pooled tensor of
// its level, or the input, concatenated after it). The _large networks have two convolutions at
// each encoder level and three at the last decoder level.
std::vector<NetLayer> structure(bool large) {
  std::vector<std::vector<std::string>> encoder, decoder;
  if (large) {
    for (int l = 1; l <= 4; ++l)
      encoder.push_back({fmt::format("enc_conv{}a", l), fmt::format("enc_conv{}b", l)});
  } else {
    encoder = {{"enc_conv0", "enc_conv1"}, {"enc_conv2"}, {"enc_conv3"}, {"enc_conv4"}};
  }
  for (int l = 4; l >= 1; --l)
    decoder.push_back({fmt::format("dec_conv{}a", l), fmt::format("dec_conv{}b", l)});
  decoder.back().push_back(large ? "dec_conv1c" : "dec_conv0");

  std::vector<NetLayer> layers;
  std::vector<int> pooled;  // each encoder level's pooled tensor
  int level = 0;
  const auto add = [&](const std::string& name) {
    NetLayer l;
    l.name = name;
    l.level = level;
    l.src = layers.empty() ? NetLayer::kInput : int(layers.size()) - 1;
    layers.push_back(std::move(l));
  };
  for (const auto& names : encoder) {
    for (const auto& name : names) add(name);
    layers.back().pool = true;
    pooled.push_back(int(layers.size()) - 1);
    ++level;
  }
  add("enc_conv5a");
  add("enc_conv5b");
  for (const auto& names : decoder) {
    --level;
    add(names.front());
    layers.back().upsample = true;
    layers.back().skip = level == 0 ? NetLayer::kInput : pooled[level - 1];
    for (std::size_t i = 1; i < names.size(); ++i) add(names[i]);
  }
  layers.back().relu = false;
  return layers;
}

const Tensor& tensor(const TensorMap& tensors, const std::string& name, const std::string& what) {
  const auto it = tensors.find(name);
  if (it == tensors.end())
    throw Error(ErrorKind::BadData,
                what + ": not a network halo knows: it has no tensor '" + name + "'");
  return it->second;
}

void load_weights(NetLayer& layer, const TensorMap& tensors, const std::string& what) {
  const Tensor& w = tensor(tensors, layer.name + ".weight", what);
  const Tensor& b = tensor(tensors, layer.name + ".bias", what);
  if (w.layout != "oihw" || w.dims.size() != 4 || w.dims[2] != 3 || w.dims[3] != 3)
    throw Error(ErrorKind::BadData, what + ": " + layer.name + ".weight is not a 3x3 convolution");
  if (b.dims.size() != 1 || b.dims[0] != w.dims[0])
    throw Error(ErrorKind::BadData, what + ": " + layer.name +
                                        ".bias does not match its weights' " +
                                        std::to_string(w.dims[0]) + " outputs");
  layer.out = w.dims[0];
  layer.in = w.dims[1];
  layer.weight = w.values;
  layer.bias = b.values;
}

// The input positions (level-0 coordinates) that output pixel p depends on: intervals carried
// back from the last layer through every convolution (one pixel each side at its level),
// pooling (a pooled pixel covers two) and upsampling (two pixels share one source).
int radius_at(const std::vector<NetLayer>& layers, int p) {
  struct Interval {
    long lo = 1L << 40, hi = -(1L << 40);
    bool empty() const { return lo > hi; }
    void add(long a, long b) { lo = std::min(lo, a), hi = std::max(hi, b); }
  };
  std::vector<Interval> need(layers.size());
  Interval input;
  need.back().add(p, p);
  for (int i = int(layers.size()) - 1; i >= 0; --i) {
    const NetLayer& l = layers[i];
    Interval n = need[i];
    if (n.empty()) continue;
    if (l.pool) n = {2 * n.lo, 2 * n.hi + 1};
    n = {n.lo - 1, n.hi + 1};
    const auto feed = [&](int t, Interval v) {
      Interval& into = t == NetLayer::kInput ? input : need[t];
      into.add(v.lo, v.hi);
    };
    // A floor division: positions can be negative (beyond the tile's first row).
    const auto half = [](long v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); };
    feed(l.src, l.upsample ? Interval{half(n.lo), half(n.hi)} : n);
    if (l.skip != NetLayer::kNone) feed(l.skip, n);
  }
  return int(std::max(p - input.lo, input.hi - p));
}

}  // namespace

static int radius(const std::vector<NetLayer>& layers) {
  int r = 0;
  for (int p = 0; p < DenoiseNet::kAlignment; ++p) r = std::max(r, radius_at(layers, p));
  return r;
}

DenoiseNet::DenoiseNet(const TensorMap& tensors, const std::string& what)
    : layers_(structure(tensors.count("enc_conv1a.weight") > 0)) {
  for (auto& l : layers_) load_weights(l, tensors, what);
  // Each layer must read what the ones before it write.
  const auto channels = [&](int t) {
    return t == NetLayer::kInput ? input_channels() : layers_[t].out;
  };
  for (std::size_t i = 1; i < layers_.size(); ++i) {
    const NetLayer& l = layers_[i];
    const int reads = channels(l.src) + (l.skip == NetLayer::kNone ? 0 : channels(l.skip));
    if (l.in != reads)
      throw Error(ErrorKind::BadData, fmt::format("{}: {} takes {} channels, the layers before "
                                                  "it give {}",
                                                  what, l.name, l.in, reads));
  }
  if (output_channels() != 3)
    throw Error(ErrorKind::BadData,
                fmt::format("{}: the network gives {} channels, not 3", what, output_channels()));
  radius_ = radius(layers_);
}

int DenoiseNet::receptive_radius(bool large) {
  return radius(structure(large));
}

double DenoiseNet::macs_per_pixel() const {
  double macs = 0;
  for (const auto& l : layers_) macs += 9.0 * l.in * l.out / double(1 << (2 * l.level));
  return macs;
}

int DenoiseNet::last_use(int t) const {
  int last = t;
  for (int i = 0; i < int(layers_.size()); ++i)
    if (layers_[i].src == t || layers_[i].skip == t) last = i;
  return last;
}

double DenoiseNet::floats_per_pixel() const {
  const auto size = [&](int t) {
    if (t == NetLayer::kInput) return double(input_channels());
    const NetLayer& l = layers_[t];
    return double(l.out) / double(1 << (2 * (l.level + (l.pool ? 1 : 0))));
  };
  double peak = 0;
  std::set<int> live = {NetLayer::kInput};
  for (int i = 0; i < int(layers_.size()); ++i) {
    double held = size(i);
    for (int t : live) held += size(t);
    peak = std::max(peak, held);
    live.insert(i);
    for (auto it = live.begin(); it != live.end();)
      it = last_use(*it) <= i && *it != i ? live.erase(it) : std::next(it);
  }
  return peak;
}

Activation upsample2x(const Activation& a) {
  Activation out(a.channels, 2 * a.height, 2 * a.width);
  for (int c = 0; c < a.channels; ++c)
    for (int y = 0; y < out.height; ++y)
      for (int x = 0; x < out.width; ++x) out.at(c, y, x) = a.at(c, y / 2, x / 2);
  return out;
}

Activation concat(const Activation& a, const Activation& b) {
  Activation out(a.channels + b.channels, a.height, a.width);
  std::copy(a.values.begin(), a.values.end(), out.values.begin());
  std::copy(b.values.begin(), b.values.end(), out.values.begin() + a.values.size());
  return out;
}

// Output row by output row, so that the row being summed stays in the cache while every input
// channel's three rows pass by; sums in the order bias, then input channel, row, column of the
// 3x3 window (the device sums in the same order).
Activation conv3x3(const Activation& a, const NetLayer& layer) {
  const int h = a.height, w = a.width;
  Activation out(layer.out, h, w);
  std::vector<float> sum(std::size_t(w) + 2);
  for (int o = 0; o < layer.out; ++o)
    for (int y = 0; y < h; ++y) {
      // sum[1 + x] is output column x; sum[0] and sum[w + 1] catch the taps past the edges.
      std::fill(sum.begin(), sum.end(), layer.bias[o]);
      for (int c = 0; c < layer.in; ++c) {
        const float* k = layer.weight.data() + (std::size_t(o) * layer.in + c) * 9;
        for (int ky = 0; ky < 3; ++ky) {
          const int sy = y + ky - 1;
          if (sy < 0 || sy >= h) continue;
          const float* row = a.plane(c) + std::size_t(sy) * w;
          for (int kx = 0; kx < 3; ++kx) {
            // Output x reads input x + kx - 1: sum[1 + x] += k * row[x + kx - 1], over the
            // inputs that exist.
            const float wk = k[ky * 3 + kx];
            float* s = sum.data() + 2 - kx;
            for (int i = 0; i < w; ++i) s[i] += wk * row[i];
          }
        }
      }
      float* dst = out.plane(o) + std::size_t(y) * w;
      for (int x = 0; x < w; ++x) dst[x] = layer.relu ? std::max(sum[1 + x], 0.0f) : sum[1 + x];
    }
  return out;
}

Activation maxpool2x2(const Activation& a) {
  Activation out(a.channels, a.height / 2, a.width / 2);
  for (int c = 0; c < a.channels; ++c)
    for (int y = 0; y < out.height; ++y)
      for (int x = 0; x < out.width; ++x)
        out.at(c, y, x) =
            std::max(std::max(a.at(c, 2 * y, 2 * x), a.at(c, 2 * y, 2 * x + 1)),
                     std::max(a.at(c, 2 * y + 1, 2 * x), a.at(c, 2 * y + 1, 2 * x + 1)));
  return out;
}

Activation run_reference(const DenoiseNet& net, const Activation& input) {
  const auto& layers = net.layers();
  std::vector<Activation> results(layers.size());
  const auto tensor = [&](int t) -> const Activation& {
    return t == NetLayer::kInput ? input : results[t];
  };
  for (int i = 0; i < int(layers.size()); ++i) {
    const NetLayer& l = layers[i];
    Activation x = l.upsample ? upsample2x(tensor(l.src)) : tensor(l.src);
    if (l.skip != NetLayer::kNone) x = concat(x, tensor(l.skip));
    results[i] = conv3x3(x, l);
    if (l.pool) results[i] = maxpool2x2(results[i]);
    for (int t = 0; t < i; ++t)
      if (net.last_use(t) <= i) results[t] = Activation();
  }
  return std::move(results.back());
}

namespace {

// $HALO_WEIGHTS_PATH (a colon-separated list), then the folder beside the executable
// (PREFIX/bin/halo -> PREFIX/share/halo/weights; build/app/halo -> build/share/halo/weights).
std::vector<fs::path> weights_dirs() {
  std::vector<fs::path> dirs = settings().weights_path;
  if (const fs::path bin = executable_dir(); !bin.empty())
    dirs.push_back(bin.parent_path() / "share/halo/weights");
  return dirs;
}

std::string expected_sha256(const std::string& file) {
  std::istringstream table(kDenoiseWeightSums);
  for (std::string sum, name; table >> sum >> name;)
    if (name == file) return sum;
  return "";
}

std::string sha256_hex(const std::vector<char>& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr))
    throw Error(ErrorKind::Internal, "SHA-256 failed");
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

// OIDN's largest weights are 7.7 MB; a file past 256 MiB is not one (a 3 GB file was read
// whole before "not a .tza", /dev/zero forever).
constexpr std::size_t kMaxWeightsBytes = std::size_t(256) << 20;

std::vector<char> read_bytes(const fs::path& path) {
  const std::string bytes = read_small_file(path.string(), kMaxWeightsBytes, "weights file");
  return std::vector<char>(bytes.begin(), bytes.end());
}

// A network by OIDN's name (rt_hdr_alb_nrm: found in weights_dirs() and checked against its
// SHA-256) or a .tza file's path (read as it is).
}  // namespace

std::shared_ptr<const DenoiseNet> DenoiseNet::load(const std::string& name) {
  const bool file = name.find('/') != std::string::npos || name.ends_with(".tza");
  fs::path path = name;
  if (!file) {
    const std::vector<fs::path> dirs = weights_dirs();
    std::string looked;
    for (const auto& dir : dirs) {
      std::error_code ec;
      if (fs::is_regular_file(dir / (name + ".tza"), ec)) {
        path = dir / (name + ".tza");
        break;
      }
      looked += (looked.empty() ? "" : ", ") + dir.string();
    }
    if (path == name)
      throw Error(ErrorKind::NoInput,
                  "denoise: OIDN's weights " + name + ".tza are not installed (looked in " +
                      looked + "); scripts/fetch-weights fetches them, or give weights=FILE.tza");
  }
  const std::vector<char> bytes = read_bytes(path);
  if (!file) {
    const std::string want = expected_sha256(name + ".tza");
    const std::string got = sha256_hex(bytes);
    if (want.empty()) throw Error(ErrorKind::Usage, "denoise: no network named " + name);
    if (got != want)
      throw Error(ErrorKind::BadData, path.string() + ": not OIDN's " + name + ".tza (SHA-256 " +
                                          got.substr(0, 16) + "..., expected " +
                                          want.substr(0, 16) +
                                          "...); scripts/fetch-weights installs it again");
  }
  const auto* data = reinterpret_cast<const std::byte*>(bytes.data());
  return std::make_shared<DenoiseNet>(parse_tza({data, bytes.size()}, path.string()),
                                      path.string());
}

std::pair<std::string, int> DenoiseNet::installed() {
  for (const auto& dir : weights_dirs()) {
    std::error_code ec;
    if (!fs::is_regular_file(dir / "rt_hdr_alb_nrm.tza", ec)) continue;
    int count = 0;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      count += entry.path().extension() == ".tza";
    return {dir.string(), count};
  }
  return {"", 0};
}

}  // namespace halo
