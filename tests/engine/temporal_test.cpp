// Temporal denoising's blend: hand-computed weights, neighbours followed through Blender's
// motion conventions (a wrong sign shows), guides that reject a neighbour, and the device
// against the reference on an odd size with a missing frame.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/guided_support.hpp"
#include "filters/denoise/temporal.hpp"

using namespace halo;
using namespace halo::test;

namespace {

DenoisedFrame flat(int w, int h, float v) {
  DenoisedFrame f;
  f.colour = Image(w, h, 3);
  for (auto& s : f.colour.data()) s = v;
  // Keep the padding past each row zero, as images are made.
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < h; ++y)
      for (int x = w; x < f.colour.pitch(); ++x) f.colour.row(c, y)[x] = 0.0f;
  return f;
}

// A ramp that moves `speed` pixels left each frame: frame k holds (x + k * speed) / 10, so a
// pixel at x in frame k was at x + speed in frame k - 1 and is at x - speed in frame k + 1:
// Blender's vectors X = speed (towards the previous frame) and Z = speed (towards the next).
DenoisedFrame ramp(int w, int h, int k, float speed, float x_vector, float z_vector) {
  DenoisedFrame f;
  f.colour = Image(w, h, 3);
  f.guides.motion = Image(w, h, 4);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) f.colour.at(x, y, c) = (float(x) + float(k) * speed) / 10.0f;
      f.guides.motion.at(x, y, 0) = x_vector;
      f.guides.motion.at(x, y, 2) = z_vector;
    }
  return f;
}

float tone(float v) {
  return std::pow(v / (1.0f + v), 1.0f / 2.2f);
}

Image blend_on_device(const std::vector<const DenoisedFrame*>& window, int centre,
                      const TemporalParams& params) {
  const Image& c = window[centre]->colour;
  DeviceImage result = device().image(c.width(), c.height(), c.channels(), c.alpha());
  device().write(result.buffer, c.data().data(), result.bytes(), "test");
  temporal_blend_device(device(), window, centre, params, result);
  Image out = download_image(device(), result);
  device().take_timings();
  return out;
}

float max_difference(const Image& a, const Image& b) {
  float most = 0;
  for (int c = 0; c < a.channels(); ++c)
    for (int y = 0; y < a.height(); ++y)
      for (int x = 0; x < a.width(); ++x)
        most = std::max(most, std::fabs(a.at(x, y, c) - b.at(x, y, c)));
  return most;
}

}  // namespace

TEST_CASE("temporal blend: neighbours weighted by exp(-patch distance / sigma^2), by hand") {
  // A still window: the earlier frame equals the centre (weight 1), the later one is brighter.
  const DenoisedFrame before = flat(7, 5, 0.5f), centre = flat(7, 5, 0.5f),
                      after = flat(7, 5, 0.6f);
  const TemporalParams params{.radius = 1, .sigma = 0.1f, .zero_motion = true};
  const float e = tone(0.6f) - tone(0.5f);
  const float w = std::exp(-(e * e) / (0.1f * 0.1f));
  const float expected = (0.5f + 0.5f + w * 0.6f) / (1.0f + 1.0f + w);
  const std::vector<const DenoisedFrame*> window = {&before, &centre, &after};
  const Image ref = temporal_blend_reference(window, 1, params);
  const Image dev = blend_on_device(window, 1, params);
  for (int c = 0; c < 3; ++c) {
    CHECK(ref.at(0, 0, c) == doctest::Approx(expected).epsilon(1e-6));
    CHECK(ref.at(6, 4, c) == doctest::Approx(expected).epsilon(1e-6));
  }
  CHECK(max_difference(ref, dev) < 1e-6f);
  // A frame that does not exist is left out: the centre and its earlier frame only.
  const Image alone = temporal_blend_reference({&before, &centre, nullptr}, 1, params);
  CHECK(alone.at(3, 2, 1) == doctest::Approx(0.5f));
}

