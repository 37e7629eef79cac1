// denoise:temporal=N (temporal.hpp says what it does; docs/denoising.md why this form).
#include "filters/denoise/temporal.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "cl/groups.hpp"
#include "core/concurrency.hpp"
#include "core/error.hpp"
#include "kernels/contract.h"

namespace halo {

FrameShape DenoisedFrame::shape() const {
  if (pack()) return packed;
  return {.width = colour.width(),
          .height = colour.height(),
          .planes = colour.channels(),
          .normal = guides.has_normal(),
          .depth = guides.has_depth(),
          .albedo = guides.has_albedo(),
          .motion = guides.motion.channels(),
          .colours = colour.color_channels()};
}

namespace {

constexpr int kGuidePlanes = TEMPORAL_GUIDE_PLANES;

// ---- the reference: kernels/temporal.cl, operation for operation ----

float bilinear(const Image& image, int c, float x, float y) {
  // A position followed through a NaN vector reads nothing (and is never seen); infinite ones
  // are clamped like any other.
  if (std::isnan(x) || std::isnan(y)) return 0.0f;
  const int width = image.width(), height = image.height();
  x = std::clamp(x, 0.0f, float(width - 1));
  y = std::clamp(y, 0.0f, float(height - 1));
  const int x0 = int(std::floor(x)), y0 = int(std::floor(y));
  const int x1 = std::min(x0 + 1, width - 1), y1 = std::min(y0 + 1, height - 1);
  const float fx = x - float(x0), fy = y - float(y0);
  const float* r0 = image.row(c, y0);
  const float* r1 = image.row(c, y1);
  const float top = (1.0f - fx) * r0[x0] + fx * r0[x1];
  const float bottom = (1.0f - fx) * r1[x0] + fx * r1[x1];
  return (1.0f - fy) * top + fy * bottom;
}

float tone(float v) {
  v = std::max(v, 0.0f);
  return std::pow(v / (1.0f + v), 1.0f / 2.2f);
}

// Blender's vectors: towards the previous frame (x + X, y - Y), towards the next (x - Z, y + W).
struct Direction {
  int plane;  // of the motion image
  float sx, sy;
};
Direction direction(bool back) {
  return back ? Direction{0, 1.0f, -1.0f} : Direction{2, -1.0f, 1.0f};
}

// Positions of the centre's pixels in another frame: x and y planes.
Image start_positions(int width, int height) {
  Image pos(width, height, 2);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) pos.at(x, y, 0) = float(x), pos.at(x, y, 1) = float(y);
  return pos;
}

void step(Image& pos, const Image& motion, Direction d, bool first) {
  for (int y = 0; y < pos.height(); ++y)
    for (int x = 0; x < pos.width(); ++x) {
      const float px = first ? float(x) : pos.at(x, y, 0);
      const float py = first ? float(y) : pos.at(x, y, 1);
      const float mx = bilinear(motion, d.plane, px, py);
      const float my = bilinear(motion, d.plane + 1, px, py);
      pos.at(x, y, 0) = px + d.sx * mx;
      pos.at(x, y, 1) = py + d.sy * my;
    }
}

int shared_guides(const FrameShape& a, const FrameShape& b) {
  return (a.normal && b.normal ? TEMPORAL_HAS_NORMAL : 0) |
         (a.depth && b.depth ? TEMPORAL_HAS_DEPTH : 0) |
         (a.albedo && b.albedo ? TEMPORAL_HAS_ALBEDO : 0);
}

float length(const Image& n, int x, int y) {
  const float a = n.at(x, y, 0), b = n.at(x, y, 1), c = n.at(x, y, 2);
  return std::sqrt(a * a + b * b + c * c);
}

// Whether `other` sees at (px, py) the surface the centre has at (x, y) (temporal_distance).
bool seen_at(const DenoisedFrame& centre, const DenoisedFrame& other, int has, int x, int y,
             float px, float py) {
  const int width = centre.colour.width(), height = centre.colour.height();
  if (!(px >= 0.0f && px <= float(width - 1) && py >= 0.0f && py <= float(height - 1)))
    return false;
  const int qx = std::clamp(int(std::floor(px + 0.5f)), 0, width - 1);
  const int qy = std::clamp(int(std::floor(py + 0.5f)), 0, height - 1);
  const Guides& c = centre.guides;
  const Guides& o = other.guides;
  float zmin = INFINITY, zmax = -INFINITY, best = -2.0f;
  float amin[3] = {INFINITY, INFINITY, INFINITY}, amax[3] = {-INFINITY, -INFINITY, -INFINITY};
  const float ls = (has & TEMPORAL_HAS_NORMAL) ? length(o.normal, qx, qy) : 0.0f;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      const int jx = std::clamp(x + dx, 0, width - 1), jy = std::clamp(y + dy, 0, height - 1);
      if (has & TEMPORAL_HAS_DEPTH) {
        zmin = std::fmin(zmin, c.depth.at(jx, jy, 0));
        zmax = std::fmax(zmax, c.depth.at(jx, jy, 0));
      }
      if (has & TEMPORAL_HAS_NORMAL) {
        const float lt = length(c.normal, jx, jy);
        float cosine = -1.0f;
        if (ls == 0.0f && lt == 0.0f)
          cosine = 1.0f;
        else if (ls != 0.0f && lt != 0.0f)
          cosine = (o.normal.at(qx, qy, 0) * c.normal.at(jx, jy, 0) +
                    o.normal.at(qx, qy, 1) * c.normal.at(jx, jy, 1) +
                    o.normal.at(qx, qy, 2) * c.normal.at(jx, jy, 2)) /
                   (ls * lt);
        best = std::fmax(best, cosine);
      }
      if (has & TEMPORAL_HAS_ALBEDO)
        for (int k = 0; k < 3; ++k) {
          amin[k] = std::fmin(amin[k], c.albedo.at(jx, jy, k));
          amax[k] = std::fmax(amax[k], c.albedo.at(jx, jy, k));
        }
    }
  bool ok = true;
  if (has & TEMPORAL_HAS_DEPTH) {
    const float zs = o.depth.at(qx, qy, 0);
    ok = zs >= 0.95f * zmin && zs <= 1.05f * zmax;
  }
  if (has & TEMPORAL_HAS_NORMAL) ok = ok && best >= 0.9f;
  if (has & TEMPORAL_HAS_ALBEDO)
    for (int k = 0; k < 3; ++k) {
      const float a = o.albedo.at(qx, qy, k);
      ok = ok && a >= amin[k] - 0.1f && a <= amax[k] + 0.1f;
    }
  return ok;
}

