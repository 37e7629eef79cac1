// bilateral: edge-stopping separable Gaussian for path-traced renders, guided by normals and
// depth (discontinuity flags), with albedo demodulation; self-guided (a range kernel on the
// image's own colour) when there are no guides. Device side: kernels/bilateral.cl.
#include <cmath>
#include <limits>
#include <numbers>

#include "cl/groups.hpp"
#include "core/error.hpp"
#include "filters/convolve/separable.hpp"
#include "filters/guided/guides.hpp"
#include "kernels/contract.h"

// One kernel argument, laid out as OpenCL C lays it out: 4-byte members only.
static_assert(sizeof(BilateralPassArgs) == 15 * 4);

namespace halo {

namespace {

constexpr int kTile = GROUP_SQUARE;  // bilateral_flags work-group side

struct BilateralParams {
  int r = 4;
  std::vector<float> weights;  // w[0] centre .. w[r]: the Gaussian's half from the centre
  float cos_angle = 0, dz = 0;
  double sigma_r = -1;  // < 0: auto
  float albedo_min = 0.02f;
  bool albedo_filter = true;  // remodulate with remodulation_albedo (guides.hpp)
  double fireflies = -1;      // the fireflies step's ratio (guides.hpp); < 0: auto
  bool walk_2d = false;       // one pass over the square (pass_2d_reference), not rows then columns
  Border border = Border::clamp;
};

// What one run does, from the parameters and the guides it was given.
struct Plan {
  bool use_flags = false, demod = false;
  float range_inv = 0;  // 1 / (2 sigma_r^2), 0 for no range kernel
  Fireflies fireflies;
};

// The flags of the image rows `rows`, in a buffer with the guides' pitch and rows.
std::vector<std::uint8_t> flags_reference(const Guides& g, const BilateralParams& p, Span rows) {
  const Image& size = g.any();
  const int w = size.width(), h = size.full_height(), y0 = size.y0();
  const bool hn = g.has_normal(), hd = g.has_depth();
  std::vector<std::uint8_t> flags(size.plane_size(), 0);
  for (int y = rows.first; y < rows.last; ++y)
    for (int x = 0; x < w; ++x) {
      const int r = y - y0;  // the row in the guides
      const Surface s = surface_at(g, x, r);
      std::uint8_t f = 0;
      if (x > 0 && is_edge(s, surface_at(g, x - 1, r), p.cos_angle, p.dz, hn, hd)) f |= kFlagLeft;
      if (x < w - 1 && is_edge(s, surface_at(g, x + 1, r), p.cos_angle, p.dz, hn, hd))
        f |= kFlagRight;
      if (y > 0 && is_edge(s, surface_at(g, x, r - 1), p.cos_angle, p.dz, hn, hd)) f |= kFlagTop;
      if (y < h - 1 && is_edge(s, surface_at(g, x, r + 1), p.cos_angle, p.dz, hn, hd))
        f |= kFlagBottom;
      flags[std::size_t(r) * size.pitch() + x] = f;
    }
  return flags;
}

// One pass of kernels/bilateral.cl's bilateral_pass over the image rows `rows`, in the same
// operation order.
Image pass_reference(const Image& src, const std::vector<std::uint8_t>& flags, const Guides* g,
                     const BilateralParams& p, const Plan& plan, bool horizontal, Span rows,
                     bool demod, const Image* remod_albedo) {
  const int w = src.width(), y0 = src.y0(), channels = src.color_channels();
  Image dst = src.like(channels, false);
  const std::uint8_t back = horizontal ? kFlagLeft : kFlagTop;
  const std::uint8_t ahead = horizontal ? kFlagRight : kFlagBottom;
  for (int y = rows.first; y < rows.last; ++y)
    for (int x = 0; x < w; ++x) {
      float centre[kMaxGuidedChannels], sum[kMaxGuidedChannels];
      float wsum = p.weights[0];
      for (int c = 0; c < channels; ++c) {
        centre[c] = colour_at(src, g, x, y - y0, c, demod, p.albedo_min);
        sum[c] = p.weights[0] * centre[c];
      }
      // Positions along the line in image coordinates; `origin` makes them buffer rows.
      const int n = horizontal ? w : src.full_height(), i0 = horizontal ? x : y;
      const int origin = horizontal ? 0 : y0;
      for (const auto& [dir, stop] : {std::pair{-1, back}, std::pair{1, ahead}}) {
        for (int i = 1; i <= p.r; ++i) {
          const int from = i0 + dir * (i - 1);
          if (plan.use_flags && from >= 0 && from < n) {
            const std::size_t at = horizontal ? std::size_t(y - y0) * src.pitch() + from
                                              : std::size_t(from - origin) * src.pitch() + x;
            if (flags[at] & stop) break;
          }
          const int q = border_index(i0 + dir * i, n, p.border);
          if (q < 0) break;
          const int qx = horizontal ? q : x, qy = horizontal ? y - y0 : q - origin;
          float v[kMaxGuidedChannels];
          const float d2 = read_tap(src, g, qx, qy, demod, p.albedo_min, centre, v);
          const float wt =
              plan.range_inv > 0.0f ? p.weights[i] * std::exp(-d2 * plan.range_inv) : p.weights[i];
          accumulate(wt, v, channels, sum, wsum);
        }
      }
      store_normalised(dst, remod_albedo, x, y - y0, sum, wsum, p.albedo_min);
    }
  return dst;
}

// walk=2d, kernels/bilateral.cl's bilateral_2d in the same operation order: one pass over the
// (2r+1)^2 square with weights w[|dx|] w[|dy|]. A tap counts when an L-shaped path reaches it
// from the centre without crossing a flag: along the centre's row and then the tap's column,
// or along the centre's column and then the tap's row. A step is blocked by the flag of the
// pixel it leaves; beyond the image's edge, where the border rule maps positions back into it,
// by the flag between the two pixels the step maps to (none between clamp's copies of one
// pixel, nor across wrap's seam), so a path cannot go round an edge outside the image.
// Columns are swept from the centre outwards, right then left, rows up and down within each;
// `row_open` keeps, for each row of the square, whether the sweep's direction is still open
// along it.
Image pass_2d_reference(const Image& src, const std::vector<std::uint8_t>& flags, const Guides* g,
                        const BilateralParams& p, const Plan& plan, Span rows,
                        const Image* remod_albedo) {
  const int w = src.width(), h = src.full_height(), y0 = src.y0(), r = p.r;
  const int channels = src.color_channels();
  Image dst = src.like(channels, false);
  // Whether the step from image position (x, y) to (x + dx, y + dy) is blocked.
  const auto blocked = [&](int x, int y, int dx, int dy) {
    if (!plan.use_flags) return false;
    const int mx = border_index(x, w, p.border), my = border_index(y, h, p.border);
    const int nx = border_index(x + dx, w, p.border), ny = border_index(y + dy, h, p.border);
    if (mx < 0 || my < 0 || nx < 0 || ny < 0) return false;
    const int step = dx ? nx - mx : ny - my;
    if (step != 1 && step != -1) return false;  // clamp's copies, wrap's seam
    const std::uint8_t bit =
        dx ? (step > 0 ? kFlagRight : kFlagLeft) : (step > 0 ? kFlagBottom : kFlagTop);
    return (flags[std::size_t(my - y0) * src.pitch() + mx] & bit) != 0;
  };
  std::vector<char> row_open(2 * r + 1);
  for (int y = rows.first; y < rows.last; ++y)
    for (int x = 0; x < w; ++x) {
      float centre[kMaxGuidedChannels], sum[kMaxGuidedChannels];
      const float w0 = p.weights[0] * p.weights[0];
      float wsum = w0;
      for (int c = 0; c < channels; ++c) {
        centre[c] = colour_at(src, g, x, y - y0, c, plan.demod, p.albedo_min);
        sum[c] = w0 * centre[c];
      }
      for (const int sx : {1, -1}) {
        std::fill(row_open.begin(), row_open.end(), 1);
        bool along_row = true;  // the centre's row, from x to x + dx
        for (int i = sx > 0 ? 0 : 1; i <= r; ++i) {
          const int dx = sx * i;
          if (i > 0) {
            along_row = along_row && !blocked(x + sx * (i - 1), y, sx, 0);
            for (int k = -r; k <= r; ++k)
              row_open[k + r] = row_open[k + r] && !blocked(x + sx * (i - 1), y + k, sx, 0);
          }
          const int qx = border_index(x + dx, w, p.border);
          if (qx < 0) break;
          for (const int sy : {1, -1}) {
            bool down_tap = true, down_centre = true;  // the tap's column, the centre's
            for (int j = sy > 0 ? 0 : 1; j <= r; ++j) {
              const int dy = sy * j;
              if (j > 0) {
                down_tap = down_tap && !blocked(x + dx, y + sy * (j - 1), 0, sy);
                down_centre = down_centre && !blocked(x, y + sy * (j - 1), 0, sy);
              }
              const int qy = border_index(y + dy, h, p.border);
              if (qy < 0) break;
              if (i == 0 && j == 0) continue;
              if (!((along_row && down_tap) || (down_centre && row_open[dy + r]))) continue;
              float v[kMaxGuidedChannels];
              const float d2 = read_tap(src, g, qx, qy - y0, plan.demod, p.albedo_min, centre, v);
              const float spatial = p.weights[i] * p.weights[j];
              const float wt =
                  plan.range_inv > 0.0f ? spatial * std::exp(-d2 * plan.range_inv) : spatial;
              accumulate(wt, v, channels, sum, wsum);
            }
          }
        }
      }
      store_normalised(dst, remod_albedo, x, y - y0, sum, wsum, p.albedo_min);
    }
  return dst;
}

// The discontinuity flags a run computed, kept when the caller asks (StageRun::keep_flags).
struct FlagsState : StageState {
  FlagImage flags;