TEST_CASE("temporal blend: neighbours followed through Blender's vectors, two frames each way") {
  // Content moving 2 pixels left a frame, vectors as Blender writes them: every followed
  // neighbour equals the centre where it is inside the image, so the blend is the centre.
  const int w = 23, h = 5;
  std::vector<DenoisedFrame> frames;
  for (int k = -2; k <= 2; ++k) frames.push_back(ramp(w, h, k, 2.0f, 2.0f, 2.0f));
  std::vector<const DenoisedFrame*> window;
  for (const auto& f : frames) window.push_back(&f);
  const TemporalParams params{.radius = 2, .sigma = 0.01f};
  const Image& centre = frames[2].colour;
  const Image ref = temporal_blend_reference(window, 2, params);
  CHECK(max_difference(ref, centre) < 1e-6f);
  CHECK(max_difference(blend_on_device(window, 2, params), centre) < 1e-6f);
  // The opposite sign (towards the next frame read like the previous one) mixes in colour
  // from elsewhere.
  std::vector<DenoisedFrame> wrong;
  for (int k = -2; k <= 2; ++k) wrong.push_back(ramp(w, h, k, 2.0f, 2.0f, -2.0f));
  std::vector<const DenoisedFrame*> bad;
  for (const auto& f : wrong) bad.push_back(&f);
  const TemporalParams loose{.radius = 2, .sigma = 10.0f};
  CHECK(max_difference(temporal_blend_reference(bad, 2, loose), wrong[2].colour) > 0.1f);
  // Two channels (towards the previous frame only): later frames are not followed at all.
  std::vector<DenoisedFrame> back = wrong;
  for (auto& f : back) {
    Image two(w, h, 2);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int c = 0; c < 2; ++c) two.at(x, y, c) = f.guides.motion.at(x, y, c);
    f.guides.motion = two;
  }
  std::vector<const DenoisedFrame*> earlier;
  for (const auto& f : back) earlier.push_back(&f);
  const Image only_back = temporal_blend_reference(earlier, 2, loose);
  CHECK(max_difference(only_back, temporal_blend_reference(
                                      {earlier[0], earlier[1], earlier[2], nullptr, nullptr}, 2,
                                      loose)) == 0.0f);
  CHECK(max_difference(only_back, blend_on_device(earlier, 2, loose)) < 1e-5f);
}

TEST_CASE("temporal blend: alpha is averaged with the colour's weights; alpha 1 stays exactly 1") {
  // Colour is premultiplied: averaging it across frames whose coverage differs keeps colour
  // and alpha consistent only when alpha takes the same weights. Colour alike (weight 1 each),
  // alpha 1, 0.4 and 0.7: alpha 0.7; alpha 1 everywhere comes out 1, not 0.99999994.
  const auto frame = [](float alpha) {
    DenoisedFrame f;
    f.colour = Image(11, 7, 4, true);
    for (int y = 0; y < 7; ++y)
      for (int x = 0; x < 11; ++x) {
        for (int c = 0; c < 3; ++c) f.colour.at(x, y, c) = 0.5f;
        f.colour.at(x, y, 3) = alpha;
      }
    return f;
  };
  const TemporalParams params{.radius = 1, .sigma = 0.05f, .zero_motion = true};
  const DenoisedFrame a = frame(1.0f), b = frame(0.4f), c = frame(0.7f);
  const Image mixed = temporal_blend_reference({&a, &b, &c}, 1, params);
  CHECK(mixed.alpha());
  CHECK(mixed.at(5, 3, 3) == doctest::Approx(0.7f));
  CHECK(mixed.at(5, 3, 0) == doctest::Approx(0.5f));
  CHECK(max_difference(mixed, blend_on_device({&a, &b, &c}, 1, params)) < 1e-6f);
  const DenoisedFrame o1 = frame(1.0f), o2 = frame(1.0f), o3 = frame(1.0f);
  for (const Image& opaque : {temporal_blend_reference({&o1, &o2, &o3}, 1, params),
                              blend_on_device({&o1, &o2, &o3}, 1, params)})
    for (int y = 0; y < 7; ++y)
      for (int x = 0; x < 11; ++x) CHECK(opaque.at(x, y, 3) == 1.0f);
}

