// atrous:iters=N: the edge-avoiding à-trous wavelet filter (Dammertz et al. 2010; SVGF's
// normal weight). N passes of a 5x5 B3-spline with holes 2^i: an effective radius of
// 2^(N+1) - 2 pixels at 25 taps per pass. Device side: kernels/atrous.cl.
#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numbers>

#include "cl/groups.hpp"
#include "core/error.hpp"
#include "filters/guided/guides.hpp"
#include "kernels/contract.h"

// One kernel argument, laid out as OpenCL C lays it out: 4-byte members only.
static_assert(sizeof(AtrousPassArgs) == 21 * 4);

namespace halo {

namespace {

constexpr float kSpline[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};

// AtrousParams::sigma_z2 from the parameter sigma_z.
float depth_scale(double sigma_z) {
  return float(sigma_z * std::numbers::ln2);
}

struct AtrousParams {
  int iters = 2;
  bool albedo_filter = true;  // remodulate with remodulation_albedo (guides.hpp)
  double sigma_c = -1;        // the first pass's colour sigma; < 0: auto (AtrousStage::setup)
  double falloff = -1;        // each later pass's sigma_c is the last one's / falloff; < 0: auto
  double brightness = 1;      // the render's scale: auto sigmas are multiplied by it
  float sigma_n = 48, albedo_min = 0.02f;
  // The parameter sigma_z times ln 2: the depth weight as exp2(-|dz| / (sigma_z2 * nearer
  // depth)) is exp(-|dz| / (sigma_z * nearer depth)); exp2 is the cheaper call on a GPU.
  float sigma_z2 = depth_scale(0.02);
  // Outline pixels: where the taps of the pixel's own surface carry less than this share of
  // the spatial weight (an antialiased outline or crease pixel, whose normal blends two
  // surfaces, matches neither), the taps also count with the normal weight max(0, n_p.n_q),
  // blended in by how far the share falls short; 0: off.
  float outline = 0.1f;
  double fireflies = -1;   // the fireflies step's ratio (guides.hpp); < 0: auto
  int sigma_n_whole = 48;  // sigma_n when it is a whole number up to 4096, else -1 (pow)
  Border border = Border::clamp;
};

struct PassSetup {
  bool has_normal = false, has_depth = false, demod = false, remod = false;
  bool outline = false;  // AtrousParams::outline applies (colour passes with normals)
  int step = 1;
  // log2(e) / sigma^2 of the colour weight, taken as exp2(-d^2 * colour_inv) (exp2 is the
  // cheaper call on a GPU); with `split`, pixels with no albedo to divide by (below
  // albedo_min in every channel: metals, black) take radiance_inv instead.
  float colour_inv = float(std::numbers::log2e), radiance_inv = float(std::numbers::log2e);
  bool split = false;
};

// Whether the pixel at (x, y) has no albedo to divide by in any channel: its colour is
// radiance, not colour/albedo (kernels/atrous.cl no_albedo).
bool no_albedo(const Guides& g, int x, int y, float albedo_min) {
  for (int c = 0; c < 3; ++c)
    if (g.albedo.at(x, y, c) >= albedo_min) return false;
  return true;
}

// x^n for a whole n by squaring, in kernels/atrous.cl's order (bit for bit the same there);
// 7 multiplications for the default 128 instead of a general pow.
float whole_power(float x, int n) {
  float result = 1.0f;
  for (; n > 0; n >>= 1) {
    if (n & 1) result *= x;
    x *= x;
  }
  return result;
}

float normal_weight(float dot, const AtrousParams& a) {
  const float d = std::fmax(0.0f, dot);
  return a.sigma_n_whole >= 0 ? whole_power(d, a.sigma_n_whole) : std::pow(d, a.sigma_n);
}

// The geometry weight of tap q for centre p (1 without normal and depth guides), and in
// `relaxed` the same with the normal weight's power 1 (outline pixels).
float geometry_weight(const Surface& p, const Surface& q, const PassSetup& s, const AtrousParams& a,
                      float& relaxed) {
  relaxed = 1.0f;
  if (!s.has_normal && !s.has_depth) return 1.0f;
  const bool gp = is_geometry(p, s.has_normal, s.has_depth);
  const bool gq = is_geometry(q, s.has_normal, s.has_depth);
  if (gp != gq) return relaxed = 0.0f;
  if (!gp) return 1.0f;
  float w = 1.0f;
  if (s.has_normal) {
    const float dot = p.nx * q.nx + p.ny * q.ny + p.nz * q.nz;
    w = normal_weight(dot, a);
    relaxed = std::fmax(0.0f, dot);
  }
  if (s.has_depth && p.z != q.z) {
    const float e =
        std::exp2(-std::fabs(p.z - q.z) / (a.sigma_z2 * std::fmin(std::fabs(p.z), std::fabs(q.z))));
    w *= e;
    relaxed *= e;
  }
  return w;
}

// The taps of one output pixel: the weighted sums, and for outline pixels the share of the
// spatial weight on the pixel's own surface and the sums under the relaxed normal weight.
struct TapSums {
  float sum[kMaxGuidedChannels] = {}, wsum = 0.0f;
  float relaxed[kMaxGuidedChannels] = {}, relaxed_wsum = 0.0f;
  float cover = 0.0f, spread = 0.0f;

