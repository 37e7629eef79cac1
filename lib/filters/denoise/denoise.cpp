// denoise: Intel Open Image Denoise's trained networks (OIDN, Apache-2.0; lib/net/
// denoise_net.hpp) with OIDN's own input and output transforms: HDR colour scaled by its
// autoexposure and mapped by the PU curve, LDR colour as it is (or through the sRGB curve when
// linear), albedo clamped to [0, 1], normals mapped from [-1, 1] to [0, 1]. The network is
// picked by the guides the image has (colour, + albedo, + normal), by hdr and by quality; its
// weights come from OIDN's .tza files (scripts/fetch-weights), checked against the SHA-256 sums
// halo is built with.
//
// The image is cut into tiles whose first row and column are multiples of 16 and that reach
// the network's receptive radius past the pixels they deliver, so tiles (and strips) give the
// whole image's result. Device side: kernels/denoise.cl.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "cl/groups.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/srgb.hpp"
#include "filters/denoise/temporal.hpp"
#include "filters/guided/guides.hpp"
#include "kernels/contract.h"
#include "net/denoise_net.hpp"
#include "net/tiles.hpp"
#include "net/transfer.hpp"

// Kernel arguments laid out as OpenCL C lays them out: 4-byte members only.
static_assert(sizeof(PlanarLayout) == 6 * 4 && sizeof(DenoiseTransfer) == 5 * 4);
static_assert(sizeof(DenoiseInputArgs) == (9 + 3 * 6 + 2 + 5) * 4);
static_assert(sizeof(DenoiseOutputArgs) == (13 + 5) * 4);

namespace halo {

namespace {

namespace fs = std::filesystem;

// ---- autoexposure: the scan the executor feeds before the first strip ----

class Exposure : public InputScan, public Autoexposure {
 public:
  using Autoexposure::Autoexposure;
  void add(const Image& rows) override { Autoexposure::add(rows); }
};

// ---- parameters, and what one run does ----

enum class Quality { fast, balanced, high };
enum class Aux { noisy, clean, prefilter };

struct DenoiseParams {
  std::string weights = "auto";
  Quality quality = Quality::balanced;
  int hdr = -1, srgb = -1;  // -1: auto
  double exposure = -1;     // < 0: auto
  Aux aux = Aux::noisy;
  int tile = 0;        // largest tile side delivered; 0: as large as memory allows
  int precision = -1;  // NetPrecision, or -1: auto (fp16 where there are tensor cores)
  Border border = Border::zero;
};

// What --verify allows precision=tf32 or fp16 on tensor cores: TF32 and half products keep 10
// of float's 23 mantissa bits (half also stores the tensors between layers, rounded so). TF32,
// measured on the repository's six renders on an H100 (2026-11-25): at most 3.8e-3 x max(1,
// |reference|), PSNR against the float32 reference 53 dB, and the same PSNR against the
// converged renders to 0.003 dB.
constexpr double kTensorTolerance = 1e-2;

// How one network is applied: OIDN's transfer, range and scale for its main input.
struct Transform {
  Transfer transfer = Transfer::linear;
  bool hdr = false, snorm = false;
  float scale = 1;  // times the main input; the output is divided by it
};

// The networks of one run and how each is applied.
struct Plan {
  std::string main;                     // OIDN's name or a file
  Transform io;                         // the main network's
  bool albedo = false, normal = false;  // guides the main network reads
  std::string albedo_net, normal_net;   // prefilters of those guides ("": none)
  bool needs_exposure = false;          // hdr with exposure=auto
  // Colour far past any render's range (an infinite sample, clamped to the largest float): the
  // transfer's inverse amplifies 10-bit (TF32, half) products there past 1e-2, so the device runs
  // float32 for the image (found by the autoexposure's bins).
  bool extreme = false;
};

const Transform kAlbedoPrefilter{Transfer::srgb, false, false, 1};   // OIDN: albedo, not hdr
const Transform kNormalPrefilter{Transfer::linear, false, true, 1};  // OIDN: normals, snorm

// ---- tiles (net/tiles.hpp), on the canvas ----

// Where the network runs: the image, widened by `extent` pixels on each side where the border
// rule extends it (0 for border=zero: OIDN's own zero padding). Its first pixel is a
// multiple of the alignment away from the image's, as every tile's first pixel is.
struct Canvas {
  int width = 0, height = 0, extent = 0;
  Border border = Border::zero;
};

// The pixels a network reads for `core`: `radius` more on each side, widened to multiples of
// the network's alignment at its start (so pooling windows fall as on the whole canvas) and at
// its end unless that is the canvas's edge, within the canvas.
Box net_input(const Box& core, int radius, const Canvas& c) {
  const int a = DenoiseNet::kAlignment;
  return {std::max(-c.extent, round_down(core.x0 - radius, a)),
          std::max(-c.extent, round_down(core.y0 - radius, a)),
          std::min(c.width + c.extent, round_up(core.x1 + radius, a)),
          std::min(c.height + c.extent, round_up(core.y1 + radius, a))};
}

// A float image in canvas coordinates: channel c of pixel (x, y) at
// base[c * plane + ((y - oy) * pitch + (x - ox)) * step]; kernels/denoise.cl's PLANAR. An
// image's (the colour, the guides) is read through the canvas's border rule where the canvas
// extends past it; a tensor made on the canvas (a prefiltered guide) is read as it is.
struct Planar {
  const float* base = nullptr;
  int ox = 0, oy = 0, pitch = 0;
  std::size_t plane = 0;
  int step = 1;
  const Canvas* canvas = nullptr;  // set for images: their pixels past the edges by its border