TEST_CASE("temporal blend: a neighbour whose depth, normals or albedo differ is not used") {
  const int w = 9, h = 6;
  DenoisedFrame before = flat(w, h, 0.2f), centre = flat(w, h, 0.5f);
  Guides g = plane_guides(w, h, true);
  for (auto& a : g.albedo.data()) a = 0.3f;
  before.guides = centre.guides = g;
  const TemporalParams params{.radius = 1, .sigma = 10.0f, .zero_motion = true};
  // The same surface: used (sigma large: weight about 1).
  CHECK(temporal_blend_reference({&before, &centre, nullptr}, 1, params).at(4, 3, 0) < 0.4f);
  DenoisedFrame far = before;
  for (auto& z : far.guides.depth.data()) z *= 2.0f;  // another surface behind
  CHECK(temporal_blend_reference({&far, &centre, nullptr}, 1, params).at(4, 3, 0) == 0.5f);
  DenoisedFrame turned = before;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      turned.guides.normal.at(x, y, 0) = 1.0f, turned.guides.normal.at(x, y, 2) = 0.0f;
  CHECK(temporal_blend_reference({&turned, &centre, nullptr}, 1, params).at(4, 3, 0) == 0.5f);
  DenoisedFrame painted = before;
  for (auto& a : painted.guides.albedo.data()) a += 0.5f;
  CHECK(temporal_blend_reference({&painted, &centre, nullptr}, 1, params).at(4, 3, 0) == 0.5f);
}

TEST_CASE("temporal blend: NaN and infinite vectors follow nowhere, on the device as here") {
  // A hostile or broken render's vectors: the pixels they move are not seen (the frame keeps
  // its own colour there), nothing is read outside the frames, the rest is blended as usual.
  const int w = 17, h = 9;
  std::vector<DenoisedFrame> frames;
  for (int k = -1; k <= 1; ++k) frames.push_back(ramp(w, h, k, 1.0f, 1.0f, 1.0f));
  for (auto& f : frames) {
    f.guides.motion.at(3, 2, 0) = NAN;
    f.guides.motion.at(5, 4, 1) = INFINITY;
    f.guides.motion.at(7, 6, 2) = -INFINITY;
    f.guides.motion.at(9, 1, 3) = NAN;
  }
  std::vector<const DenoisedFrame*> window;
  for (const auto& f : frames) window.push_back(&f);
  const TemporalParams params{.radius = 1, .sigma = 0.05f};
  const Image ref = temporal_blend_reference(window, 1, params);
  const Image dev = blend_on_device(window, 1, params);
  CHECK(max_difference(ref, dev) < 1e-5f);
  for (const float v : ref.data()) CHECK(std::isfinite(v));
  CHECK(ref.at(3, 2, 0) == frames[1].colour.at(3, 2, 0));  // its previous position: NaN
}

TEST_CASE("temporal blend: the device equals the reference on odd sizes, a frame missing") {
  for (const auto& [w, h] : {std::pair{1, 1}, std::pair{7, 5}, std::pair{61, 37}}) {
    CAPTURE(w);
    std::vector<DenoisedFrame> frames(5);
    for (int k = 0; k < 5; ++k) {
      frames[k].colour = random_image(w, h, 3, false, 11 + k, 0.0f, 4.0f);
      frames[k].guides = random_guides(w, h, true, 3 + k % 2);
      frames[k].guides.motion = random_image(w, h, 4, false, 21 + k, -3.0f, 3.0f);
    }
    std::vector<const DenoisedFrame*> window;
    for (const auto& f : frames) window.push_back(&f);
    window[0] = nullptr;  // the sequence starts one frame before the centre
    const TemporalParams params{.radius = 2, .sigma = 0.2f};
    const Image ref = temporal_blend_reference(window, 2, params);
    const Image dev = blend_on_device(window, 2, params);
    CHECK(max_difference(ref, dev) < 1e-4f);
    if (w > 1) CHECK(max_difference(ref, frames[2].colour) > 0.0f);
  }
}