  // Blends the relaxed sums in when the own-surface share is under `outline`; kernels/atrous.cl
  // finish_outline does the same operations.
  void finish_outline(int channels, float outline) {
    if (spread <= 0.0f) return;
    const float share = cover / spread;
    if (share >= outline) return;
    const float blend = 1.0f - share / outline;
    for (int c = 0; c < channels; ++c) sum[c] = std::fma(blend, relaxed[c], sum[c]);
    wsum = std::fma(blend, relaxed_wsum, wsum);
  }
};

// One pass of kernels/atrous.cl's atrous_pass over the image rows `rows`, in the same
// operation order.
Image pass_reference(const Image& src, const Guides* g, const AtrousParams& a, const PassSetup& s,
                     Span rows, const Image* remod_albedo = nullptr) {
  const int w = src.width(), y0 = src.y0(), channels = src.color_channels();
  Image dst = src.like(channels, false);
  const bool guided = s.has_normal || s.has_depth;
  const std::vector<int> xs = border_table(w, 2 * s.step, a.border);
  const std::vector<int> ys = row_table(src, rows, 2 * s.step, a.border);
  for (int y = rows.first; y < rows.last; ++y)
    for (int x = 0; x < w; ++x) {
      const int r = y - y0;  // buffer row
      const Surface p = guided ? surface_at(*g, x, r) : Surface{};
      float centre[kMaxGuidedChannels];
      for (int c = 0; c < channels; ++c)
        centre[c] = colour_at(src, g, x, r, c, s.demod, a.albedo_min);
      TapSums t;
      const float colour_inv =
          s.split && no_albedo(*g, x, r, a.albedo_min) ? s.radiance_inv : s.colour_inv;
      for (int j = 0; j < 5; ++j) {
        const int qy = ys[y - rows.first + j * s.step];
        if (qy < 0) continue;
        for (int i = 0; i < 5; ++i) {
          const int qx = xs[x + i * s.step];
          if (qx < 0) continue;
          float v[kMaxGuidedChannels];
          const float d2 = read_tap(src, g, qx, qy, s.demod, a.albedo_min, centre, v);
          const float spatial = kSpline[i] * kSpline[j];
          float wt = spatial * std::exp2(-d2 * colour_inv);
          if (guided) {
            float relaxed;
            const float geometry = geometry_weight(p, surface_at(*g, qx, qy), s, a, relaxed);
            if (s.outline) {
              if (i != 2 || j != 2) {
                t.cover = std::fma(spatial, geometry, t.cover);
                t.spread += spatial;
              }
              accumulate(wt * relaxed, v, channels, t.relaxed, t.relaxed_wsum);
            }
            wt *= geometry;
          }
          accumulate(wt, v, channels, t.sum, t.wsum);
        }
      }
      if (s.outline) t.finish_outline(channels, a.outline);
      store_normalised(dst, s.remod ? remod_albedo : nullptr, x, r, t.sum, t.wsum, a.albedo_min);
    }
  return dst;
}

class AtrousStage : public GuidedStage {
 public:
  AtrousStage(std::string spec, AtrousParams a, GuideSources sources)
      : GuidedStage(std::move(spec), std::move(sources)), a_(a) {}