// The neighbours in the order they are followed: outwards from the centre, back then forward,
// each step from the frame before it.
std::vector<int> neighbour_order(int size, int centre) {
  std::vector<int> order;
  for (int s = centre - 1; s >= 0; --s) order.push_back(s);
  for (int s = centre + 1; s < size; ++s) order.push_back(s);
  return order;
}

// The frames a chain from the centre to `s` steps over (all must exist), null when one is
// missing or cannot be followed (no motion that way).
bool followable(const std::vector<const DenoisedFrame*>& window, int centre, int s,
                bool zero_motion) {
  const int toward = s < centre ? -1 : 1;
  for (int k = centre; k != s; k += toward) {
    if (!window[k]) return false;
    if (zero_motion) continue;
    const int motion = window[k]->shape().motion;
    if (motion == 0 || (toward > 0 && motion < 4)) return false;
  }
  return window[s] != nullptr;
}

void check_window(const std::vector<const DenoisedFrame*>& window, int centre) {
  const FrameShape c = window.at(centre)->shape();
  for (const DenoisedFrame* f : window) {
    if (!f) continue;
    const FrameShape s = f->shape();
    if (s.width != c.width || s.height != c.height || s.planes != c.planes ||
        s.colours != c.colours)
      throw Error(ErrorKind::BadData,
                  fmt::format("temporal denoising: a frame of the sequence is {}x{} ({} colour "
                              "channels), this one {}x{} ({})",
                              s.width, s.height, s.planes, c.width, c.height, c.planes));
  }
}

}  // namespace

namespace {

// The blend's working planes on the host.
struct Accumulation {
  Image sum, weight, warped, distance, seen;

