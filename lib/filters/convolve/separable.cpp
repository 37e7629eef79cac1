// Separable filtering: CPU reference and device enqueue of kernels/separable.cl, and the `sep`
// filter (any pair of 1D kernels).
#include "filters/convolve/separable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "cl/tuning.hpp"
#include "core/error.hpp"
#include "filters/colour/convert.hpp"

namespace halo {

namespace {

constexpr int kMaxTaps = 2 * 512 + 1;

int radius(const std::vector<float>& weights) {
  return int(weights.size()) / 2;
}

// out[x] for x < n: the taps' fmas in order, fma(weights[j], in[j][x], ...) for j = 0..taps-1
// starting from 0, one pass of the reference over a row. Each output's order of fmas is the
// kernels', so the results are the same bits.
void fma_taps_plain(float* out, const float* const* in, const float* weights, int taps, int n) {
  for (int x = 0; x < n; ++x) {
    float acc = 0.0f;
    for (int j = 0; j < taps; ++j) acc = std::fma(weights[j], in[j][x], acc);
    out[x] = acc;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// With FMA instructions (x86-64-v3): outputs x0 .. n-1, 32 at a time in four 8-lane sums that
// stay in registers while every tap is added. Going tap by tap over whole rows instead sent a
// 5120-wide row through L2 once a tap (2x slower).
__attribute__((target("avx2,fma"))) void fma_taps_wide(float* out, const float* const* in,
                                                       const float* weights, int taps, int x0,
                                                       int n) {
  for (; x0 + 32 <= n; x0 += 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int j = 0; j < taps; ++j) {
      const float* v = in[j] + x0;
      const __m256 w = _mm256_set1_ps(weights[j]);
      a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v), a0);
      a1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 8), a1);
      a2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 16), a2);
      a3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 24), a3);
    }
    _mm256_storeu_ps(out + x0, a0);
    _mm256_storeu_ps(out + x0 + 8, a1);
    _mm256_storeu_ps(out + x0 + 16, a2);
    _mm256_storeu_ps(out + x0 + 24, a3);
  }
  for (; x0 + 8 <= n; x0 += 8) {
    __m256 a = _mm256_setzero_ps();
    for (int j = 0; j < taps; ++j)
      a = _mm256_fmadd_ps(_mm256_set1_ps(weights[j]), _mm256_loadu_ps(in[j] + x0), a);
    _mm256_storeu_ps(out + x0, a);
  }
  for (; x0 < n; ++x0) {
    float acc = 0.0f;
    for (int j = 0; j < taps; ++j) acc = __builtin_fmaf(weights[j], in[j][x0], acc);
    out[x0] = acc;
  }
}

// With AVX-512: the same, 64 outputs at a time in four 16-lane sums (1.3x the 8-lane form on a
// row of 5120 and 25 taps, AMD EPYC, 2026-11-28); the last outputs in the 8-lane form. Each
// lane's fmas are the same in either form.
__attribute__((target("avx512f,avx2,fma"))) void fma_taps_512(float* out, const float* const* in,
                                                              const float* weights, int taps,
                                                              int n) {
  int x0 = 0;
  for (; x0 + 64 <= n; x0 += 64) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int j = 0; j < taps; ++j) {
      const float* v = in[j] + x0;
      const __m512 w = _mm512_set1_ps(weights[j]);
      a0 = _mm512_fmadd_ps(w, _mm512_loadu_ps(v), a0);
      a1 = _mm512_fmadd_ps(w, _mm512_loadu_ps(v + 16), a1);
      a2 = _mm512_fmadd_ps(w, _mm512_loadu_ps(v + 32), a2);
      a3 = _mm512_fmadd_ps(w, _mm512_loadu_ps(v + 48), a3);
    }
    _mm512_storeu_ps(out + x0, a0);
    _mm512_storeu_ps(out + x0 + 16, a1);
    _mm512_storeu_ps(out + x0 + 32, a2);
    _mm512_storeu_ps(out + x0 + 48, a3);
  }
  fma_taps_wide(out, in, weights, taps, x0, n);
}
#endif

