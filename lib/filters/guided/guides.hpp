// Guides: the auxiliary buffers of a path-traced render (normals, depth, diffuse colour) that
// steer the edge-aware filters (bilateral, atrous). The engine receives them as images; the
// app finds them in the input's EXR layers or in the files a spec names (io/guides.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cl/device.hpp"
#include "core/image.hpp"
#include "filters/filter.hpp"
#include "kernels/contract.h"

namespace halo {

// Where a stage wants each guide from: "auto" (the input's layers, if it has them), "off", or
// a file with an optional channel list, as given in the spec.
struct GuideSources {
  std::string normal = "auto", depth = "auto", albedo = "auto";
  // Normals made unit length (and zero, NaN and infinite ones (0,0,0)) as they are read; the
  // denoise filter takes them as the render wrote them.
  bool unit_normals = true;
  // Motion towards the neighbour frames (temporal denoising): "off" unless a stage asks.
  std::string motion = "off";

  bool operator==(const GuideSources&) const = default;
};

// The guides on one device: normals and depth in one buffer, interleaved (x, y, z, depth of a
// pixel side by side; a missing buffer reads as 0), albedo in 3 planes, all with the image's
// pitch and the rows the guides hold. A guide that is absent (or no guides at all) is the
// placeholder, a small buffer kernels are told not to read, as is any other argument a run does not
// use.
struct DeviceGuides {
  cl::Buffer geometry, albedo, placeholder;
};

// Ready for filtering. Normals are unit length, or (0,0,0) where the buffer held a zero,
// NaN or infinite normal. A pixel is "geometry" unless its normal is (0,0,0) or its depth
// is NaN: background and holes form one region that filters never cross into. The guides of a
// whole image, or of a strip (the images hold that strip's rows).
struct Guides {
  Image normal;  // 3 channels, or empty
  Image depth;   // 1 channel, or empty
  Image albedo;  // 3 channels, or empty
  // Motion in pixels as Blender's Vector pass holds it: towards the previous frame (X, Y) and,
  // with 4 channels, towards the next (Z, W); pixel (x, y) lies at (x + X, y - Y) in the
  // previous frame and at (x - Z, y + W) in the next. 2 or 4 channels, or empty.
  Image motion;
  std::string described;  // where each came from, for --verbose