  float at(int c, int x, int y) const {
    if (canvas) {
      x = border_index(x, canvas->width, canvas->border);
      y = border_index(y, canvas->height, canvas->border);
    }
    return base[c * plane + (std::size_t(y - oy) * pitch + (x - ox)) * step];
  }
};

Planar planar(const Image& image, const Canvas* canvas) {
  return {image.data().data(), 0, image.y0(), image.pitch(), image.plane_size(), 1, canvas};
}

Planar planar(const Activation& t, const Box& at) {
  return {t.values.data(), at.x0, at.y0, t.width, std::size_t(t.height) * t.width};
}

// The network's input for the pixels `box` (kernels/denoise.cl's denoise_input).
Activation input_reference(int channels, const Box& box, const Planar& main, int main_planes,
                           const Planar* albedo, const Planar* normal, const Transform& t) {
  const int a = DenoiseNet::kAlignment;
  Activation in(channels, round_up(box.height(), a), round_up(box.width(), a));
  for (int y = 0; y < box.height(); ++y)
    for (int x = 0; x < box.width(); ++x) {
      const int ix = box.x0 + x, iy = box.y0 + y;
      for (int c = 0; c < 3; ++c) {
        // OIDN's order: scaled, NaN to 0 (an infinity times 0 too), clamped (+Inf to FLT_MAX).
        float v = nan_to_zero(main.at(main_planes == 1 ? 0 : c, ix, iy) * t.scale);
        v = std::clamp(v, t.snorm ? -1.0f : 0.0f, t.hdr ? FLT_MAX : 1.0f);
        if (t.snorm) v = v * 0.5f + 0.5f;
        in.at(c, y, x) = forward(v, t.transfer);
      }
      if (albedo)
        for (int c = 0; c < 3; ++c)
          in.at(3 + c, y, x) = std::clamp(nan_to_zero(albedo->at(c, ix, iy)), 0.0f, 1.0f);
      if (normal)
        for (int c = 0; c < 3; ++c)
          in.at(6 + c, y, x) =
              std::clamp(nan_to_zero(normal->at(c, ix, iy)), -1.0f, 1.0f) * 0.5f + 0.5f;
    }
  return in;
}

// The network's output `result` (its (0, 0) at box's corner) into the pixels `core` of `out`
// (kernels/denoise.cl's denoise_output): one plane takes the mean of three.
void output_reference(const Activation& result, const Box& box, const Box& core, const Transform& t,
                      float* out, const Planar& layout, int planes) {
  for (int y = core.y0; y < core.y1; ++y)
    for (int x = core.x0; x < core.x1; ++x) {
      float v[3];
      for (int c = 0; c < 3; ++c) {
        float s = std::max(nan_to_zero(result.at(c, y - box.y0, x - box.x0)), 0.0f);
        s = inverse(s, t.transfer);
        if (t.snorm) s = std::max(s * 2.0f - 1.0f, -1.0f);
        if (!t.hdr) s = std::min(s, 1.0f);
        v[c] = s;
      }
      float* o = out + std::size_t(y - layout.oy) * layout.pitch + (x - layout.ox);
      if (planes == 1)
        o[0] = (v[0] + v[1] + v[2]) * (1.0f / 3.0f) * (1.0f / t.scale);
      else
        for (int c = 0; c < 3; ++c) o[c * layout.plane] = v[c] * (1.0f / t.scale);
    }
}

class DenoiseStage : public GuidedStage, public ScansInput, public StatesTolerance {
  // A run's weights and tensors on its device.
  struct State : StageState {
    NetBuffers buffers;
  };

