// bilateral: edge-stopping separable Gaussian for path-traced renders, guided by normals and
// depth (discontinuity flags), with albedo demodulation; self-guided (a range kernel on the
// image's own colour) when there are no guides. Device side: kernels/bilateral.cl.
#include <cmath>
#include <numbers>

#include "core/error.hpp"
#include "filters/guides.hpp"
#include "filters/separable.hpp"

namespace halo {

namespace {

constexpr int kTile = 16;  // bilateral_flags work-group side

struct BilateralParams {
  int r = 4;
  std::vector<float> weights;  // w[0] centre .. w[r]: the Gaussian's half from the centre
  float cos_angle = 0, dz = 0;
  double sigma_r = -1;  // < 0: auto
  float albedo_min = 0.02f;
  Border border = Border::clamp;
};

// What one run does, from the parameters and the guides it was given.
struct Plan {
  bool use_flags = false, demod = false;
  float range_inv = 0;  // 1 / (2 sigma_r^2), 0 for no range kernel
};

// The flags of every pixel, with the image's pitch.
std::vector<std::uint8_t> flags_reference(const Guides& g, const BilateralParams& p, int pitch) {
  const int w = g.any().width(), h = g.any().height();
  const bool hn = g.has_normal(), hd = g.has_depth();
  std::vector<std::uint8_t> flags(std::size_t(pitch) * h, 0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const Surface s = surface_at(g, x, y);
      std::uint8_t f = 0;
      if (x > 0 && is_edge(s, surface_at(g, x - 1, y), p.cos_angle, p.dz, hn, hd)) f |= kFlagLeft;
      if (x < w - 1 && is_edge(s, surface_at(g, x + 1, y), p.cos_angle, p.dz, hn, hd))
        f |= kFlagRight;
      if (y > 0 && is_edge(s, surface_at(g, x, y - 1), p.cos_angle, p.dz, hn, hd)) f |= kFlagTop;
      if (y < h - 1 && is_edge(s, surface_at(g, x, y + 1), p.cos_angle, p.dz, hn, hd))
        f |= kFlagBottom;
      flags[std::size_t(y) * pitch + x] = f;
    }
  return flags;
}

// One pass of kernels/bilateral.cl's bilateral_pass, in the same operation order.
Image pass_reference(const Image& src, const std::vector<std::uint8_t>& flags, const Guides* g,
                     const BilateralParams& p, const Plan& plan, bool horizontal, bool demod,
                     bool remod) {
  const int w = src.width(), h = src.height(), channels = src.color_channels();
  Image dst(w, h, channels);
  const std::uint8_t back = horizontal ? kFlagLeft : kFlagTop;
  const std::uint8_t ahead = horizontal ? kFlagRight : kFlagBottom;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float centre[kMaxGuidedChannels], sum[kMaxGuidedChannels];
      float wsum = p.weights[0];
      for (int c = 0; c < channels; ++c) {
        centre[c] = colour_at(src, g, x, y, c, demod, p.albedo_min);
        sum[c] = p.weights[0] * centre[c];
      }
      const int n = horizontal ? w : h, i0 = horizontal ? x : y;
      for (const auto& [dir, stop] : {std::pair{-1, back}, std::pair{1, ahead}}) {
        for (int i = 1; i <= p.r; ++i) {
          const int from = i0 + dir * (i - 1);
          if (plan.use_flags && from >= 0 && from < n) {
            const std::size_t at = horizontal ? std::size_t(y) * src.pitch() + from
                                              : std::size_t(from) * src.pitch() + x;
            if (flags[at] & stop) break;
          }
          const int q = border_index(i0 + dir * i, n, p.border);
          if (q < 0) break;
          const int qx = horizontal ? q : x, qy = horizontal ? y : q;
          float v[kMaxGuidedChannels];
          const float d2 = read_tap(src, g, qx, qy, demod, p.albedo_min, centre, v);
          const float wt =
              plan.range_inv > 0.0f ? p.weights[i] * std::exp(-d2 * plan.range_inv) : p.weights[i];
          accumulate(wt, v, channels, sum, wsum);
        }
      }
      store_normalised(dst, g, x, y, sum, wsum, remod, p.albedo_min);
    }
  return dst;
}

// The flags as an image for --write-flags: one channel, value = bits / 15 (8-bit code 17 x
// bits; multiply a float file by 15 for the bits).
Image flags_image(const std::vector<std::uint8_t>& flags, int width, int height) {
  Image img(width, height, 1);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      img.at(x, y, 0) = flags[std::size_t(y) * img.pitch() + x] / 15.0f;
  return img;
}

class BilateralStage : public GuidedStage {
 public:
  BilateralStage(std::string spec, BilateralParams p, GuideSources sources)
      : GuidedStage(std::move(spec)), p_(std::move(p)) {
    sources_ = std::move(sources);
  }