  bool has_normal() const { return normal.width() > 0; }
  bool has_depth() const { return depth.width() > 0; }
  bool has_albedo() const { return albedo.width() > 0; }
  bool has_motion() const { return motion.width() > 0; }
  bool any_geometry() const { return has_normal() || has_depth(); }
  // The first guide present (all have the image's size and pitch).
  const Image& any() const { return has_normal() ? normal : has_depth() ? depth : albedo; }
};

// Checks sizes and channel counts against the image (BadData naming the guide and both
// sizes) and normalises the normals.
Guides prepare_guides(Image normal, Image depth, Image albedo, int width, int height,
                      std::string described = "");
// Unit normals in the image rows `rows`; zero, NaN and infinite ones become (0,0,0), "no
// geometry". prepare_guides does it for whole images; streamed guides do it strip by strip.
void normalise_normals(Image& normal, Span rows);
// The rows `rows` of whole-image guides, as a strip's guides.
Guides guide_rows(const Guides& whole, Span rows);

DeviceGuides upload_guides(Device& device, const Guides* guides);

// The discontinuity test of kernels/guides.cl, operation for operation (flags are compared
// bit for bit between device and reference).
enum : std::uint8_t {
  kFlagLeft = FLAG_LEFT,
  kFlagRight = FLAG_RIGHT,
  kFlagTop = FLAG_TOP,
  kFlagBottom = FLAG_BOTTOM
};

struct Surface {
  float nx = 0, ny = 0, nz = 0, z = 0;
};

// The guides at pixel (x, y): a missing buffer reads as 0.
inline Surface surface_at(const Guides& g, int x, int y) {
  Surface s;
  if (g.has_normal())
    s.nx = g.normal.at(x, y, 0), s.ny = g.normal.at(x, y, 1), s.nz = g.normal.at(x, y, 2);
  if (g.has_depth()) s.z = g.depth.at(x, y, 0);
  return s;
}

inline bool is_geometry(const Surface& s, bool has_normal, bool has_depth) {
  if (has_normal && s.nx == 0.0f && s.ny == 0.0f && s.nz == 0.0f) return false;
  return !(has_depth && std::isnan(s.z));
}

inline bool is_edge(const Surface& a, const Surface& b, float cos_angle, float dz, bool has_normal,
                    bool has_depth) {
  const bool ga = is_geometry(a, has_normal, has_depth), gb = is_geometry(b, has_normal, has_depth);
  if (ga != gb) return true;
  if (!ga) return false;
  if (has_normal && a.nx * b.nx + a.ny * b.ny + a.nz * b.nz < cos_angle) return true;
  if (has_depth && a.z != b.z &&
      std::fabs(a.z - b.z) > dz * std::fmin(std::fabs(a.z), std::fabs(b.z)))
    return true;
  return false;
}

// Renders sum albedo over a pixel's samples as they sum colour, so where a transparent film
// leaves a pixel partly covered its albedo (Blender's DiffCol) is scaled by the coverage as its
// colour is. Colour with alpha (four planes, the fourth alpha, premultiplied) is divided and
// multiplied back by the albedo over alpha instead (0 where alpha is 0): colour / albedo is then
// irradiance premultiplied by alpha, filtered with alpha, and multiplied back by the surface's
// own colour. With the albedo as stored, the colour came back scaled by its own pixel's
// coverage while alpha, filtered, had its neighbours': bright and dark fringes at soft edges
// (1.4x the colour over alpha on a Blender render of objects on a transparent film).
// `colour` holds the guides' rows; guides without albedo, or colour without a fourth plane,
// come back as they are.
Guides albedo_over_alpha(const Guides& g, const Image& colour);
// The same on the device: `dg` with its albedo replaced (kernels/albedo.cl).
DeviceGuides albedo_over_alpha(Device& device, const DeviceGuides& dg, const Guides* g,
                               const DeviceImage& colour);

// Albedo demodulation: colour is divided by a' = albedo where albedo >= albedo_min, else by
// 1 (metals and black surfaces, whose diffuse colour is ~0, are filtered as they are), and
// multiplied back after filtering.
inline float demodulating_albedo(float albedo, float albedo_min) {
  return albedo >= albedo_min ? albedo : 1.0f;
}

// Taps of the guided filters' references, the twins of kernels/guides.cl: colour planes of
// `src`, divided by the albedo guide when demodulating.
inline constexpr int kMaxGuidedChannels = 4;

inline float colour_at(const Image& src, const Guides* g, int x, int y, int c, bool demod,
                       float albedo_min) {
  const float v = src.at(x, y, c);
  // A fourth plane is alpha filtered with the colour (associated alpha): never demodulated.
  return demod && c < 3 ? v / demodulating_albedo(g->albedo.at(x, y, c), albedo_min) : v;
}

// Reads the tap at (x, y) into v; returns its squared colour distance from `centre`.
inline float read_tap(const Image& src, const Guides* g, int x, int y, bool demod, float albedo_min,
                      const float* centre, float* v) {
  float d2 = 0.0f;
  for (int c = 0; c < src.color_channels(); ++c) {
    v[c] = colour_at(src, g, x, y, c, demod, albedo_min);
    const float d = v[c] - centre[c];
    d2 = std::fma(d, d, d2);
  }
  return d2;
}

inline void accumulate(float w, const float* v, int channels, float* sum, float& wsum) {
  wsum += w;
  for (int c = 0; c < channels; ++c) sum[c] = std::fma(w, v[c], sum[c]);
}

// sum / wsum into dst at (x, y); when `remod_albedo` is given (the guide or its smoothed copy,
// same rows as dst), multiplied back by it where it is at least albedo_min.
inline void store_normalised(Image& dst, const Image* remod_albedo, int x, int y, const float* sum,
                             float wsum, float albedo_min) {
  for (int c = 0; c < dst.color_channels(); ++c) {
    const float v = sum[c] / wsum;
    dst.at(x, y, c) =
        remod_albedo && c < 3 ? v * demodulating_albedo(remod_albedo->at(x, y, c), albedo_min) : v;
  }
}

// What filtered colour is multiplied back by (store_normalised), for the output rows `out`:
// nothing without demodulation, the albedo guide itself with albedo_filter off, and with it
// on (the default) a smoothed copy: one atrous pass (5x5 B3 spline, step 1) over the albedo guide,
// weighted by the normals (max(0, n.n)^128), by relative depth (sigma 0.005) and by the albedo's
// own differences (exp(-|da|^2)); it reads 2 rows more each side. Why: a pixel's few samples
// straddle outlines and texture edges, or are spread by depth of field, so a 4-spp albedo is noisy
// there, and multiplying back by it put that noise into the result. Division still uses the guide
// as it is. A pixel whose own albedo was too dark to divide by (a dark texel) but whose
// neighbourhood's smoothed albedo is not gets multiplied by the latter: its filtered value comes
// from divided neighbours. Measured (scripts/render-psnr.py, 4 spp, bilateral / atrous): wide +1.1
// / +1.1 dB, metal +0.3 / +0.3, texture +7.7 / +7.7 (the dark texels of its noise texture had
// turned into bright specks).
class Remodulation {
 public:
  Remodulation(const Guides* g, bool demod, bool albedo_filter, Span out, Border border);
  const Image* albedo() const { return smoothed_.width() > 0 ? &smoothed_ : guide_; }