  Accumulation(int width, int height, int planes)
      : sum(width, height, planes),
        weight(width, height, 1),
        warped(width, height, planes),
        distance(width, height, 1),
        seen(width, height, 1) {}
};

// Neighbour `o` at the centre's followed positions `pos`: its colour there, the squared
// tone-mapped difference, and whether it sees the centre's surface (temporal_distance).
void measure(const DenoisedFrame& t, const DenoisedFrame& o, const Image& pos, Accumulation& a) {
  const int has = shared_guides(t.shape(), o.shape()), planes = t.colour.channels();
  const int colours = t.colour.color_channels();
  for (int y = 0; y < pos.height(); ++y)
    for (int x = 0; x < pos.width(); ++x) {
      const float px = pos.at(x, y, 0), py = pos.at(x, y, 1);
      float d = 0.0f;
      for (int c = 0; c < planes; ++c) {
        const float v = bilinear(o.colour, c, px, py);
        a.warped.at(x, y, c) = v;
        if (c >= colours) continue;  // alpha: averaged, not compared
        const float e = tone(v) - tone(t.colour.at(x, y, c));
        d += e * e;
      }
      a.distance.at(x, y, 0) = d / float(colours);
      a.seen.at(x, y, 0) = seen_at(t, o, has, x, y, px, py) ? 1.0f : 0.0f;
    }
}

// Adds the measured neighbour where seen, weighted by its patch (temporal_accumulate).
void accumulate(Accumulation& a, int patch, float inv_sigma2) {
  const int width = a.sum.width(), height = a.sum.height(), planes = a.sum.channels();
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      if (a.seen.at(x, y, 0) == 0.0f) continue;
      float total = 0.0f;
      int n = 0;
      for (int yy = std::max(y - patch, 0); yy <= std::min(y + patch, height - 1); ++yy)
        for (int xx = std::max(x - patch, 0); xx <= std::min(x + patch, width - 1); ++xx)
          total += a.distance.at(xx, yy, 0), ++n;
      const float w = std::exp(-(total / float(n)) * inv_sigma2);
      for (int c = 0; c < planes; ++c) a.sum.at(x, y, c) += w * a.warped.at(x, y, c);
      a.weight.at(x, y, 0) += w;
    }
}

}  // namespace

Image temporal_blend_reference(const std::vector<const DenoisedFrame*>& window, int centre,
                               const TemporalParams& params) {
  check_window(window, centre);
  const DenoisedFrame& t = *window[centre];
  const int width = t.colour.width(), height = t.colour.height(), planes = t.colour.channels();
  Accumulation a(width, height, planes);
  Image pos = start_positions(width, height);
  int last = centre;  // the frame `pos` has reached
  for (const int s : neighbour_order(int(window.size()), centre)) {
    if (!followable(window, centre, s, params.zero_motion)) continue;
    const bool back = s < centre;
    if (back != (last < centre)) last = centre;  // each way starts from the centre
    if (!params.zero_motion)
      for (int k = last; k != s; k += back ? -1 : 1)
        step(pos, window[k]->guides.motion, direction(back), k == centre);
    last = s;
    measure(t, *window[s], pos, a);
    accumulate(a, params.patch_radius, 1.0f / (params.sigma * params.sigma));
  }
  Image result = t.colour.like(planes, t.colour.alpha());
  for (int c = 0; c < planes; ++c)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        result.at(x, y, c) =
            (t.colour.at(x, y, c) + a.sum.at(x, y, c)) / (1.0f + a.weight.at(x, y, 0));
  return result;
}

namespace {

// The float planes a window of 2N+1 frames holds per pixel and the blend's own working planes:
// what the stage declares (StageMemory).
int temporal_image_planes(int radius) {
  // On the reference (a device holds the window in its own memory, the host less): each frame
  // of the window, colour (3) and its guides; the blend's positions (2), warped colour (3),
  // distance, seen, sum (3) and weight; the frames kept decoded (colour and alpha, guides: as
  // many as the window) for the windows and their own runs; a neighbour being denoised (its
  // planes and its result).
  const int frame = 3 + kGuidePlanes, decoded = 4 + kGuidePlanes, window = 2 * radius + 1;
  return window * frame + (2 + 3 + 1 + 1 + 3 + 1) + window * decoded + (decoded + 4);
}

// A frame's pack with room for `planes` colour planes and the guides, which are written into
// it (zero where absent); `plane`: bytes a plane.
cl::Buffer guide_pack(Device& device, const Guides& guides, int planes, std::size_t plane) {
  const std::size_t bytes = (planes + kGuidePlanes) * plane;
  cl::Buffer buffer = device.buffer(bytes, "temporal frame");
  device.fill_zero(buffer, bytes, "temporal frame");
  const auto put = [&](const Image& g, int at, int count) {
    if (g.width() == 0) return;
    device.write_at(buffer, (planes + at) * plane, g.data().data(),
                    std::min(count, g.channels()) * plane, "temporal upload");
  };
  put(guides.normal, TEMPORAL_NORMAL, 3);
  put(guides.depth, TEMPORAL_DEPTH, 1);
  put(guides.albedo, TEMPORAL_ALBEDO, 3);
  put(guides.motion, TEMPORAL_MOTION, 4);
  return buffer;
}

}  // namespace