  // Rows `rows` of flags in a buffer of the guides' pitch, into the whole image's flags.
  void keep_rows(const std::uint8_t* bits, const Image& size, Span rows) {
    if (flags.empty()) {
      flags.width = size.width();
      flags.height = size.full_height();
      flags.bits.assign(std::size_t(size.width()) * size.full_height(), 0);
    }
    for (int y = rows.first; y < rows.last; ++y)
      std::copy_n(bits + std::size_t(y - size.y0()) * size.pitch(), size.width(),
                  flags.bits.begin() + std::ptrdiff_t(y) * size.width());
  }

  // Each lane wrote the flags of its own strips' rows, zero elsewhere.
  void merge(StageState& other) override {
    FlagImage& b = static_cast<FlagsState&>(other).flags;
    if (flags.empty())
      flags = std::move(b);
    else
      for (std::size_t p = 0; p < b.bits.size(); ++p) flags.bits[p] |= b.bits[p];
  }

  std::string mismatch(const StageState& reference) const override {
    const FlagImage& r = static_cast<const FlagsState&>(reference).flags;
    if (flags.empty() || r.empty()) return "";
    std::size_t differing = 0, first = 0;
    for (std::size_t i = 0; i < flags.bits.size(); ++i)
      if (flags.bits[i] != r.bits[i] && differing++ == 0) first = i;
    if (!differing) return "";
    const std::size_t w = std::size_t(flags.width);
    return std::to_string(differing) + " discontinuity flags differ, first at (" +
           std::to_string(first % w) + "," + std::to_string(first / w) + "): device " +
           std::to_string(flags.bits[first]) + ", reference " + std::to_string(r.bits[first]);
  }