  // Pass i reads 2 * 2^i rows each side; the fireflies step one more.
  // 5x5 taps a pass.
  StageTraits traits() const override {
    const double taps = 25.0 * a_.iters;
    // On a strip: its input, ping, pong, the result, the albedo over alpha, the smoothed
    // albedo and the clamped fireflies (6 measured), and the one the executor keeps.
    return {.reach = reach_after(-1) + (a_.fireflies != 0 ? 1 : 0),
            .cost = {.reference_ns = 7.9 * taps, .device_ns = 5.6 * taps},
            .memory = {.strip_buffers = 7}};
  }
  std::string whole_image_reason(PixelType) const override {
    return border_whole_image_reason(a_.border);
  }

  std::vector<std::string> details(const StageRun& run) const override {
    std::vector<std::string> d = {std::to_string(a_.iters) + " passes, effective radius " +
                                  std::to_string((2 << a_.iters) - 2)};
    const Guides* g = run.guides;
    d.push_back(g && g->any_geometry()
                    ? std::string("weights on colour") + (g->has_normal() ? ", normals" : "") +
                          (g->has_depth() ? ", depth" : "")
                    : "no normal or depth guides: colour weights only");
    if (g && g->has_normal())
      d.push_back(a_.outline > 0 ? fmt::format("outline pixels (own-surface share under {:g}) "
                                               "also weigh taps by max(0, n_p.n_q)",
                                               a_.outline)
                                 : "outline rule off");
    if (g && g->has_albedo()) d.push_back(demodulation_detail(a_.albedo_filter));
    d.push_back(fireflies_detail(fireflies_ratio(a_.fireflies, g)));
    const PassSetup first = setup(g, 0, g && g->has_albedo() ? 3 : 1);
    const auto sigma = [](float inv) { return std::sqrt(std::numbers::log2e / inv); };
    d.push_back(fmt::format(
        "colour sigma {:g}{} in the first pass, / {:g} each later pass", sigma(first.colour_inv),
        first.split ? fmt::format(" ({:g} where no albedo divides)", sigma(first.radiance_inv))
                    : "",
        falloff(g)));
    if (g && !g->described.empty()) d.push_back(g->described);
    return d;
  }