  std::vector<std::string> details() const override {
    const Plan plan = plan_for(3);  // the channel count matters only to its albedo check
    std::vector<std::string> d = {"radius " + std::to_string(p_.r)};
    d.push_back(plan.use_flags
                    ? "edges from " + std::string(guides()->has_normal() ? "normals" : "") +
                          (guides()->has_normal() && guides()->has_depth() ? " and " : "") +
                          (guides()->has_depth() ? "depth" : "")
                    : "no normal or depth guides: self-guided");
    if (plan.demod) d.push_back("albedo demodulation");
    if (plan.range_inv > 0)
      d.push_back("range kernel, sigma_r " + std::to_string(std::sqrt(0.5 / plan.range_inv)));
    if (guides() && !guides()->described.empty()) d.push_back(guides()->described);
    return d;
  }

  Image reference(const Image& in) const override {
    check_size(in.width(), in.height());
    const Plan plan = plan_for(in.color_channels());
    if (plan.use_flags) reference_flags_ = flags_reference(*guides(), p_, in.pitch());
    const Image rows =
        pass_reference(in, reference_flags_, guides(), p_, plan, true, plan.demod, false);
    Image out =
        pass_reference(rows, reference_flags_, guides(), p_, plan, false, false, plan.demod);
    return with_colour(in, out);
  }

  DeviceImage enqueue(Device& device, const DeviceImage& in) const override {
    check_size(in.width, in.height);
    const Plan plan = plan_for(in.color_channels());
    const DeviceGuides& dg = device_guides(device);
    cl::Buffer flags = dg.placeholder;
    const std::size_t plane_bytes = in.plane_size() * sizeof(float);
    if (plan.use_flags) {
      flags = device.buffer(in.plane_size(), "bilateral flags");
      auto k = device.kernel("bilateral.cl", "bilateral_flags", {{"TILE", std::to_string(kTile)}});
      set_args(k, dg.geometry, flags, in.width, in.height, in.pitch, p_.cos_angle, p_.dz,
               int(guides()->has_normal()), int(guides()->has_depth()));
      device.launch(
          k, "bilateral_flags",
          cl::NDRange(ceil_div(in.width, kTile) * kTile, ceil_div(in.height, kTile) * kTile),
          cl::NDRange(kTile, kTile), in.plane_size() * (4 * sizeof(float) + 1));
    }
    const auto weights = device.constants(p_.weights, "bilateral weights");
    const int channels = in.color_channels();
    DeviceImage tmp = device.image(in.width, in.height, channels, false);
    DeviceImage out = device.image(in.width, in.height, in.channels, in.alpha);
    out.source = in.source;
    const std::size_t albedo_bytes = plan.demod ? 3 * plane_bytes : 0;
    for (const bool horizontal : {true, false}) {
      auto k = device.kernel("bilateral.cl", horizontal ? "bilateral_rows" : "bilateral_cols",
                             {{"CHANNELS", std::to_string(channels)}});
      set_args(k, horizontal ? in.buffer : tmp.buffer, horizontal ? tmp.buffer : out.buffer, flags,
               dg.albedo, weights, in.width, in.height, in.pitch, channels, p_.r, int(p_.border),
               int(plan.use_flags), int(plan.demod && horizontal), int(plan.demod && !horizontal),
               p_.albedo_min, plan.range_inv);
      device.launch(
          k, horizontal ? "bilateral_rows" : "bilateral_cols",
          cl::NDRange(ceil_div(in.width, 32) * 32, ceil_div(in.height, 8) * 8), cl::NDRange(32, 8),
          2 * channels * plane_bytes + albedo_bytes + (plan.use_flags ? in.plane_size() : 0));
    }
    copy_alpha(device, in, out);
    device_flags_.clear();
    if (plan.use_flags && keep_flags_) {
      device_flags_.resize(in.plane_size());
      device.read(flags, device_flags_.data(), device_flags_.size(), "bilateral flags");
    }
    return out;
  }

  const Image* flags() const override {
    const auto& bits = !device_flags_.empty() ? device_flags_ : reference_flags_;
    if (bits.empty()) return nullptr;
    // Flags exist only with guides, whose size the image's was checked against.
    flags_image_ = flags_image(bits, guides()->any().width(), guides()->any().height());
    return &flags_image_;
  }