cl::Buffer upload_frame(Device& device, const DenoisedFrame& f) {
  const Image& c = f.colour;
  const std::size_t plane = c.plane_size() * sizeof(float);
  cl::Buffer buffer = guide_pack(device, f.guides, c.channels(), plane);
  device.write_at(buffer, 0, c.data().data(), c.channels() * plane, "temporal upload");
  return buffer;
}

namespace {

// The blend on a device: the window's packs, the working buffers, one launch per step.
class DeviceBlend {
 public:
  DeviceBlend(Device& device, const std::vector<const DenoisedFrame*>& window, int centre)
      : device_(device), window_(window), centre_(centre) {
    const FrameShape shape = window[centre]->shape();
    width_ = shape.width, height_ = shape.height, planes_ = shape.planes;
    colours_ = shape.colours;
    pitch_ = aligned_pitch(width_);
    plane_ = cl_ulong(pitch_) * height_;
    const std::size_t bytes = plane_ * sizeof(float);
    pos_ = device.buffer(2 * bytes, "temporal positions");
    warped_ = device.buffer(planes_ * bytes, "temporal warped");
    distance_ = device.buffer(bytes, "temporal distance");
    seen_ = device.buffer(bytes, "temporal seen");
    sum_ = device.buffer(planes_ * bytes, "temporal sum");
    weight_ = device.buffer(bytes, "temporal weight");
    device.fill_zero(sum_, planes_ * bytes, "temporal sum");
    device.fill_zero(weight_, bytes, "temporal weight");
  }

  bool fits(const DeviceImage& result) const {
    return result.pitch == pitch_ && result.height == height_ && result.y0 == 0;
  }
  // Positions every pixel where it is (motion=zero).
  void stay() {
    auto k = device_.kernel("temporal.cl", "temporal_still", {});
    set_args(k, pos_, width_, height_, pitch_, plane_);
    launch(k, "still", 2);
  }
  // Positions moved one frame on through frame f's vectors, back or forward.
  void follow(int f, bool back) {
    const Direction d = direction(back);
    auto k = device_.kernel("temporal.cl", "temporal_step", {});
    set_args(k, pos_, pack(f), planes_ + TEMPORAL_MOTION + d.plane, d.sx, d.sy, int(f == centre_),
             width_, height_, pitch_, plane_);
    launch(k, "follow", 4);
  }
  // Neighbour s measured at the positions, then added where seen.
  void add(int s, const TemporalParams& params) {
    const int has = shared_guides(window_[centre_]->shape(), window_[s]->shape());
    auto k = device_.kernel("temporal.cl", "temporal_distance", {});
    set_args(k, pos_, pack(centre_), pack(s), planes_, colours_, has, width_, height_, pitch_,
             plane_, warped_, distance_, seen_);
    launch(k, "distance", 2 * planes_ + 4);
    auto a = device_.kernel("temporal.cl", "temporal_accumulate", {});
    set_args(a, distance_, seen_, warped_, planes_, params.patch_radius,
             1.0f / (params.sigma * params.sigma), width_, height_, pitch_, plane_, sum_, weight_);
    launch(a, "accumulate", 3 * planes_ + 3);
  }
  void finish(DeviceImage& result) {
    auto k = device_.kernel("temporal.cl", "temporal_finish", {});
    set_args(k, result.buffer, sum_, weight_, planes_, width_, height_, pitch_, plane_);
    launch(k, "finish", 3 * planes_ + 1);
  }

 private:
  cl::Buffer& pack(int k) {
    auto it = packs_.find(k);
    if (it == packs_.end()) {
      const DenoisedFrame& f = *window_[k];
      it = packs_.emplace(k, f.pack() ? f.pack : upload_frame(device_, f)).first;
    }
    return it->second;
  }
  // `planes` planes' worth of floats moved, for --timings.
  void launch(cl::Kernel& k, const char* label, int planes) {
    device_.launch(k, label, cl::NDRange(width_, height_), groups::square,
                   std::size_t(planes) * width_ * height_ * sizeof(float));
  }