  Image reference_rows(const Image& in, Span out, StageRun& run) const override {
    check_size(run, in.width(), in.span(), in.full_height());
    const AtrousParams& a = a_;
    const bool demod = demodulates(run.guides, in.color_channels());
    std::optional<Guides> over;  // colour with alpha: the albedo over alpha (guides.hpp)
    if (demod) over = albedo_over_alpha(*run.guides, in);
    const Guides* g = over ? &*over : run.guides;
    const Remodulation remod(g, demod, a.albedo_filter, out, a.border);
    const Fireflies f = fireflies(g, in.color_channels());
    Image current =
        f.ratio > 0 ? clamp_fireflies(in, g, f, first_pass_reads(out, in.full_height())) : in;
    for (int i = 0; i < a.iters; ++i)
      current = pass_reference(current, g, a, setup(g, i, in.color_channels()),
                               pass_rows(i, out, in.full_height()), remod.albedo());
    return with_colour(in, current);
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun& run) const override {
    check_size(run, in.width, in.span(), in.full_height);
    const int channels = in.color_channels();
    const bool demod = demodulates(run.guides, channels);
    const DeviceGuides& shared = device_guides(device, run);
    // Colour with alpha: the albedo over alpha (guides.hpp).
    const DeviceGuides dg = demod ? albedo_over_alpha(device, shared, run.guides, in) : shared;
    const AtrousParams& a = a_;
    DeviceImage ping = device.image_like(in, channels, false);
    DeviceImage pong = device.image_like(in, channels, false);
    DeviceImage result = device.image_like(in, in.channels, in.alpha);
    auto k = device.kernel("atrous.cl", "atrous_pass",
                           {{"CHANNELS", std::to_string(channels)},
                            {"SIGMA_N_WHOLE", std::to_string(a.sigma_n_whole)}});
    const cl::Buffer remod_with =
        remodulation_albedo(device, dg, run.guides, demod, a.albedo_filter, in, out, a.border);
    const Fireflies f = fireflies(run.guides, channels);
    DeviceImage clamped;
    if (f.ratio > 0)
      clamped = clamp_fireflies(device, dg, in, f, first_pass_reads(out, in.full_height));
    const cl::Buffer* src = f.ratio > 0 ? &clamped.buffer : &in.buffer;
    for (int i = 0; i < a_.iters; ++i) {
      const PassSetup s = setup(run.guides, i, channels);
      const Span rows = pass_rows(i, out, in.full_height);
      const cl::Buffer& dst = i == a_.iters - 1 ? result.buffer : i % 2 ? pong.buffer : ping.buffer;
      const AtrousPassArgs args{.channels = channels,
                                .step = s.step,
                                .border = int(a_.border),
                                .has_normal = int(s.has_normal),
                                .has_depth = int(s.has_depth),
                                .split = int(s.split),
                                .demod = int(s.demod),
                                .remod = int(s.remod),
                                .colour_inv = s.colour_inv,
                                .radiance_inv = s.radiance_inv,
                                .sigma_n = a_.sigma_n,
                                .sigma_z = a_.sigma_z2,
                                .albedo_min = a_.albedo_min,
                                .outline = s.outline ? a_.outline : 0.0f};
      set_args(k, *src, dst, dg.geometry, dg.albedo, remod_with, on_strip(args, in, rows));
      const std::size_t row_bytes = std::size_t(in.pitch) * rows.count() * sizeof(float);
      const std::size_t bytes = 2 * channels * row_bytes +
                                (s.has_normal || s.has_depth ? 4 * row_bytes : 0) +
                                (s.demod ? 3 * row_bytes : 0) + (s.remod ? 3 * row_bytes : 0);
      device.launch(k, "atrous_pass", cl::NDRange(in.width, rows.count()), groups::window, bytes);
      src = &dst;
    }
    copy_alpha(device, in, result);
    return result;
  }

 private:
  // Rows the passes after pass i read beyond their own output: 2 * 2^j for each later pass j.
  int reach_after(int i) const {
    int reach = 0;
    for (int j = i + 1; j < a_.iters; ++j) reach += 2 << j;
    return reach;
  }
  // The rows pass i computes for final output rows `out`.
  Span pass_rows(int i, Span out, int height) const { return out.widened(reach_after(i), height); }
  // The rows the first pass reads: what the fireflies step computes.
  Span first_pass_reads(Span out, int height) const { return out.widened(reach_after(-1), height); }
  Fireflies fireflies(const Guides* g, int channels) const {
    return {.ratio = fireflies_ratio(a_.fireflies, g),
            .demod = demodulates(g, channels),
            .albedo_min = a_.albedo_min,
            .border = a_.border};
  }