bool wide_fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool wide = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return wide;
#else
  return false;
#endif
}

void fma_taps(float* out, const float* const* in, const float* weights, int taps, int n) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx512 = wide_fma() && __builtin_cpu_supports("avx512f");
  if (avx512) return fma_taps_512(out, in, weights, taps, n);
  if (wide_fma()) return fma_taps_wide(out, in, weights, taps, 0, n);
#endif
  fma_taps_plain(out, in, weights, taps, n);
}

// Rows then columns, each summed with fma in tap order: what every kernel in
// kernels/separable.cl computes. The rows pass covers the rows the columns pass reads. Each
// pass goes tap by tap over whole rows (a row padded with its border first), which keeps every
// output's order of fmas and lets the loops run across x.
Image separable_reference(const Image& src, const SeparableKernel& k, Span out) {
  const int w = src.width(), rx = radius(k.rows), ry = radius(k.cols);
  Image result = result_like(src, src.channels(), src.alpha(), out);
  const std::vector<int> xs = border_table(w, rx, k.border);
  const std::vector<int> ys = row_table(src, out, ry, k.border);
  const Span rows_pass = out.widened(ry, src.full_height());
  Image tmp = src.like_uninitialized(1, false);  // rows rows_pass written before they are read
  std::vector<float> padded(std::size_t(w) + 2 * rx);
  const std::vector<float> zeros(std::size_t(w), 0.0f);  // a row outside a zero border
  std::vector<const float*> taps(2 * rx + 1);  // the rows pass reads the padded row shifted
  for (int j = 0; j <= 2 * rx; ++j) taps[j] = padded.data() + j;
  for (int c = 0; c < src.color_channels(); ++c) {
    for (int y = rows_pass.first; y < rows_pass.last; ++y) {
      const float* in = src.row(c, y - src.y0());
      // The border's columns from the table, the row itself copied (xs[rx + x] is x).
      for (int i = 0; i < rx; ++i) {
        padded[i] = xs[i] < 0 ? 0.0f : in[xs[i]];
        padded[rx + w + i] = xs[rx + w + i] < 0 ? 0.0f : in[xs[rx + w + i]];
      }
      std::copy_n(in, w, padded.data() + rx);
      fma_taps(tmp.row(0, y - src.y0()), taps.data(), k.rows.data(), 2 * rx + 1, w);
    }
    std::vector<const float*> rows(2 * ry + 1);
    for (int y = out.first; y < out.last; ++y) {
      float* dst = result.row(c, y - src.y0());
      for (int i = 0; i <= 2 * ry; ++i) {
        const int yy = ys[y - out.first + i];
        rows[i] = yy < 0 ? zeros.data() : tmp.row(0, yy);
      }
      fma_taps(dst, rows.data(), k.cols.data(), 2 * ry + 1, w);
      for (int x = 0; x < w; ++x) dst[x] += k.offset;
    }
  }
  copy_alpha(src, result);
  return result;
}

// Launch shape of the columns pass: the tuned tile when it fits in local memory, else a
// narrower one, else the direct kernel (taps from global memory).
struct ColsShape {
  int w, h, steps, halo;
  bool direct;
};

ColsShape cols_shape(const Tuning& t, int ry, int steps, std::uint64_t budget) {
  for (int w = t.cols_w; w >= 16; w /= 2) {
    const int halo = ceil_div(ry, t.cols_h);
    const std::uint64_t bytes = 4ull * w * ((steps + 2 * halo) * t.cols_h + 1);
    if (bytes <= budget) return {w, t.cols_h, steps, halo, false};
  }
  return {t.cols_w, t.cols_h, 1, 0, true};
}

// On CPUs: the rows-pass rows the last strip left in its (recycled) ring. Strips overlap by
// the columns pass's reach; the next strip finds those rows in place instead of computing them
// again. Each lane keeps its own; nothing to merge.
struct RowsCarry : StageState {
  cl::Buffer buffer;
  int ring = 0;  // rows a plane; image row y is at row y % ring
  Span rows;
};