  std::vector<SideOutput> side_outputs() const override {
    if (flags.empty()) return {};
    return {{.name = "flags", .flags = &flags}};
  }
};

class BilateralStage : public GuidedStage {
 public:
  BilateralStage(std::string spec, BilateralParams p, GuideSources sources)
      : GuidedStage(std::move(spec), std::move(sources)), p_(std::move(p)) {}

  // The colour walk reads r rows; its flags need the guides one row further, and the
  // fireflies step the colour.
  // Taps of the walk: rows then columns, or the whole square.
  StageTraits traits() const override {
    const double side = 2 * p_.r + 1, taps = p_.walk_2d ? side * side : 2 * side;
    // On a strip: its input, the rows pass, the result, the albedo over alpha, the smoothed
    // albedo and the clamped fireflies (5 measured at most), and the one the executor keeps.
    return {.reach = p_.r + 1,
            .cost = {.reference_ns = 8.5 * taps, .device_ns = 5.6 * taps},
            .memory = {.strip_buffers = 6}};
  }
  std::string whole_image_reason(PixelType) const override {
    return border_whole_image_reason(p_.border);
  }

  std::vector<std::string> details(const StageRun& run) const override {
    const Guides* g = run.guides;
    const Plan plan = plan_for(g, 3);  // the channel count matters only to its albedo check
    std::vector<std::string> d = {"radius " + std::to_string(p_.r) +
                                  (p_.walk_2d ? ", one 2D pass (walk=2d)" : ", rows then columns")};
    d.push_back(plan.use_flags ? "edges from " + std::string(g->has_normal() ? "normals" : "") +
                                     (g->has_normal() && g->has_depth() ? " and " : "") +
                                     (g->has_depth() ? "depth" : "")
                               : "no normal or depth guides: self-guided");
    if (plan.demod) d.push_back(demodulation_detail(p_.albedo_filter));
    d.push_back(fireflies_detail(plan.fireflies.ratio));
    if (plan.range_inv > 0)
      d.push_back("range kernel, sigma_r " + std::to_string(std::sqrt(0.5 / plan.range_inv)));
    if (g && !g->described.empty()) d.push_back(g->described);
    return d;
  }