 private:
  const Image* guide_ = nullptr;
  Image smoothed_;
};
// The same on the device, with planes like `like`'s: the buffer to multiply back by (the
// albedo guide's when there is nothing to smooth).
cl::Buffer remodulation_albedo(Device& device, const DeviceGuides& dg, const Guides* g, bool demod,
                               bool albedo_filter, const DeviceImage& like, Span out,
                               Border border);
// What -v says of the remodulation.
inline const char* demodulation_detail(bool albedo_filter) {
  return albedo_filter ? "albedo demodulation, remodulated with a smoothed albedo"
                       : "albedo demodulation";
}

// Fireflies (lib/filters/guided/fireflies.cpp, kernels/fireflies.cl), the guided filters' first
// step: a pixel whose luminance is over `ratio` times the brightest of its 8 neighbours' (border
// rule applied; copies of the pixel itself, as clamp makes at the edges, left out) is scaled
// down to that bound. Luminance is Rec. 709's on the first 3 of 3 or 4 planes (a fourth is
// alpha, filtered with premultiplied colour), the first plane's otherwise (grey, and grey with
// alpha), of the colour divided by the albedo when demodulating; the scale applies to those
// colour planes as given, never to alpha. A few-sample render's fireflies are single pixels far
// brighter than anything around them; a filter spreads each into a bright blotch. The
// result holds the colour planes of `src` with the rows `rows` computed; it reads one row more
// each side.
struct Fireflies {
  float ratio = 0;  // 0: off
  bool demod = false;
  float albedo_min = 0.02f;
  Border border = Border::clamp;
};
Image clamp_fireflies(const Image& src, const Guides* g, const Fireflies& f, Span rows);
DeviceImage clamp_fireflies(Device& device, const DeviceGuides& dg, const DeviceImage& src,
                            const Fireflies& f, Span rows);
// The `fireflies` parameter both guided filters take, and its value for a run: auto is 1.5
// with normal or depth guides (renders), off without (photos, whose small highlights are
// real).
Param fireflies_param();
float fireflies_ratio(double value, const Guides* g);  // value < 0: auto
// What -v says of the fireflies step.
std::string fireflies_detail(float ratio);

// The input with its colour planes replaced by `colour` (a reference's result); alpha and
// source type kept.
Image with_colour(const Image& in, const Image& colour);

// Parameters every guided filter takes: the three guide sources and albedo_min.
std::vector<Param> guide_params();
GuideSources guide_sources(const Args& args);

// A stage that uses guides. The app reads what guide_sources() names and hands the guides to
// each run (StageRun::guides); without them (or with guides=off) it runs self-guided on the
// image's own colour.
class GuidedStage : public Stage, public Guided {
 public:
  GuidedStage(std::string spec, GuideSources sources);
  const GuideSources& sources() const override { return sources_; }

 protected:
  // The run's guides on `device`: the executor's shared upload, else uploaded once per run
  // (placeholders without guides).
  static const DeviceGuides& device_guides(Device& device, StageRun& run);
  // Throws BadData when the run's guides do not hold the image's width and rows.
  void check_size(const StageRun& run, int width, Span rows, int full_height) const;
  // Whether colour is demodulated by the albedo guide; BadData unless the image has 3 colour
  // channels to match it (a fourth, alpha filtered with the colour, is not demodulated).
  bool demodulates(const Guides* guides, int channels) const;

 private:
  GuideSources sources_;
};

// The flags as an image for --write-flags: one channel, value = bits / 15 (8-bit code 17 x
// bits; multiply a float file by 15 for the bits).
Image flags_image(const FlagImage& flags);

}  // namespace halo