class SeparableStage : public Stage, public CarriesRows {
 public:
  SeparableStage(std::string spec, SeparableKernel kernel, std::vector<std::string> details)
      : Stage(std::move(spec)), k_(std::move(kernel)), details_(std::move(details)) {}

  // Cost: one tap a weight of each pass.
  // The reference per sample and tap: 0.27 ns with 8-lane FMA, sums in registers, the strip's
  // conversions included (5120x2880 RGB, sigma 4: 50 taps, 0.59-0.64 s over both cores'
  // lanes, 2026-11-27), 3.6 ns a tap through fma one sample at a time. Against PoCL (2 cores,
  // 2026-11-28, whole runs): the reference first on 5-6K photos (0.44 s against 0.52 on
  // 6000x4000, 49 against 99 MB), PoCL on 16384x16384 with r=8 (4.4 s against 5.5).
  StageTraits traits() const override {
    const double taps = double(k_.rows.size() + k_.cols.size());
    return {
        .reach = radius(k_.cols),
        .cost = {.reference_ns = (wide_fma() ? 0.27 : 3.6) * taps, .device_ns = 4 + 0.13 * taps}};
  }
  std::string whole_image_reason(PixelType) const override {
    return border_whole_image_reason(k_.border);
  }
  std::vector<std::string> details(const StageRun&) const override { return details_; }
  bool carries_rows(const Device& device) const override { return device.profile().vector_kernels; }

  Image reference_rows(const Image& input, Span out, StageRun&) const override {
    Image luminance;
    return separable_reference(gray_if(k_.gray, input, luminance, spec()), k_, out);
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& input, Span out,
                           StageRun& run) const override {
    const DeviceImage src = gray_if(k_.gray, device, input, spec());
    const Tuning& t = device.tuning();
    // Both passes in one kernel: the direct one for the smallest radii, else the fused one
    // where its tiles fit.
    const bool vector_kernels = device.profile().vector_kernels;
    const bool direct =
        !vector_kernels && std::max(radius(k_.rows), radius(k_.cols)) <= t.direct_radius;
    if (direct || (!vector_kernels && fused_fits(t, device.info().local_budget()))) {
      DeviceImage result = device.image_like(src, src.channels, src.alpha);
      if (direct)
        enqueue_direct(device, t, src, result, out);
      else
        enqueue_fused(device, t, src, result, out);
      copy_alpha(device, src, result);
      return result;
    }
    if (vector_kernels) return enqueue_vector(device, t, src, out, run);
    // Two passes: src is read only by the rows pass, so the result may take its buffer.
    DeviceImage result = result_for(device, src);
    enqueue_two_pass(device, t, src, result, out);
    copy_alpha(device, src, result);
    return result;
  }

 private:
  Defines common_defines() const {
    return {{"FILTER", k_.filter},
            {"RADIUS_X", std::to_string(radius(k_.rows))},
            {"RADIUS_Y", std::to_string(radius(k_.cols))}};
  }

  // The weights compiled into the program (ROW_WEIGHTS / COL_WEIGHTS in separable.cl), exact
  // as hex literals: each weight set becomes a program of its own (cached like any other).
  void inline_weights(Defines& defines) const {
    const auto literals = [](const std::vector<float>& weights) {
      std::string text;
      for (const float w : weights) {
        if (!text.empty()) text += ',';
        text += fmt::format("{:a}f", w);
      }
      return text;
    };
    defines.emplace_back("ROW_WEIGHTS", literals(k_.rows));
    defines.emplace_back("COL_WEIGHTS", literals(k_.cols));
  }

  // The rows the rows pass computes: those the columns pass reads for `out`.
  Span rows_pass(const DeviceImage& src, Span out) const {
    return out.widened(radius(k_.cols), src.full_height);
  }

  // Bytes moved at least: each pass reads its rows once and writes them once.
  static std::size_t pass_bytes(const DeviceImage& src, Span rows, int planes) {
    return 2 * std::size_t(src.pitch) * rows.count() * sizeof(float) * planes;
  }