  Image reference_rows(const Image& in, Span out, StageRun& run) const override {
    check_size(run, in.width(), in.span(), in.full_height());
    const Plan plan = plan_for(run.guides, in.color_channels());
    const Span inner = out.widened(p_.r, in.full_height());  // rows the columns pass reads
    std::vector<std::uint8_t> flags;
    if (plan.use_flags) {
      flags = flags_reference(*run.guides, p_, inner);
      if (run.keep_flags)
        run.state_as<FlagsState>().keep_rows(flags.data(), run.guides->any(), run.own);
    }
    std::optional<Guides> over;  // colour with alpha: the albedo over alpha (guides.hpp)
    if (plan.demod) over = albedo_over_alpha(*run.guides, in);
    const Guides* g = over ? &*over : run.guides;
    const Remodulation remod(g, plan.demod, p_.albedo_filter, out, p_.border);
    const Image clamped =
        plan.fireflies.ratio > 0 ? clamp_fireflies(in, g, plan.fireflies, inner) : Image();
    const Image& colour = plan.fireflies.ratio > 0 ? clamped : in;
    if (p_.walk_2d)
      return with_colour(in, pass_2d_reference(colour, flags, g, p_, plan, out, remod.albedo()));
    const Image rows = pass_reference(colour, flags, g, p_, plan, true, inner, plan.demod, nullptr);
    const Image result =
        pass_reference(rows, flags, g, p_, plan, false, out, false, remod.albedo());
    return with_colour(in, result);
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun& run) const override {
    check_size(run, in.width, in.span(), in.full_height);
    const Plan plan = plan_for(run.guides, in.color_channels());
    const DeviceGuides& shared = device_guides(device, run);
    // Colour with alpha: the albedo over alpha (guides.hpp).
    const DeviceGuides dg = plan.demod ? albedo_over_alpha(device, shared, run.guides, in) : shared;
    const Span inner = out.widened(p_.r, in.full_height);
    cl::Buffer flags = dg.placeholder;
    if (plan.use_flags) {
      flags = device.buffer(in.plane_size(), "bilateral flags");
      auto k = device.kernel("bilateral.cl", "bilateral_flags", {{"TILE", std::to_string(kTile)}});
      set_args(k, dg.geometry, flags, strip_args(in, inner), p_.cos_angle, p_.dz,
               int(run.guides->has_normal()), int(run.guides->has_depth()));
      device.launch(k, "bilateral_flags", cl::NDRange(in.width, inner.count()), groups::square,
                    std::size_t(in.pitch) * inner.count() * (4 * sizeof(float) + 1));
    }
    const cl::Buffer remod_with = remodulation_albedo(device, dg, run.guides, plan.demod,
                                                      p_.albedo_filter, in, out, p_.border);
    const auto weights = device.constants(p_.weights, "bilateral weights");
    const int channels = in.color_channels();
    DeviceImage tmp = p_.walk_2d ? DeviceImage() : device.image_like(in, channels, false);
    DeviceImage result = device.image_like(in, in.channels, in.alpha);
    DeviceImage clamped;
    if (plan.fireflies.ratio > 0) clamped = clamp_fireflies(device, dg, in, plan.fireflies, inner);
    const cl::Buffer& colour = plan.fireflies.ratio > 0 ? clamped.buffer : in.buffer;
    // walk=2d: one pass over the square; else rows into tmp, then columns. Each pass divides
    // by the albedo (demod) and/or multiplies back (remod) as it reads or writes colour.
    struct Pass {
      const char* kernel;
      const cl::Buffer& src;
      const cl::Buffer& dst;
      Span rows;
      bool demod, remod;
    };
    const std::vector<Pass> passes =
        p_.walk_2d ? std::vector<Pass>{{"bilateral_2d", colour, result.buffer, out, plan.demod,
                                        plan.demod}}
                   : std::vector<Pass>{
                         {"bilateral_rows", colour, tmp.buffer, inner, plan.demod, false},
                         {"bilateral_cols", tmp.buffer, result.buffer, out, false, plan.demod}};
    for (const Pass& pass : passes) {
      const std::size_t row_bytes = std::size_t(in.pitch) * pass.rows.count() * sizeof(float);
      auto k = device.kernel("bilateral.cl", pass.kernel, {{"CHANNELS", std::to_string(channels)}});
      const BilateralPassArgs args{.channels = channels,
                                   .r = p_.r,
                                   .border = int(p_.border),
                                   .use_flags = int(plan.use_flags),
                                   .demod = int(pass.demod),
                                   .remod = int(pass.remod),
                                   .albedo_min = p_.albedo_min,
                                   .range_inv = plan.range_inv};
      set_args(k, pass.src, pass.dst, flags, dg.albedo, remod_with, weights,
               on_strip(args, in, pass.rows));
      device.launch(k, pass.kernel, cl::NDRange(in.width, pass.rows.count()), groups::window,
                    2 * channels * row_bytes + 3 * row_bytes * (pass.demod + pass.remod) +
                        (plan.use_flags ? row_bytes / sizeof(float) : 0));
    }
    copy_alpha(device, in, result);
    if (plan.use_flags && run.keep_flags) {
      std::vector<std::uint8_t> bits(in.plane_size());
      device.read(flags, bits.data(), bits.size(), "bilateral flags");
      run.state_as<FlagsState>().keep_rows(bits.data(), run.guides->any(), run.own);
    }
    return result;
  }