 public:
  DenoiseStage(std::string spec, DenoiseParams p, GuideSources sources)
      : GuidedStage(std::move(spec), std::move(sources)), p_(std::move(p)) {
    // The networks OIDN publishes have one of two structures; the _large one (two convolutions
    // at each level) reaches further. A file given may be either.
    radius_ = DenoiseNet::receptive_radius(false);
    if (p_.quality == Quality::high || p_.weights != "auto")
      radius_ = std::max(radius_, DenoiseNet::receptive_radius(true));
    const int margin = radius_ + DenoiseNet::kAlignment - 1;
    reach_ = p_.aux == Aux::prefilter ? 2 * margin : margin;
  }

  // Cost: the balanced network on a 640x360 photo; the small one does about half its work,
  // the large one about twice, and aux=prefilter runs the network on the guides first.
  StageTraits traits() const override {
    const double scale = (p_.quality == Quality::fast   ? 0.5
                          : p_.quality == Quality::high ? 2
                                                        : 1) *
                         (p_.aux == Aux::prefilter ? 3 : 1);
    // Its tiles' tensors take a third of the budget (max_pixels), and their staging more.
    return {.reach = reach_,
            .tall_strips = true,
            .cost = {.reference_ns = 16000 * scale, .device_ns = 3200 * scale},
            .memory = {.budget_share = 0.5}};
  }
  std::string whole_image_reason(PixelType) const override {
    return border_whole_image_reason(p_.border);
  }
  double verify_tolerance(const Device& device, double given) const override {
    return precision(device) != NetPrecision::fp32 ? std::max(given, kTensorTolerance) : given;
  }

  std::shared_ptr<InputScan> scan(int width, int height, PixelType source) const override {
    if (!hdr(source) || p_.exposure >= 0) return nullptr;
    return std::make_shared<Exposure>(width, height);
  }

  std::vector<std::string> details(const StageRun& run) const override {
    const Guides* g = run.guides;
    // details() is asked before any pixel: the source type is not known here, so both.
    std::vector<std::string> d;
    for (const PixelType source : {PixelType::f32, PixelType::u8}) {
      const Plan plan = plan_for(g, source);
      std::string nets = plan.main;
      if (!plan.albedo_net.empty()) nets += " after " + plan.albedo_net + " on the albedo";
      if (!plan.normal_net.empty()) nets += ", " + plan.normal_net + " on the normals";
      d.push_back(fmt::format("{} input: OIDN network {}",
                              source == PixelType::f32 ? "float" : "8/16-bit", nets));
    }
    if (g && g->has_normal() && !g->has_albedo())
      d.push_back("normals unused: OIDN has no network for colour and normals without albedo");
    if (g && !g->described.empty()) d.push_back(g->described);
    return d;
  }

  Image reference_rows(const Image& in, Span out, StageRun& run) const override {
    check_size(run, in.width(), in.span(), in.full_height());
    const Plan plan = plan_for(run.guides, in.source(), exposure(run, in));
    const int planes = colour_planes(in.color_channels());
    Image result = in.like(in.channels(), in.alpha());
    const Guides* g = run.guides;
    const Canvas canvas = canvas_of(in.width(), in.full_height());
    for (const Box& core : cores(canvas, out, plan, max_pixels(plan, nullptr))) {
      const Box box = net_input(core, radius_, canvas);
      // Prefiltered guides, for the pixels the main network reads.
      Activation albedo_clean, normal_clean;
      std::optional<Planar> albedo, normal;
      if (plan.albedo) albedo = planar(g->albedo, &canvas);
      if (plan.normal) normal = planar(g->normal, &canvas);
      if (!plan.albedo_net.empty()) {
        albedo_clean = prefilter_reference(plan.albedo_net, kAlbedoPrefilter, box, *albedo, canvas);
        albedo = planar(albedo_clean, box);
      }
      if (!plan.normal_net.empty()) {
        normal_clean = prefilter_reference(plan.normal_net, kNormalPrefilter, box, *normal, canvas);
        normal = planar(normal_clean, box);
      }
      const DenoiseNet& main = net(plan.main);
      const Activation input =
          input_reference(main.input_channels(), box, planar(in, &canvas), planes,
                          albedo ? &*albedo : nullptr, normal ? &*normal : nullptr, plan.io);
      const Activation output = run_reference(main, input);
      output_reference(output, box, core, plan.io, result.data().data(), planar(result, nullptr),
                       planes);
    }
    copy_alpha(in, result);
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun& run) const override {
    check_size(run, in.width, in.span(), in.full_height);
    const Plan plan = plan_for(run.guides, in.source, exposure(device, run, in));
    const DeviceGuides& dg = device_guides(device, run);
    const int planes = colour_planes(in.color_channels());
    DeviceImage result = device.image_like(in, in.channels, in.alpha);
    const DeviceSource image{&in.buffer, 0, in.y0, in.pitch, in.plane_size(), 1, true};
    NetBuffers& buffers = run.state_as<State>().buffers;
    const Canvas canvas = canvas_of(in.width, in.full_height);
    for (const Box& core : cores(canvas, out, plan, max_pixels(plan, &device))) {
      const Box box = net_input(core, radius_, canvas);
      DeviceTensor albedo_clean, normal_clean;
      DeviceSource albedo{&dg.albedo, 0, in.y0, in.pitch, in.plane_size(), 1, true};
      // Normals x, y, z and depth of a pixel side by side (guides.hpp's DeviceGuides).
      DeviceSource normal{&dg.geometry, 0, in.y0, in.pitch, 1, 4, true};
      if (!plan.albedo_net.empty()) {
        albedo_clean = prefilter_device(device, buffers, plan.albedo_net, kAlbedoPrefilter, box,
                                        albedo, canvas);
        albedo = tensor_source(albedo_clean, box);
      }
      if (!plan.normal_net.empty()) {
        normal_clean = prefilter_device(device, buffers, plan.normal_net, kNormalPrefilter, box,
                                        normal, canvas);
        normal = tensor_source(normal_clean, box);
      }
      const DenoiseNet& main = net(plan.main);
      const int aux = plan.normal ? 2 : plan.albedo ? 1 : 0;
      DeviceTensor input = input_device(device, buffers, main.input_channels(), box, canvas, image,
                                        planes, albedo, normal, aux, plan.io);
      DeviceTensor output = run_device(device, main, input, buffers,
                                       plan.extreme ? NetPrecision::fp32 : precision(device));
      output_device(device, output, box, core, plan.io, result, planes);
      for (DeviceTensor* t : {&input, &output, &albedo_clean, &normal_clean}) buffers.release(*t);
    }
    copy_alpha(device, in, result);
    return result;
  }