  // The colour weight's schedule. With normal or depth guides (renders), auto: the first pass
  // sigma 48 on colour/albedo and 6 on radiance (pixels with no albedo to divide by, or no
  // albedo guide): at 4 spp the guides, not the colour, must say what to average first;
  // then / 48 each pass, as the noise left is that much smaller, so a later pass averages
  // only what already agrees and more passes never lose (the fixed sigma of before lost 1.6
  // to 5 dB from 2 to 5 passes). Without guides (photos) the colour is all there is: sigma 8
  // on colour/albedo, else 1, the same in every pass. Chosen on the six renders of
  // tests/data/render (README, "Denoising renders").
  double falloff(const Guides* g) const {
    return a_.falloff >= 0 ? a_.falloff : g && g->any_geometry() ? 48.0 : 1.0;
  }
  PassSetup setup(const Guides* g, int i, int channels) const {
    PassSetup s;
    s.has_normal = g && g->has_normal();
    s.has_depth = g && g->has_depth();
    const bool demod = demodulates(g, channels);
    if (demod) {
      s.demod = i == 0;
      s.remod = i == a_.iters - 1;
    }
    s.step = 1 << i;
    s.outline = s.has_normal && a_.outline > 0;
    const bool guided = s.has_normal || s.has_depth;
    double sigma = a_.sigma_c, radiance = a_.sigma_c;
    if (a_.sigma_c < 0) {
      sigma = (guided ? (demod ? 48 : 6) : (demod ? 8 : 1)) * a_.brightness;
      radiance = guided ? 6 * a_.brightness : sigma;
    }
    const double shrink = std::pow(falloff(g), i);
    // Capped: an infinite weight factor would make exp(-0 * inf) a NaN.
    const auto inverse = [&](double sd) {
      return float(std::min(shrink * shrink / (sd * sd) * std::numbers::log2e, double(FLT_MAX)));
    };
    s.colour_inv = inverse(sigma);
    s.radiance_inv = inverse(radiance);
    s.split = demod && s.radiance_inv != s.colour_inv;
    return s;
  }