  Device& device_;
  const std::vector<const DenoisedFrame*>& window_;
  int centre_, width_ = 0, height_ = 0, planes_ = 0, colours_ = 0, pitch_ = 0;
  cl_ulong plane_ = 0;
  cl::Buffer pos_, warped_, distance_, seen_, sum_, weight_;
  std::map<int, cl::Buffer> packs_;
};

}  // namespace

void temporal_blend_device(Device& device, const std::vector<const DenoisedFrame*>& window,
                           int centre, const TemporalParams& params, DeviceImage& result) {
  check_window(window, centre);
  DeviceBlend blend(device, window, centre);
  if (!blend.fits(result))
    throw Error(ErrorKind::Internal, "temporal denoising: the result is not the whole image");
  int last = centre;  // the frame the positions have reached
  for (const int s : neighbour_order(int(window.size()), centre)) {
    if (!followable(window, centre, s, params.zero_motion)) continue;
    const bool back = s < centre;
    if (back != (last < centre)) last = centre;  // each way starts from the centre
    if (params.zero_motion)
      blend.stay();
    else
      for (int f = last; f != s; f += back ? -1 : 1) blend.follow(f, back);
    last = s;
    blend.add(s, params);
  }
  blend.finish(result);
}

namespace {

// The per-frame results of a run, one per frame and device (the reference: no device), each
// computed once by whichever frame needs it first and kept while a frame in flight needs it:
// a frame's neighbours are the next frame's too.
class FrameResults {
 public:
  using Compute = std::function<std::shared_ptr<const DenoisedFrame>()>;

  // Frame `number` (named `name`) for `device`, computed by `compute` unless kept.
  std::shared_ptr<const DenoisedFrame> get(const void* device, const std::string& name, long number,
                                           const Compute& compute) {
    return compute_once<Key, std::shared_ptr<const DenoisedFrame>>(mutex_, kept_,
                                                                   {device, number, name}, compute);
  }

  ~FrameResults() {
    for (auto& f : reading_)
      if (f.valid()) f.wait();
  }
  // A read ahead, waited for before the run ends; those finished are let go.
  void hold(std::shared_future<void> reading) {
    if (!reading.valid()) return;
    std::lock_guard lock(mutex_);
    std::erase_if(reading_, [](const std::shared_future<void>& f) {
      return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    });
    reading_.push_back(std::move(reading));
  }

  // A frame starts or ends its blend: frames outside every window in flight are let go.
  void begin(const void* device, long number, int radius) {
    std::lock_guard lock(mutex_);
    in_flight_.insert({device, number});
    release(device, radius);
  }
  void end(const void* device, long number) {
    std::lock_guard lock(mutex_);
    in_flight_.erase(in_flight_.find({device, number}));
  }

 private:
  using Key = std::tuple<const void*, long, std::string>;  // device, frame number, name

  void release(const void* device, int radius) {
    for (auto it = kept_.begin(); it != kept_.end();) {
      // Named from the key rather than bound: clang before 16 cannot capture a structured
      // binding in a lambda.
      const void* on = std::get<0>(it->first);
      const long number = std::get<1>(it->first);
      const bool needed =
          on != device || std::any_of(in_flight_.begin(), in_flight_.end(), [&](const auto& f) {
            return f.first == device && std::labs(f.second - number) <= radius;
          });
      it = needed ? std::next(it) : kept_.erase(it);
    }
  }