 private:
  // A buffer holding floats in canvas coordinates (Planar's layout, on a device); an image's
  // is read through the canvas's border rule.
  struct DeviceSource {
    const cl::Buffer* buffer;
    int ox, oy, pitch;
    std::size_t plane;
    int step = 1;
    bool image = false;

    PlanarLayout layout() const { return {ox, oy, pitch, int(plane), step, int(image)}; }
  };

  // The transfer as the kernels take it; `scale` multiplies the input, divides the output.
  static DenoiseTransfer transfer_args(const Transform& t, float scale) {
    return {int(t.transfer), kPuNorm, scale, int(t.hdr), int(t.snorm)};
  }

  // Zero padding (OIDN's) needs no more than the image; the other rules extend it by the
  // receptive radius, a multiple of the alignment, so that its edges see their surroundings.
  Canvas canvas_of(int width, int height) const {
    const int extent = p_.border == Border::zero ? 0 : round_up(radius_, DenoiseNet::kAlignment);
    return {width, height, extent, p_.border};
  }

  static DeviceSource tensor_source(const DeviceTensor& t, const Box& at) {
    return {&t.buffer, at.x0, at.y0, t.width, std::size_t(t.height) * t.width};
  }

  static int colour_planes(int channels) {
    if (channels != 1 && channels != 3)
      throw Error(ErrorKind::BadData, fmt::format("denoise needs 1 or 3 colour channels (and "
                                                  "alpha), the image has {}",
                                                  channels));
    return channels;
  }

  // What the device runs: tf32 and fp16 only on tensor cores.
  NetPrecision precision(const Device& device) const {
    if (!device.profile().tensor_cores || p_.precision == int(NetPrecision::fp32))
      return NetPrecision::fp32;
    // auto: fp16, the fastest within the tolerance (H200, 1080p: 4.6 ms against tf32's 10.2;
    // both within 0.003 dB of fp32 on nine renders, docs/denoising.md).
    return p_.precision >= 0 ? NetPrecision(p_.precision) : NetPrecision::fp16;
  }

  bool hdr(PixelType source) const { return p_.hdr >= 0 ? p_.hdr == 1 : source == PixelType::f32; }

  std::string network_name(bool hdr, bool albedo, bool normal) const {
    std::string name = hdr ? "rt_hdr" : "rt_ldr";
    if (albedo && normal)
      name += p_.aux == Aux::noisy ? "_alb_nrm" : "_calb_cnrm";
    else if (albedo)
      name += "_alb";
    if (p_.quality == Quality::fast) return name + "_small";
    if (p_.quality == Quality::high && name == "rt_hdr_calb_cnrm") return name + "_large";
    return name;
  }