  std::string mismatch() const override {
    if (device_flags_.empty() || reference_flags_.empty()) return "";
    const Image& size = guides()->any();
    const int pitch = size.pitch(), width = size.width();
    std::size_t differing = 0, first = 0;
    for (int y = 0; y < size.height(); ++y)  // the padding beyond the width is never written
      for (std::size_t i = std::size_t(y) * pitch; i < std::size_t(y) * pitch + width; ++i)
        if (device_flags_[i] != reference_flags_[i] && differing++ == 0) first = i;
    if (!differing) return "";
    return std::to_string(differing) + " discontinuity flags differ, first at (" +
           std::to_string(first % pitch) + "," + std::to_string(first / pitch) + "): device " +
           std::to_string(device_flags_[first]) + ", reference " +
           std::to_string(reference_flags_[first]);
  }

 private:
  Plan plan_for(int channels) const {
    Plan plan;
    const Guides* g = guides();
    plan.use_flags = g && g->any_geometry();
    plan.demod = demodulates(channels);
    // Chosen by PSNR on the shared Blender scene (README, scripts/render-psnr.py).
    const double sigma_r = p_.sigma_r >= 0 ? p_.sigma_r : plan.use_flags ? 2 : 0.1;
    plan.range_inv = sigma_r > 0 ? float(1 / (2 * sigma_r * sigma_r)) : 0.0f;
    return plan;
  }

  BilateralParams p_;
  mutable std::vector<std::uint8_t> reference_flags_, device_flags_;
  mutable Image flags_image_;
};

}  // namespace

FilterDef bilateral_filter() {
  std::vector<Param> params = {
      {.name = "r",
       .type = ParamType::Integer,
       .fallback = "4",
       .doc = "radius in pixels of each pass",
       .min = 1,
       .max = 64},
      {.name = "sigma",
       .type = ParamType::Number,
       .fallback = "auto",
       .doc = "spatial standard deviation (auto: r/2)",
       .min = 0.1,
       .max = 256,
       .allow_auto = true},
      {.name = "angle",
       .type = ParamType::Number,
       .fallback = "25",
       .doc = "normals further apart than this many degrees are an edge",
       .min = 0,
       .max = 180},
      {.name = "dz",
       .type = ParamType::Number,
       .fallback = "0.05",
       .doc = "depths differing by more than this fraction of the nearer one are an edge",
       .min = 0,
       .max = 1e6},
      {.name = "sigma_r",
       .type = ParamType::Number,
       .fallback = "auto",
       .doc = "range kernel on colour, exp(-|dc|^2/(2 sigma_r^2)) (auto: 2 with normal or "
              "depth guides, on radiance or colour/albedo; 0.1 without, for [0,1] photos; 0: "
              "off)",
       .min = 0,
       .max = 1e6,
       .allow_auto = true}};
  for (auto& p : guide_params()) params.push_back(std::move(p));
  params.push_back(border_param());
  return {.name = "bilateral",
          .summary =
              "edge-stopping Gaussian for renders: normal/depth discontinuities, albedo "
              "demodulation; self-guided on photos",
          .params = std::move(params),
          .notes = {"flags: 1 left, 2 right, 4 top, 8 bottom (--write-flags); each pass walks "
                    "out from the centre and stops at the first flagged edge, dividing by the "
                    "weights it used",
                    "without normal/depth guides: a separable bilateral with a range kernel "
                    "on the colour",
                    "border=zero leaves taps outside the image out; other borders fetch them "
                    "(the walk is not stopped there)"},
          .example = "bilateral:r=4:angle=25:dz=0.05",
          .make = [](const Args& args) -> std::unique_ptr<Stage> {
            BilateralParams p;
            p.r = args.integer("r");
            const double sigma = args.is_auto("sigma") ? p.r / 2.0 : args.number("sigma");
            const std::vector<float> taps = gaussian_weights(p.r, sigma);
            p.weights.assign(taps.begin() + p.r, taps.end());  // centre, then outwards
            p.cos_angle = float(std::cos(args.number("angle") * std::numbers::pi / 180));
            p.dz = float(args.number("dz"));
            p.sigma_r = args.is_auto("sigma_r") ? -1 : args.number("sigma_r");
            p.albedo_min = float(args.number("albedo_min"));
            p.border = parse_border(args.text("border"));
            return std::make_unique<BilateralStage>(args.spec_text(), std::move(p),
                                                    guide_sources(args));
          }};
}

}  // namespace halo