  std::mutex mutex_;
  std::map<Key, std::shared_future<std::shared_ptr<const DenoisedFrame>>> kept_;
  std::multiset<std::pair<const void*, long>> in_flight_;
  std::vector<std::shared_future<void>> reading_;
};

// Ends a frame's blend however it leaves.
class InFlight {
 public:
  InFlight(FrameResults& results, const void* device, long number, int radius)
      : results_(results), device_(device), number_(number) {
    results_.begin(device, number, radius);
  }
  ~InFlight() { results_.end(device_, number_); }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  FrameResults& results_;
  const void* device_;
  long number_;
};

// A frame denoised on the reference, with the guides the blend reads.
std::shared_ptr<const DenoisedFrame> host_frame(Image denoised, const Guides& guides) {
  auto frame = std::make_shared<DenoisedFrame>();
  frame->colour = std::move(denoised);
  frame->guides = guides;
  return frame;
}

// A frame denoised on a device (the whole image), packed there with its guides: the denoised
// planes copied on the device, only the guides sent.
std::shared_ptr<const DenoisedFrame> device_frame(Device& device, const DeviceImage& denoised,
                                                  const Guides& guides) {
  auto frame = std::make_shared<DenoisedFrame>();
  frame->packed = {.width = denoised.width,
                   .height = denoised.height,
                   .planes = denoised.channels,
                   .normal = guides.has_normal(),
                   .depth = guides.has_depth(),
                   .albedo = guides.has_albedo(),
                   .motion = guides.motion.channels(),
                   .colours = denoised.color_channels()};
  const std::size_t plane = denoised.plane_size() * sizeof(float);
  frame->pack = guide_pack(device, guides, denoised.channels, plane);
  device.copy(denoised.buffer, frame->pack, 0, 0, denoised.bytes(), "temporal frame");
  // Other workers' queues read the pack: it is complete before anyone sees it.
  device.finish();
  return frame;
}

class TemporalDenoiseStage : public GuidedStage, public BoundToFile, public StatesTolerance {
 public:
  TemporalDenoiseStage(std::string spec, std::shared_ptr<const Stage> per_frame,
                       TemporalParams params, GuideSources sources,
                       std::shared_ptr<const FrameSequence> sequence = nullptr,
                       std::shared_ptr<FrameResults> results = std::make_shared<FrameResults>())
      : GuidedStage(std::move(spec), std::move(sources)),
        per_frame_(std::move(per_frame)),
        params_(params),
        sequence_(std::move(sequence)),
        results_(std::move(results)) {}

  StageTraits traits() const override {
    StageTraits t = per_frame_->traits();
    t.memory.image_planes = temporal_image_planes(params_.radius);
    t.reads_frames = true;
    // The network's time and the blend's: about 2 us a sample a neighbour on the reference.
    t.cost.reference_ns += 2000 * params_.radius;
    t.cost.device_ns += 200 * params_.radius;
    return t;
  }
  std::string whole_image_reason(PixelType) const override {
    return "temporal denoising follows whole neighbour frames";
  }
  double verify_tolerance(const Device& device, double given) const override {
    const auto* stated = facet<StatesTolerance>(*per_frame_);
    return stated ? stated->verify_tolerance(device, given) : given;
  }
  std::vector<std::string> details(const StageRun& run) const override {
    std::vector<std::string> d = per_frame_->details(run);
    d.push_back(
        fmt::format("temporal: {} frames each side, motion {}", params_.radius,
                    params_.zero_motion ? "zero (a still camera and scene)" : sources().motion));
    return d;
  }

  std::unique_ptr<Stage> for_file(const FileFacts& file) const override {
    return std::make_unique<TemporalDenoiseStage>(spec(), per_frame_, params_, sources(),
                                                  file.sequence, results_);
  }

  Image reference_rows(const Image& in, Span, StageRun& run) const override {
    const Window w = window(run, nullptr, {in.width(), in.full_height()}, [&] {
      Image denoised = per_frame_->reference_rows(in, {0, in.full_height()}, run);
      run.state.reset();  // the network's tensors: the blend needs none
      return host_frame(std::move(denoised), *run.guides);
    });
    const Image blended = temporal_blend_reference(w.pointers(), w.centre, params_);
    Image result = in.like(in.channels(), in.alpha());  // the input's rows and source
    std::copy_n(blended.data().data(), blended.channels() * blended.plane_size(),
                result.data().begin());
    return result;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun& run) const override {
    DeviceImage result;
    const Window w = window(run, &device, {in.width, in.full_height}, [&] {
      result = per_frame_->enqueue_rows(device, in, out, run);
      run.state.reset();  // the network's tensors: the blend needs none
      return device_frame(device, result, *run.guides);
    });
    if (!result.buffer()) {  // the centre was denoised as a neighbour of a frame before it
      result = device.image_like(in, in.channels, in.alpha);
      const std::size_t planes = std::size_t(w.frames[w.centre]->shape().planes);
      device.copy(w.frames[w.centre]->pack, result.buffer, 0, 0,
                  planes * in.plane_size() * sizeof(float), "temporal colour");
    }
    temporal_blend_device(device, w.pointers(), w.centre, params_, result);
    return result;
  }