  // What a run does with the guides `g` (null: none) on an image of `source` type.
  Plan plan_for(const Guides* g, PixelType source, ExposureFound exposure = {}) const {
    Plan plan;
    const bool is_hdr = hdr(source);
    plan.albedo = g && g->has_albedo();
    plan.normal = plan.albedo && g->has_normal();
    plan.main = p_.weights != "auto" ? p_.weights : network_name(is_hdr, plan.albedo, plan.normal);
    if (p_.aux == Aux::prefilter) {
      const char* large = p_.quality == Quality::high ? "_large" : "";
      if (plan.albedo) plan.albedo_net = std::string("rt_alb") + large;
      if (plan.normal) plan.normal_net = std::string("rt_nrm") + large;
    }
    plan.io.hdr = is_hdr;
    // LDR: 8/16-bit values are display-encoded already (OIDN's srgb mode) unless srgb=0.
    const bool display = p_.srgb >= 0 ? p_.srgb == 1 : source != PixelType::f32;
    plan.io.transfer = is_hdr ? Transfer::pu : display ? Transfer::linear : Transfer::srgb;
    plan.io.scale = is_hdr ? (p_.exposure >= 0 ? float(p_.exposure) : exposure.scale) : 1.0f;
    plan.needs_exposure = is_hdr && p_.exposure < 0;
    plan.extreme = exposure.extreme;
    return plan;
  }

  // The run's exposure: its scan's, or the image's own when it holds the whole image.
  ExposureFound exposure(const StageRun& run, const Image& in) const {
    if (!hdr(in.source()) || p_.exposure >= 0) return {};
    if (const auto* scan = dynamic_cast<const Exposure*>(run.scan.get())) return scan->value();
    whole_or_fail(in.span(), in.full_height());
    Exposure e(in.width(), in.full_height());
    e.add(in);
    return e.value();
  }

  ExposureFound exposure(Device& device, const StageRun& run, const DeviceImage& in) const {
    if (!hdr(in.source) || p_.exposure >= 0) return {};
    if (const auto* scan = dynamic_cast<const Exposure*>(run.scan.get())) return scan->value();
    whole_or_fail(in.span(), in.full_height);
    const Exposure shape(in.width, in.full_height);
    std::vector<float> means(std::size_t(shape.bins_w()) * shape.bins_h());
    cl::Buffer bins = device.buffer(means.size() * sizeof(float), "exposure bins");
    auto k = device.kernel("denoise.cl", "denoise_exposure_bins", {});
    const PlanarLayout layout{
        .oy = in.y0, .pitch = in.pitch, .plane = int(in.plane_size()), .step = 1};
    set_args(k, in.buffer, layout, colour_planes(in.color_channels()), in.width, in.full_height,
             shape.bins_w(), shape.bins_h(), bins);
    device.launch(k, "exposure",
                  cl::NDRange(std::size_t(shape.bins_w()) * GROUP_SQUARE,
                              std::size_t(shape.bins_h()) * GROUP_SQUARE),
                  groups::square, in.plane_size() * 3 * sizeof(float));
    device.read(bins, means.data(), means.size() * sizeof(float), "exposure bins");
    return {Exposure::from_means(means), Exposure::extreme(means)};
  }

  void whole_or_fail(Span rows, int height) const {
    if (rows.first != 0 || rows.last != height)
      throw Error(ErrorKind::Internal,
                  "'" + spec() + "': the exposure of a strip's image is not known (no scan)");
  }

  std::vector<Box> cores(const Canvas& canvas, Span out, const Plan& plan,
                         double max_pixels) const {
    return tile_cores(out, canvas.width, canvas.height, reach_for(plan), max_pixels, p_.tile);
  }
  int reach_for(const Plan& plan) const {
    const int margin = radius_ + DenoiseNet::kAlignment - 1;
    return plan.albedo_net.empty() && plan.normal_net.empty() ? margin : 2 * margin;
  }

  // Pixels of a tile's largest network input whose tensors fit: a third of --max-memory (the
  // strips take at most half: choose_strip_rows), and on GPUs also half the device's memory;
  // each tensor within the largest buffer. Floats a pixel: the network's largest set of live
  // tensors (DenoiseNet::floats_per_pixel), times what each path adds: upsampled copies on
  // CPUs, and on the reference also the concatenated input of each decoder level.
  double max_pixels(const Plan& plan, const Device* device) const {
    const double factor = !device ? 2.6 : device->profile().vector_kernels ? 1.7 : 1.15;
    const double floats = factor * net(plan.main).floats_per_pixel() + 12;
    double memory = double(memory_per_file()) / 3;
    if (device && device->profile().own_memory)
      memory = std::min(memory, double(device->info().global_memory) / 2);
    double pixels = memory / (floats * sizeof(float));
    if (device)
      pixels =
          std::min(pixels, double(device->info().max_allocation) / (kWidestTensor * sizeof(float)));
    return pixels;
  }
  // Channels of the widest tensor of OIDN's networks at full resolution (the _large ones' 64,
  // upsampled with their input: 105; within this).
  static constexpr double kWidestTensor = 128;

