// Guided filters (bilateral, atrous) in tests: stages with hand-made guides, and the device
// against the reference with the flags compared bit for bit.
#pragma once

#include <doctest/doctest.h>

#include <cmath>

#include "engine/separable_support.hpp"
#include "filters/guided/guides.hpp"
#include "filters/registry.hpp"
#include "pipeline/transfer.hpp"
#include "support.hpp"
#include "verify/compare.hpp"

namespace halo::test {

// A guided stage with the guides its runs get; each call is one run, which keeps its flags.
struct GuidedFixture {
  std::unique_ptr<Stage> stage;
  std::shared_ptr<const Guides> guides;
  StageRun last;  // the last run: its flags, histogram

  StageRun fresh_run() const {
    StageRun run;
    run.guides = guides.get();
    run.keep_flags = true;
    return run;
  }
  Image reference(const Image& in) {
    last = fresh_run();
    return stage->reference(in, last);
  }
  Image on_device(const Image& in) {
    last = fresh_run();
    const DeviceImage out =
        stage->enqueue(device(), upload(device(), to_pixels(in, PixelType::f32)), last);
    Image result = download_image(device(), out);
    device().take_timings();
    return result;
  }
  const FlagImage* flags() const {
    const auto kept = last.side_output("flags");
    return kept ? kept->flags : nullptr;
  }
};

inline GuidedFixture guided_stage(const std::string& spec, const Guides* guides) {
  GuidedFixture f;
  f.stage = make_stage(spec);
  REQUIRE(f.stage->guide_sources());
  if (guides) f.guides = std::make_shared<const Guides>(*guides);
  return f;
}

// Normals (0,0,1) and depth 1 everywhere: a flat plane facing the camera.
inline Guides plane_guides(int w, int h, bool albedo = false) {
  Image n(w, h, 3), z(w, h, 1), a;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) n.at(x, y, 2) = 1.0f, z.at(x, y, 0) = 1.0f;
  if (albedo) a = random_image(w, h, 3, false, 5, 0.0f, 1.0f);  // some below albedo_min
  return prepare_guides(std::move(n), std::move(z), std::move(a), w, h);
}

// Random regions: normals tilted by up to ~60 degrees, depths in steps, a few NaN depths and
// zero normals, so every flag and every weight case occurs.
inline Guides random_guides(int w, int h, bool albedo, unsigned seed = 3) {
  Image n = random_image(w, h, 3, false, seed, -0.5f, 0.5f), z(w, h, 1);
  const Image r = random_image(w, h, 1, false, seed + 1);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      n.at(x, y, 2) = 1.0f;
      z.at(x, y, 0) = 1.0f + float((x / 3 + y / 4) % 3) * 0.2f;
      if (r.at(x, y, 0) < 0.03f) z.at(x, y, 0) = NAN;
      if (r.at(x, y, 0) > 0.97f) n.at(x, y, 0) = n.at(x, y, 1) = n.at(x, y, 2) = 0.0f;
    }
  Image a = albedo ? random_image(w, h, 3, false, seed + 2, 0.0f, 1.0f) : Image();
  return prepare_guides(std::move(n), std::move(z), std::move(a), w, h);
}

// Device result against the reference (tolerance for exp/pow), flags bit for bit.
inline void check_guided_device(const std::string& spec, const Image& in, const Guides* guides) {
  auto f = guided_stage(spec, guides);
  const Image got = f.on_device(in);
  StageRun device_run = std::move(f.last);
  const Comparison c = compare(got, f.reference(in), 1e-4);
  INFO(spec, " on ", in.width(), "x", in.height(), "x", in.channels(), ": ", c.summary());
  CHECK(c.ok());
  CHECK(side_results_mismatch(device_run, f.last) == "");
}

// Device against reference on 1x1, 7x5, 33x17 and 1023x517 (the loop: 203x131) with every
// border: `guided` with
// normal and depth guides and `with_albedo` with albedo too, on RGBA; `self` without guides
// on one channel.
inline void check_guided_on_odd_sizes(const std::string& guided, const std::string& with_albedo,
                                      const std::string& self) {
  for (const auto& [w, h] : sweep<std::pair<int, int>>({{1, 1}, {7, 5}, {33, 17}, {1023, 517}},
                                                       {{1, 1}, {7, 5}, {33, 17}, {203, 131}})) {
    const Guides g = random_guides(w, h, false), ga = random_guides(w, h, true);
    const Image rgb = random_image(w, h, 4, true), grey = random_image(w, h, 1);
    for (const char* border : kBorders) {
      const std::string b = std::string(":border=") + border;
      check_guided_device(guided + b, rgb, &g);
      check_guided_device(with_albedo + b, rgb, &ga);
      if (w < 1000) check_guided_device(with_albedo + ":albedo_filter=0" + b, rgb, &ga);
      check_guided_device(self + b, grey, nullptr);
    }
  }
}

// The reference's result and the device's, for properties both must have.
inline std::vector<Image> reference_and_device(GuidedFixture& f, const Image& in) {
  return {f.reference(in), f.on_device(in)};
}

}  // namespace halo::test