 private:
  struct Window {
    std::vector<std::shared_ptr<const DenoisedFrame>> frames;
    int centre = 0;
    std::shared_ptr<InFlight> in_flight;
    std::vector<const DenoisedFrame*> pointers() const {
      std::vector<const DenoisedFrame*> p;
      for (const auto& f : frames) p.push_back(f.get());
      return p;
    }
  };

  // The centre frame (denoised by `own` unless kept) and its neighbours (read and denoised
  // unless kept), each on the same device as the centre.
  Window window(StageRun& run, Device* device, Size size,
                const std::function<std::shared_ptr<const DenoisedFrame>()>& own) const {
    if (!sequence_ || sequence_->name(0).empty())
      throw Error(ErrorKind::Usage,
                  fmt::format("'{}': temporal denoising needs frames of a sequence: a file name "
                              "with a frame number (shot.0001.exr)",
                              spec()));
    check_motion(run.guides, sequence_->name(0));
    // Frames are kept per device (any worker's queue on it), and apart for the reference.
    const void* key = device ? static_cast<const void*>(device->shared().get()) : nullptr;
    Window w;
    w.centre = params_.radius;
    w.in_flight = std::make_shared<InFlight>(*results_, key, sequence_->number(0), params_.radius);
    // The neighbours first, the frame itself last: the network's working set of one frame at
    // a time (the frame's own stays with its run until the file ends).
    w.frames.resize(2 * params_.radius + 1);
    for (int offset = -params_.radius; offset <= params_.radius; ++offset) {
      if (offset == 0 || sequence_->name(offset).empty() || !sequence_->exists(offset)) continue;
      w.frames[offset + params_.radius] =
          results_->get(key, sequence_->name(offset), sequence_->number(offset),
                        [&] { return neighbour(offset, device, size); });
    }
    w.frames[params_.radius] = results_->get(key, sequence_->name(0), sequence_->number(0), own);
    // The frame the next window adds, decoded meanwhile.
    results_->hold(sequence_->read_ahead(params_.radius + 1, sources()));
    return w;
  }

  std::shared_ptr<const DenoisedFrame> neighbour(int offset, Device* device, Size size) const {
    const std::string name = sequence_->name(offset);
    SequenceFrame frame = sequence_->read(offset, sources(), 2 * params_.radius + 1);
    const Image& image = frame.image;
    if (image.width() != size.width || image.full_height() != size.height)
      throw Error(ErrorKind::BadData,
                  fmt::format("neighbour frame {} is {}x{}, this frame {}x{}", name, image.width(),
                              image.full_height(), size.width, size.height));
    check_motion(frame.guides.get(), name);
    StageRun r;
    r.guides = frame.guides.get();
    const Span all{0, frame.image.full_height()};
    if (!device) return host_frame(per_frame_->reference_rows(frame.image, all, r), *frame.guides);
    DeviceImage up = device->image(frame.image.width(), frame.image.height(),
                                   frame.image.channels(), frame.image.alpha());
    up.source = frame.image.source();
    device->write(up.buffer, frame.image.data().data(), up.bytes(), "temporal upload");
    return device_frame(*device, per_frame_->enqueue_rows(*device, up, all, r), *frame.guides);
  }

  void check_motion(const Guides* g, const std::string& name) const {
    if (params_.zero_motion) return;
    if (!g || !g->has_motion())
      throw Error(ErrorKind::BadData,
                  fmt::format("{}: '{}' needs motion vectors and the file has none (Blender's "
                              "Vector pass; motion=[X,Y,Z,W] names the frame's own channels, "
                              "motion=mv.####.exr[X,Y,Z,W] a file per frame); motion=zero "
                              "takes the camera and scene as still",
                              name, spec()));
  }

  std::shared_ptr<const Stage> per_frame_;
  TemporalParams params_;
  std::shared_ptr<const FrameSequence> sequence_;
  std::shared_ptr<FrameResults> results_;
};

}  // namespace

std::unique_ptr<Stage> make_temporal_denoise(std::string spec,
                                             std::shared_ptr<const Stage> per_frame,
                                             TemporalParams params, GuideSources sources) {
  return std::make_unique<TemporalDenoiseStage>(std::move(spec), std::move(per_frame), params,
                                                std::move(sources));
}

}  // namespace halo