  // A guide's prefiltered copy over `box` (rt_alb or rt_nrm run over the pixels it reads).
  Activation prefilter_reference(const std::string& name, const Transform& t, const Box& box,
                                 const Planar& guide, const Canvas& canvas) const {
    const DenoiseNet& n = net(name);
    const Box reads = net_input(box, radius_, canvas);
    const Activation input =
        input_reference(n.input_channels(), reads, guide, 3, nullptr, nullptr, t);
    const Activation output = run_reference(n, input);
    Activation clean(3, box.height(), box.width());
    output_reference(output, reads, box, t, clean.values.data(), planar(clean, box), 3);
    return clean;
  }

  DeviceTensor prefilter_device(Device& device, NetBuffers& buffers, const std::string& name,
                                const Transform& t, const Box& box, const DeviceSource& guide,
                                const Canvas& canvas) const {
    const DenoiseNet& n = net(name);
    const Box reads = net_input(box, radius_, canvas);
    DeviceTensor input = input_device(device, buffers, n.input_channels(), reads, canvas, guide, 3,
                                      guide, guide, 0, t);
    DeviceTensor output = run_device(device, n, input, buffers, precision(device));
    DeviceTensor clean = buffers.tensor(device, 3, box.height(), box.width(), name + " result");
    write_output(device, output, reads, box, t, clean.buffer, box.x0, box.y0, box.width(),
                 std::size_t(box.height()) * box.width(), 3);
    buffers.release(input);
    buffers.release(output);
    return clean;
  }

  static DeviceTensor input_device(Device& device, NetBuffers& buffers, int channels,
                                   const Box& box, const Canvas& canvas, const DeviceSource& main,
                                   int main_planes, const DeviceSource& albedo,
                                   const DeviceSource& normal, int aux, const Transform& t) {
    const int a = DenoiseNet::kAlignment;
    const int th = round_up(box.height(), a), tw = round_up(box.width(), a);
    DeviceTensor input = buffers.tensor(device, channels, th, tw, "network input");
    auto k = device.kernel("denoise.cl", "denoise_input", {});
    const DenoiseInputArgs args{.th = th,
                                .tw = tw,
                                .rx = box.x0,
                                .ry = box.y0,
                                .rw = box.width(),
                                .rh = box.height(),
                                .width = canvas.width,
                                .height = canvas.height,
                                .border = int(canvas.border),
                                .main = main.layout(),
                                .albedo = albedo.layout(),
                                .normal = normal.layout(),
                                .main_planes = main_planes,
                                .aux = aux,
                                .transfer = transfer_args(t, t.scale)};
    set_args(k, input.buffer, *main.buffer, *albedo.buffer, *normal.buffer, args);
    device.launch(k, "input", cl::NDRange(tw, th), groups::net,
                  std::size_t(channels) * th * tw * sizeof(float) * 2);
    return input;
  }

  static void output_device(Device& device, const DeviceTensor& output, const Box& box,
                            const Box& core, const Transform& t, DeviceImage& result, int planes) {
    write_output(device, output, box, core, t, result.buffer, 0, result.y0, result.pitch,
                 result.plane_size(), planes);
  }

  static void write_output(Device& device, const DeviceTensor& output, const Box& box,
                           const Box& core, const Transform& t, const cl::Buffer& out, int ox,
                           int oy, int pitch, std::size_t plane, int planes) {
    auto k = device.kernel("denoise.cl", "denoise_output", {});
    const DenoiseOutputArgs args{.th = output.height,
                                 .tw = output.width,
                                 .rx = box.x0,
                                 .ry = box.y0,
                                 .out_ox = ox,
                                 .out_oy = oy,
                                 .out_pitch = pitch,
                                 .out_plane = int(plane),
                                 .planes = planes,
                                 .cx = core.x0,
                                 .cy = core.y0,
                                 .cw = core.width(),
                                 .ch = core.height(),
                                 .transfer = transfer_args(t, 1.0f / t.scale)};
    set_args(k, output.buffer, out, args);
    device.launch(k, "output", cl::NDRange(core.width(), core.height()), groups::net,
                  std::size_t(core.width()) * core.height() * (3 + planes) * sizeof(float));
  }

  const DenoiseNet& net(const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto& slot = nets_[name];
    if (!slot) slot = DenoiseNet::load(name);
    return *slot;
  }