  AtrousParams a_;
};

// The smoothing pass of remodulation_albedo: colour weight exp(-|da|^2), normals (power 128),
// depth.
AtrousParams albedo_smoothing(Border border) {
  AtrousParams a;
  a.sigma_n = 128;
  a.sigma_n_whole = 128;
  a.sigma_z2 = depth_scale(0.005);
  a.border = border;
  return a;
}

PassSetup albedo_setup(const Guides& g) {
  PassSetup s;
  s.has_normal = g.has_normal();
  s.has_depth = g.has_depth();
  return s;
}

}  // namespace

Remodulation::Remodulation(const Guides* g, bool demod, bool albedo_filter, Span out,
                           Border border) {
  if (!demod) return;
  guide_ = &g->albedo;
  if (albedo_filter)
    smoothed_ = pass_reference(g->albedo, g, albedo_smoothing(border), albedo_setup(*g), out);
}

cl::Buffer remodulation_albedo(Device& device, const DeviceGuides& dg, const Guides* g, bool demod,
                               bool albedo_filter, const DeviceImage& like, Span rows,
                               Border border) {
  if (!demod || !albedo_filter) return dg.albedo;
  const AtrousParams a = albedo_smoothing(border);
  const PassSetup s = albedo_setup(*g);
  DeviceImage smoothed = device.image_like(like, 3, false);
  auto k = device.kernel("atrous.cl", "atrous_pass",
                         {{"CHANNELS", "3"}, {"SIGMA_N_WHOLE", std::to_string(a.sigma_n_whole)}});
  const AtrousPassArgs args{.channels = 3,
                            .step = s.step,
                            .border = int(a.border),
                            .has_normal = int(s.has_normal),
                            .has_depth = int(s.has_depth),
                            .colour_inv = s.colour_inv,
                            .radiance_inv = s.radiance_inv,
                            .sigma_n = a.sigma_n,
                            .sigma_z = a.sigma_z2,
                            .albedo_min = a.albedo_min};
  set_args(k, dg.albedo, smoothed.buffer, dg.geometry, dg.placeholder, dg.placeholder,
           on_strip(args, like, rows));
  const std::size_t row_bytes = std::size_t(like.pitch) * rows.count() * sizeof(float);
  device.launch(k, "albedo_smoothing", cl::NDRange(like.width, rows.count()), groups::window,
                (6 + 4) * row_bytes);
  return smoothed.buffer;
}

FilterDef atrous_filter() {
  std::vector<Param> params = {
      {.name = "iters",
       .type = ParamType::Integer,
       .fallback = "2",
       .doc = "passes; pass i has holes of 2^i pixels (effective radius 2^(iters+1) - 2)",
       .min = 1,
       .max = 10},
      {.name = "sigma_c",
       .type = ParamType::Number,
       .fallback = "auto",
       .doc = "colour weight exp(-|dc|^2/sigma^2) of the first pass; each later pass divides "
              "sigma by `falloff` (auto: with normal or depth guides 48 on colour/albedo and 6 "
              "where no albedo divides (metals, black, no albedo guide); without them 8 on "
              "colour/albedo, else 1)",
       .min = 1e-4,
       .max = 1e6,
       .allow_auto = true},
      {.name = "brightness",
       .type = ParamType::Number,
       .fallback = "1",
       .doc = "how bright the render is against the scenes the defaults were chosen on (lit "
              "surfaces about 0.1-1): the auto sigma_c values are multiplied by it, e.g. 8 "
              "for a render exposed 3 stops brighter",
       .min = 1e-6,
       .max = 1e6},
      {.name = "falloff",
       .type = ParamType::Number,
       .fallback = "auto",
       .doc = "each pass's colour sigma is the previous one's divided by this, as the noise "
              "left shrinks (auto: 48 with normal or depth guides, so later passes average "
              "only what already agrees; 1 without: the same sigma in every pass)",
       .min = 1,
       .max = 1e6,
       .allow_auto = true},
      {.name = "sigma_n",
       .type = ParamType::Number,
       .fallback = "48",
       .doc = "normal weight max(0, n_p.n_q)^sigma_n",
       .min = 0,
       .max = 1e4},
      {.name = "sigma_z",
       .type = ParamType::Number,
       .fallback = "0.02",
       .doc = "depth weight exp(-|dz|/(sigma_z * nearer depth))",
       .min = 1e-6,
       .max = 1e6},
      {.name = "outline",
       .type = ParamType::Number,
       .fallback = "0.1",
       .doc = "outline pixels: where taps on the pixel's own surface (by the normal and depth "
              "weights) carry less than this share of the 5x5 weights, as on antialiased "
              "outlines and creases whose normals blend two surfaces, the taps also count under "
              "the normal weight max(0, n_p.n_q), blended in as the share falls to 0; 0: off",
       .min = 0,
       .max = 1}};
  params.push_back(fireflies_param());
  for (auto& p : guide_params()) params.push_back(std::move(p));
  params.push_back(border_param());
  return {.name = "atrous",
          .summary =
              "edge-avoiding à-trous wavelet denoiser: large radii at 25 taps a pass, "
              "stopped by colour, normals and depth",
          .params = std::move(params),
          .notes = {"without normal/depth guides the colour weight alone steers it (photos)"},
          .example = "atrous:iters=2:sigma_c=8",
          .make = [](const Args& args) -> std::unique_ptr<Stage> {
            AtrousParams a;
            a.iters = args.integer("iters");
            a.sigma_c = args.is_auto("sigma_c") ? -1 : args.number("sigma_c");
            a.falloff = args.is_auto("falloff") ? -1 : args.number("falloff");
            a.brightness = args.number("brightness");
            a.sigma_n = float(args.number("sigma_n"));
            a.sigma_n_whole =
                a.sigma_n == std::floor(a.sigma_n) && a.sigma_n <= 4096 ? int(a.sigma_n) : -1;
            a.sigma_z2 = depth_scale(args.number("sigma_z"));
            a.outline = float(args.number("outline"));
            a.fireflies = args.is_auto("fireflies") ? -1 : args.number("fireflies");
            a.albedo_min = float(args.number("albedo_min"));
            a.albedo_filter = args.flag("albedo_filter");
            a.border = parse_border(args.text("border"));
            return std::make_unique<AtrousStage>(args.spec_text(), a, guide_sources(args));
          },
          .guided = true,
          .filters_alpha = true};
}

}  // namespace halo