  void enqueue_two_pass(Device& device, const Tuning& t, const DeviceImage& src,
                        DeviceImage& result, Span out) const {
    const int rx = radius(k_.rows), ry = radius(k_.cols);
    const int rows_halo = ceil_div(rx, t.rows_w);
    const bool rows_slide = t.rows_slide > 0 && rx >= t.rows_slide;
    const bool cols_slide = t.cols_slide > 0 && ry >= t.cols_slide;
    const int rows_steps = rows_slide ? t.rows_slide_steps : t.rows_steps;
    const ColsShape cols = cols_shape(t, ry, cols_slide ? t.cols_slide_steps : t.cols_steps,
                                      device.info().local_budget());
    Defines defines = common_defines();
    for (const auto& [name, value] : {std::pair{"SEP_FORM", SEP_FORM_PASSES},
                                      {"ROWS_HALO", rows_halo},
                                      {"COLS_HALO", cols.halo},
                                      {"COLS_DIRECT", int(cols.direct)},
                                      {"ROWS_SLIDING", int(rows_slide)},
                                      {"COLS_SLIDING", int(cols_slide && !cols.direct)}})
      defines.emplace_back(name, std::to_string(value));
    for (const auto& knob :
         {knob_define(t, &Tuning::rows_w), knob_define(t, &Tuning::rows_h),
          knob_define(&Tuning::rows_steps, rows_steps), knob_define(&Tuning::cols_w, cols.w),
          knob_define(&Tuning::cols_h, cols.h), knob_define(&Tuning::cols_steps, cols.steps)})
      defines.push_back(knob);
    if (t.inline_weights > 0 && std::max(rx, ry) >= t.inline_weights) inline_weights(defines);
    const int planes = src.color_channels();
    const Span rows = rows_pass(src, out);

    DeviceImage tmp = device.image_like(src, planes, false);
    auto rows_kernel = device.kernel("separable.cl", k_.filter + "_rows", defines);
    const auto rows_weights = device.constants(k_.rows, k_.filter + " row weights");
    set_args(rows_kernel, src.buffer, tmp.buffer, strip_args(src, rows), int(k_.border),
             rows_weights);
    device.launch(rows_kernel, k_.filter + "_rows",
                  cl::NDRange(std::size_t(ceil_div(src.width, t.rows_w * rows_steps)) * t.rows_w,
                              rows.count(), planes),
                  cl::NDRange(t.rows_w, t.rows_h, 1), pass_bytes(src, rows, planes));

    auto cols_kernel = device.kernel("separable.cl", k_.filter + "_cols", defines);
    const auto cols_weights = device.constants(k_.cols, k_.filter + " column weights");
    set_args(cols_kernel, tmp.buffer, result.buffer, strip_args(src, out), int(k_.border),
             cols_weights, k_.offset);
    const std::size_t rows_needed =
        cols.direct ? std::size_t(out.count())
                    : std::size_t(ceil_div(out.count(), cols.h * cols.steps)) * cols.h;
    device.launch(cols_kernel, k_.filter + "_cols", cl::NDRange(src.width, rows_needed, planes),
                  cl::NDRange(cols.w, cols.h, 1), pass_bytes(src, out, planes));
  }

  // Whether the fused kernel runs: radii within the tuning's limit and its tile and rows-pass
  // rows in local memory.
  bool fused_fits(const Tuning& t, std::uint64_t local_budget) const {
    const int rx = radius(k_.rows), ry = radius(k_.cols), w = 32 * t.fused_steps;
    if (std::max(rx, ry) > t.fused_radius) return false;
    const std::uint64_t floats = std::uint64_t(t.fused_steps) * (2 * w + 2 * rx);  // tile, mid
    return 4 * floats <= local_budget;
  }

  // A kernel running both passes, <filter><name> of SEP_FORM `form`, with the weights compiled
  // in and the form's own knob.
  cl::Kernel both_passes_kernel(Device& device, int form, const std::string& name, const Tuning& t,
                                int Tuning::*knob) const {
    Defines defines = common_defines();
    defines.emplace_back("SEP_FORM", std::to_string(form));
    defines.push_back(knob_define(t, knob));
    inline_weights(defines);
    return device.kernel("separable.cl", k_.filter + name, defines);
  }