 private:
  Plan plan_for(const Guides* g, int channels) const {
    Plan plan;
    plan.use_flags = g && g->any_geometry();
    plan.demod = demodulates(g, channels);
    // Chosen by PSNR on the shared Blender scene (README, scripts/render-psnr.py).
    const double sigma_r = p_.sigma_r >= 0 ? p_.sigma_r : plan.use_flags ? 2 : 0.1;
    // Capped at float's largest: a tiny sigma_r (1e-300) keeps only equal colours instead of
    // an infinite factor whose 0 * inf at the centre tap is NaN.
    plan.range_inv = sigma_r > 0 ? float(std::min(1 / (2 * sigma_r * sigma_r),
                                                  double(std::numeric_limits<float>::max())))
                                 : 0.0f;
    plan.fireflies = {.ratio = fireflies_ratio(p_.fireflies, g),
                      .demod = plan.demod,
                      .albedo_min = p_.albedo_min,
                      .border = p_.border};
    return plan;
  }

  BilateralParams p_;
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
       .fallback = "40",
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
       .allow_auto = true},
      fireflies_param(),
      {.name = "walk",
       .type = ParamType::Choice,
       .fallback = "separable",
       .doc = "separable: rows then columns, each walk stopped at the first flag (fast, r "
              "taps twice); 2d: one pass over the (2r+1)^2 square where a tap counts when an "
              "L-shaped path (row then column, or column then row) reaches it without crossing "
              "a flag: no row/column streaks, (2r+1)^2 taps, r up to 31",
       .choices = {"separable", "2d"}}};
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
                    "(the separable walk is not stopped there; walk=2d checks the flags of the "
                    "pixels they map to)"},
          .example = "bilateral:r=4:angle=40:dz=0.05",
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
            p.albedo_filter = args.flag("albedo_filter");
            p.fireflies = args.is_auto("fireflies") ? -1 : args.number("fireflies");
            p.walk_2d = args.text("walk") == "2d";
            if (p.walk_2d && p.r > 31)
              throw Error(ErrorKind::Usage, "filter '" + args.spec_text() +
                                                "': walk=2d takes r up to 31, not " +
                                                std::to_string(p.r));
            p.border = parse_border(args.text("border"));
            return std::make_unique<BilateralStage>(args.spec_text(), std::move(p),
                                                    guide_sources(args));
          },
          .guided = true,
          .filters_alpha = true};
}

}  // namespace halo