  DenoiseParams p_;
  int radius_ = 0, reach_ = 0;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::shared_ptr<const DenoiseNet>> nets_;
};

}  // namespace

FilterDef denoise_filter() {
  const char* sources =
      "; auto: the input's EXR layers (Blender ViewLayer.*, albedo.*, N.*) when present; off: "
      "not used";
  std::vector<Param> params = {
      {.name = "quality",
       .type = ParamType::Choice,
       .fallback = "balanced",
       .doc = "fast: OIDN's _small networks (about a third of the work); balanced: its default "
              "networks; high: the _large ones where OIDN publishes them (clean or prefiltered "
              "albedo and normals), else the default",
       .choices = {"fast", "balanced", "high"}},
      {.name = "aux",
       .type = ParamType::Choice,
       .fallback = "noisy",
       .doc = "the albedo and normals are noisy like the colour (rendered with it); clean: "
              "noise-free (OIDN's cleanAux networks); prefilter: denoised first by OIDN's "
              "rt_alb and rt_nrm networks, then used as clean (best, slowest)",
       .choices = {"noisy", "clean", "prefilter"}},
      {.name = "hdr",
       .type = ParamType::Choice,
       .fallback = "auto",
       .doc = "the colour is high dynamic range (OIDN's rt_hdr networks, PU transfer); auto: "
              "float images (EXR, PFM) are, 8/16-bit ones are not",
       .choices = {"auto", "0", "1"}},
      {.name = "srgb",
       .type = ParamType::Choice,
       .fallback = "auto",
       .doc = "low dynamic range colour is display-encoded (sRGB) already; 0: it is linear, "
              "and goes through the sRGB curve for the network; auto: 8/16-bit values are "
              "display-encoded, float values linear",
       .choices = {"auto", "0", "1"}},
      {.name = "exposure",
       .type = ParamType::Number,
       .fallback = "auto",
       .doc = "HDR colour is multiplied by this before the network and divided by it after "
              "(OIDN's inputScale); auto: 0.18 over the log-mean luminance of 16x16-pixel bins "
              "(OIDN's autoexposure), measured over the whole image first",
       .min = 1e-20,
       .max = 1e20,
       .allow_auto = true},
      {.name = "precision",
       .type = ParamType::Choice,
       .fallback = "auto",
       .doc = "fp32: float32 arithmetic, agreeing with the reference to float rounding; tf32: "
              "products on NVIDIA's tensor cores with 10-bit mantissas and float32 sums, about "
              "twice as fast, within 1e-2 x max(1, |reference|) (what --verify then allows; "
              "float32 on other devices); fp16: half products on the tensor cores and half "
              "tensors between the layers (values past 65504 clamped), float32 sums, about four "
              "times as fast as fp32, within the same tolerance; auto: fp16 where there are "
              "tensor cores, float32 for an image with colour past 1e30 (an infinite sample)",
       .choices = {"auto", "fp32", "tf32", "fp16"}},
      {.name = "tile",
       .type = ParamType::Integer,
       .fallback = "auto",
       .doc = "largest side of the tiles the image is denoised in (auto: as large as memory "
              "allows; the whole image where it fits); each tile also reads the network's "
              "receptive field around it, so smaller tiles use less memory and repeat more work, "
              "with the same result",
       .min = 16,
       .max = 65536,
       .allow_auto = true},
      {.name = "border",
       .type = ParamType::Choice,
       .fallback = "zero",
       .doc = "zero: the network pads the image with zeros, as OIDN does (and as it was "
              "trained); clamp, reflect, wrap: the image is first extended by the border rule "
              "by the network's receptive field (96 pixels a side), so edge pixels see "
              "surroundings like the rest",
       .choices = {"zero", "clamp", "reflect", "wrap"}},
      {.name = "weights",
       .type = ParamType::File,
       .fallback = "auto",
       .doc = "the network: auto (chosen from hdr, the guides present, aux and quality), one "
              "of OIDN's by name (rt_hdr_alb_nrm, rt_ldr_small, ...), or a .tza file"},
      {.name = "albedo",
       .type = ParamType::File,
       .fallback = "auto",
       .doc = std::string("diffuse colour, 3 channels, e.g. a.exr[R,G,B]") + sources},
      {.name = "normal",
       .type = ParamType::File,
       .fallback = "auto",
       .doc =
           std::string("normals, 3 channels in [-1, 1] (any space), used with albedo") + sources},
      {.name = "temporal",
       .type = ParamType::Integer,
       .fallback = "0",
       .doc = "frames of a sequence on each side averaged with each frame after denoising, "
              "followed through the motion vectors where depth, normals and albedo say the same "
              "surface is seen (shot.0041.exr reads shot.0039-0043.exr; the ends of a sequence "
              "use the frames that exist); 0: each frame alone",
       .min = 0,
       .max = 8},
      {.name = "motion",
       .type = ParamType::File,
       .fallback = "auto",
       .doc = "temporal: the motion in pixels, Blender's Vector pass (X, Y towards the previous "
              "frame, Z, W towards the next; a pixel (x, y) was at (x + X, y - Y)); auto: the "
              "input's Vector layer; [X,Y,Z,W]: the frame's own channels of that name, "
              "mv.####.exr[X,Y,Z,W]: a file per frame (#### its number), another renderer's in "
              "this convention (2 channels: only earlier frames); zero: a still camera and "
              "scene",
       .choices = {"[channels]", "auto", "zero"}},
      {.name = "temporal_sigma",
       .type = ParamType::Number,
       .fallback = "0.065",
       .doc = "temporal: how far a neighbour's 5x5 patch may differ from the frame's (tone-mapped "
              "display values) and still count; larger smooths more in time and ghosts sooner",
       .min = 1e-4,
       .max = 10}};
  return {
      .name = "denoise",
      .summary =
          "render denoising with Intel Open Image Denoise's trained networks (OIDN's "
          "U-Net and weights), guided by albedo and normals",
      .params = std::move(params),
      .notes = {"network: rt_hdr (colour), rt_hdr_alb (+ albedo), rt_hdr_alb_nrm (+ albedo and "
                "normals), rt_hdr_calb_cnrm (clean guides); rt_ldr* for 8/16-bit colour; "
                "weights from scripts/fetch-weights (OIDN, Apache-2.0), SHA-256 checked",
                "run in tiles that overlap by the network's receptive field, aligned to 16: "
                "strips and tiles give the whole image's result",
                "--verify compares with the C++ reference of every layer; results agree to "
                "float rounding (summation order), not bit for bit",
                "border=zero is OIDN's own padding; the other rules cost the 96-pixel extension "
                "around the image",
                "non-finite samples as OIDN's input process takes them: NaN as 0, +Inf as the "
                "largest float (colour, and in the autoexposure), guides clamped to their "
                "ranges; the result is finite"},
      .example = "denoise:quality=high:aux=prefilter",
      .make = [](const Args& args) -> std::unique_ptr<Stage> {
        DenoiseParams p;
        p.weights = args.text("weights");
        p.quality = args.choice<Quality>(
            "quality",
            {{"fast", Quality::fast}, {"balanced", Quality::balanced}, {"high", Quality::high}});
        p.aux = args.choice<Aux>(
            "aux", {{"noisy", Aux::noisy}, {"clean", Aux::clean}, {"prefilter", Aux::prefilter}});
        p.hdr = args.is_auto("hdr") ? -1 : args.text("hdr") == "1";
        p.srgb = args.is_auto("srgb") ? -1 : args.text("srgb") == "1";
        if (!args.is_auto("exposure")) p.exposure = args.number("exposure");
        if (!args.is_auto("tile")) p.tile = args.integer("tile");
        p.border = parse_border(args.text("border"));
        if (!args.is_auto("precision"))
          p.precision = int(args.choice<NetPrecision>("precision", {{"fp32", NetPrecision::fp32},
                                                                    {"tf32", NetPrecision::tf32},
                                                                    {"fp16", NetPrecision::fp16}}));
        if (p.weights == "off") args.fail("weights", "the network cannot be off");
        GuideSources sources{args.text("normal"), "off", args.text("albedo"), false};
        if (sources.albedo == "off" && sources.normal != "off" && sources.normal != "auto")
          args.fail("normal", "needs albedo: OIDN has no network for colour and normals alone");
        if (p.weights != "auto" && p.aux == Aux::prefilter)
          args.fail("aux", "prefilter chooses OIDN's networks itself; not with weights=");
        const int temporal = args.integer("temporal");
        if (temporal == 0) {
          for (const char* name : {"motion", "temporal_sigma"})
            if (args.given(name)) args.fail(name, "needs temporal=N (N frames each side)");
          return std::make_unique<DenoiseStage>(args.spec_text(), std::move(p), sources);
        }
        auto per_frame = std::make_shared<DenoiseStage>(args.spec_text(), std::move(p), sources);
        TemporalParams t{.radius = temporal, .sigma = float(args.number("temporal_sigma"))};
        GuideSources with_motion = sources;
        with_motion.depth = "auto";
        with_motion.motion = args.text("motion");
        t.zero_motion = with_motion.motion == "zero";
        const std::string& motion = with_motion.motion;
        if (motion == "off")
          args.fail("motion", "cannot be off: auto, a file, or zero for a still camera");
        if (motion != "auto" && motion != "zero" && !motion.starts_with('[') &&
            motion.find('#') == std::string::npos)
          args.fail("motion", "'" + motion +
                                  "' would give every frame the same vectors: name "
                                  "each frame's own, [X,Y,Z,W] in the frame's file or a file per "
                                  "frame, mv.####.exr[X,Y,Z,W]");
        return make_temporal_denoise(args.spec_text(), std::move(per_frame), t,
                                     std::move(with_motion));
      },
      .guided = true,
      .swept = false};
}

}  // namespace halo