  void enqueue_fused(Device& device, const Tuning& t, const DeviceImage& src, DeviceImage& result,
                     Span out) const {
    const int planes = src.color_channels();
    auto kernel = both_passes_kernel(device, SEP_FORM_FUSED, "_fused", t, &Tuning::fused_steps);
    set_args(kernel, src.buffer, result.buffer, strip_args(src, out), int(k_.border), k_.offset,
             t.fused_band);
    device.launch(
        kernel, k_.filter + "_fused",
        cl::NDRange(std::size_t(ceil_div(src.width, GROUP_FUSED_W * t.fused_steps)) * GROUP_FUSED_W,
                    std::size_t(ceil_div(out.count(), t.fused_band)) * t.fused_steps, planes),
        cl::NDRange(GROUP_FUSED_W, t.fused_steps, 1), pass_bytes(src, out, planes));
  }

  void enqueue_direct(Device& device, const Tuning& t, const DeviceImage& src, DeviceImage& result,
                      Span out) const {
    const int planes = src.color_channels();
    auto kernel = both_passes_kernel(device, SEP_FORM_DIRECT, "_direct", t, &Tuning::direct_rows);
    set_args(kernel, src.buffer, result.buffer, strip_args(src, out), int(k_.border), k_.offset);
    device.launch(kernel, k_.filter + "_direct",
                  cl::NDRange(ceil_div(src.width, 4), ceil_div(out.count(), t.direct_rows), planes),
                  cl::NDRange(t.vec_w, t.vec_h, 1), pass_bytes(src, out, planes));
  }

  // The rows of `rows` still to compute: those past what the last strip's rows pass left in
  // the same ring (all of them when it was another buffer or ring, or does not reach rows).
  static Span rows_to_compute(const DeviceImage& ring_image, Span rows, const RowsCarry& carry) {
    if (carry.buffer() != ring_image.buffer() || carry.ring != ring_image.height ||
        !(carry.rows.first <= rows.first && rows.first < carry.rows.last &&
          carry.rows.last <= rows.last))
      return rows;
    return {carry.rows.last, rows.last};
  }

  // The CPU form: the same two passes, VEC outputs per work-item with vector arithmetic. The
  // rows pass writes into a ring that the stage's next strip finds again (carries_rows), so
  // src may start below the rows it shares with the last strip; the result then holds `out`.
  DeviceImage enqueue_vector(Device& device, const Tuning& t, const DeviceImage& src, Span out,
                             StageRun& run) const {
    Defines defines = common_defines();
    defines.emplace_back("SEP_FORM", std::to_string(SEP_FORM_VECTOR));
    defines.push_back(knob_define(t, &Tuning::vec));
    defines.push_back(knob_define(t, &Tuning::vec_cols));
    const int planes = src.color_channels();
    const std::size_t groups_x = ceil_div(src.width, t.vec);
    const cl::NDRange local(t.vec_w, t.vec_h, 1);
    const Span rows = rows_pass(src, out);
    // The ring: the rows a full strip's columns pass reads (out and the reach on each side),
    // the same for every strip (the first and last may be shorter) so that each finds the rows
    // the one before left. A whole image needs no more than its height.
    const int full = std::max(out.count(), run.strip_rows);
    const int ring = std::max(rows.count(), std::min(full + 2 * radius(k_.cols), src.full_height));
    const DeviceImage tmp = device.image(src.width, ring, planes, false);
    RowsCarry& carry = run.state_as<RowsCarry>();
    const Span todo = rows_to_compute(tmp, rows, carry);
    if (!src.span().contains(todo))
      throw Error(
          ErrorKind::Internal,
          fmt::format("{}: the rows pass needs input rows [{}, {}), the strip holds [{}, {})",
                      spec(), todo.first, todo.last, src.y0, src.y0 + src.height));
    if (!todo.empty()) {
      auto rows_kernel = device.kernel("separable.cl", k_.filter + "_rows_vec", defines);
      const auto rows_weights = device.constants(k_.rows, k_.filter + " row weights");
      set_args(rows_kernel, src.buffer, tmp.buffer, strip_args(src, todo), int(k_.border),
               rows_weights, ring);
      device.launch(rows_kernel, k_.filter + "_rows_vec",
                    cl::NDRange(groups_x, todo.count(), planes), local,
                    pass_bytes(src, todo, planes));
    }
    carry.buffer = tmp.buffer;
    carry.ring = ring;
    carry.rows = rows;
    // src is read only by the rows pass: the result may take its buffer.
    const bool whole = src.span().contains(rows);
    if (!whole && src.alpha)  // alpha comes from src's rows: StripPlan carries only without
      throw Error(ErrorKind::Internal, spec() + ": a strip with alpha starts below its rows");
    DeviceImage result = whole ? result_for(device, src) : result_for(device, src, out);
    auto cols_kernel = device.kernel("separable.cl", k_.filter + "_cols_vec", defines);
    const auto cols_weights = device.constants(k_.cols, k_.filter + " column weights");
    // The ring holds the rows pass's rows, at src's pitch.
    const StripArgs ring_rows{src.width,       src.pitch, rows.count(), rows.first,
                              src.full_height, out.first, out.last};
    set_args(cols_kernel, tmp.buffer, result.buffer, ring_rows, int(k_.border), cols_weights,
             k_.offset, ring, result.y0, result.height);
    device.launch(cols_kernel, k_.filter + "_cols_vec",
                  cl::NDRange(groups_x, ceil_div(out.count(), t.vec_cols), planes), local,
                  pass_bytes(src, out, planes));
    if (whole) copy_alpha(device, src, result);
    return result;
  }

  SeparableKernel k_;
  std::vector<std::string> details_;
};

}  // namespace

std::string format_weights(const std::vector<float>& weights) {
  std::ostringstream out;
  out << "[";
  for (std::size_t i = 0; i < weights.size(); ++i) out << (i ? " " : "") << weights[i];
  out << "]";
  return out.str();
}

std::unique_ptr<Stage> make_separable_stage(std::string spec, SeparableKernel kernel,
                                            std::vector<std::string> details) {
  return std::make_unique<SeparableStage>(std::move(spec), std::move(kernel), std::move(details));
}

FilterDef sep_filter() {
  return {.name = "sep",
          .summary = "separable filter from two 1D kernels: rows by h, then columns by v",
          .params =
              {{.name = "h", .type = ParamType::Numbers, .doc = "horizontal kernel (odd length)"},
               {.name = "v", .type = ParamType::Numbers, .doc = "vertical kernel (odd length)"},
               {.name = "scale",
                .type = ParamType::Number,
                .fallback = "auto",
                .doc = "divisor of the result (auto: sum(h)*sum(v), each 1 when 0)",
                .allow_auto = true},
               {.name = "offset", .type = ParamType::Number, .fallback = "0", .doc = "added last"},
               gray_param(),
               border_param()},
          .notes = {"lengths 1 to 1025 (odd); cost grows with len(h) + len(v) per pixel"},
          .example = "sep:h=1,4,6,4,1:v=1,2,1",
          .make = [](const Args& args) {
            const auto h = args.numbers("h"), v = args.numbers("v");
            for (const auto& [key, taps] : {std::pair{"h", h}, std::pair{"v", v}})
              if (taps.size() % 2 == 0 || taps.size() > kMaxTaps)
                args.fail(key, std::to_string(taps.size()) +
                                   " values; a 1D kernel needs an odd count up to 1025");
            const bool automatic = args.is_auto("scale");
            if (!automatic && args.number("scale") == 0) args.fail("scale", "must not be 0");
            SeparableKernel k;
            k.filter = "sep";
            k.rows = scaled_weights(h, automatic ? sum_or_one(h) : 1.0);
            k.cols = scaled_weights(v, automatic ? sum_or_one(v) : args.number("scale"));
            k.offset = float(args.number("offset"));
            k.gray = args.flag("gray");
            k.border = parse_border(args.text("border"));
            std::vector<std::string> details = {"rows " + format_weights(k.rows),
                                                "cols " + format_weights(k.cols)};
            return make_separable_stage(args.spec_text(), std::move(k), std::move(details));
          }};
}

}  // namespace halo
