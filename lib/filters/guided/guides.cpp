// Guide buffers: validation, normalisation, upload, and the parameters guided filters share.
#include "filters/guided/guides.hpp"

#include <algorithm>
#include <cmath>

#include "cl/groups.hpp"
#include "core/error.hpp"

namespace halo {

namespace {

void check_guide(const Image& guide, const char* what, int channels, int width, int height) {
  if (guide.width() == 0) return;
  if (guide.width() != width || guide.height() != height)
    throw Error(ErrorKind::BadData, std::string(what) + " guide is " +
                                        std::to_string(guide.width()) + "x" +
                                        std::to_string(guide.height()) + ", the image is " +
                                        std::to_string(width) + "x" + std::to_string(height));
  if (guide.channels() != channels)
    throw Error(ErrorKind::BadData, std::string(what) + " guide has " +
                                        std::to_string(guide.channels()) + " channels, needs " +
                                        std::to_string(channels) +
                                        " (pick them with file.exr[A,B,C])");
}

}  // namespace

void normalise_normals(Image& normal, Span rows) {
  for (int y = rows.first - normal.y0(); y < rows.last - normal.y0(); ++y) {
    float *nx = normal.row(0, y), *ny = normal.row(1, y), *nz = normal.row(2, y);
    for (int x = 0; x < normal.width(); ++x) {
      const float len2 = nx[x] * nx[x] + ny[x] * ny[x] + nz[x] * nz[x];
      // Zero, NaN or infinite normals are "no geometry" (all three 0), as is_geometry reads them.
      if (!(len2 > 0) || !std::isfinite(len2)) {
        nx[x] = ny[x] = nz[x] = 0.0f;
        continue;
      }
      const float inv = 1.0f / std::sqrt(len2);
      nx[x] *= inv, ny[x] *= inv, nz[x] *= inv;
    }
  }
}

Guides prepare_guides(Image normal, Image depth, Image albedo, int width, int height,
                      std::string described) {
  check_guide(normal, "normal", 3, width, height);
  check_guide(depth, "depth", 1, width, height);
  check_guide(albedo, "albedo", 3, width, height);
  Guides g;
  g.normal = std::move(normal);
  g.depth = std::move(depth);
  g.albedo = std::move(albedo);
  g.described = std::move(described);
  if (g.has_normal()) normalise_normals(g.normal, g.normal.span());
  return g;
}

Guides guide_rows(const Guides& whole, Span rows) {
  Guides strip;
  strip.described = whole.described;
  const auto copy_rows = [&](const Image& from, Image& to) {
    if (from.width() == 0) return;
    to = Image(from.width(), rows, from.full_height(), from.channels());
    for (int c = 0; c < from.channels(); ++c)
      for (int y = rows.first; y < rows.last; ++y)
        std::copy_n(from.row(c, y - from.y0()), from.width(), to.row(c, y - rows.first));
  };
  copy_rows(whole.normal, strip.normal);
  copy_rows(whole.depth, strip.depth);
  copy_rows(whole.albedo, strip.albedo);
  copy_rows(whole.motion, strip.motion);
  return strip;
}

Guides albedo_over_alpha(const Guides& g, const Image& colour) {
  if (!g.has_albedo() || colour.color_channels() != 4) return g;
  Guides over = g;
  // Row for row, as colour_at reads them.
  for (int y = 0; y < std::min(over.albedo.height(), colour.height()); ++y) {
    const float* alpha = colour.row(3, y);
    for (int c = 0; c < 3; ++c) {
      float* a = over.albedo.row(c, y);
      for (int x = 0; x < over.albedo.width(); ++x) a[x] = alpha[x] > 0.0f ? a[x] / alpha[x] : 0.0f;
    }
  }
  return over;
}

DeviceGuides albedo_over_alpha(Device& device, const DeviceGuides& dg, const Guides* g,
                               const DeviceImage& colour) {
  if (!g || !g->has_albedo() || colour.color_channels() != 4) return dg;
  DeviceGuides over = dg;
  const std::size_t plane = colour.plane_size();
  over.albedo = device.buffer(3 * plane * sizeof(float), "albedo over alpha");
  auto k = device.kernel("albedo.cl", "albedo_over_alpha", {});
  set_args(k, dg.albedo, colour.buffer, over.albedo, cl_ulong(plane));
  device.launch(k, "albedo_over_alpha", cl::NDRange(plane), groups::row, 7 * plane * sizeof(float));
  return over;
}

DeviceGuides upload_guides(Device& device, const Guides* given) {
  DeviceGuides d;
  d.placeholder = device.buffer(16, "unused argument");
  d.geometry = d.albedo = d.placeholder;
  if (!given) return d;
  const Guides& guides = *given;
  const std::size_t plane = guides.any().plane_size();
  if (guides.any_geometry()) {
    // Interleaved: normal x, y, z and depth of a pixel side by side (kernels/guides.cl).
    std::vector<float> geometry(4 * plane, 0.0f);
    for (int c = 0; c < 3 && guides.has_normal(); ++c) {
      const float* n = guides.normal.data().data() + c * plane;
      for (std::size_t i = 0; i < plane; ++i) geometry[4 * i + c] = n[i];
    }
    if (guides.has_depth()) {
      const float* z = guides.depth.data().data();
      for (std::size_t i = 0; i < plane; ++i) geometry[4 * i + 3] = z[i];
    }
    d.geometry = device.buffer(geometry.size() * sizeof(float), "normal and depth guides");
    device.write(d.geometry, geometry.data(), geometry.size() * sizeof(float), "upload");
  }
  if (guides.has_albedo()) {
    const auto& a = guides.albedo.data();
    d.albedo = device.buffer(a.size() * sizeof(float), "albedo guide");
    device.write(d.albedo, a.data(), a.size() * sizeof(float), "upload");
  }
  return d;
}

Image with_colour(const Image& in, const Image& colour) {
  Image out = in.like(in.channels(), in.alpha());
  for (int c = 0; c < colour.channels(); ++c)
    for (int y = 0; y < in.height(); ++y) std::copy_n(colour.row(c, y), in.width(), out.row(c, y));
  copy_alpha(in, out);
  return out;
}

std::vector<Param> guide_params() {
  const char* sources =
      "; auto: the input's EXR layers (Blender ViewLayer.*, N.*, Z, depth, "
      "albedo.*) when present; off: not used";
  return {{.name = "normal",
           .type = ParamType::File,
           .fallback = "auto",
           .doc = std::string("normal buffer, 3 channels, e.g. n.exr[N.X,N.Y,N.Z]") + sources},
          {.name = "depth",
           .type = ParamType::File,
           .fallback = "auto",
           .doc = std::string("depth buffer, 1 channel, e.g. z.pfm") + sources},
          {.name = "albedo",
           .type = ParamType::File,
           .fallback = "auto",
           .doc = std::string("diffuse colour, 3 channels: colour is filtered divided by it and "
                              "multiplied back") +
                  sources},
          {.name = "albedo_min",
           .type = ParamType::Number,
           .fallback = "0.02",
           .doc = "albedo below this (metals, black) is not divided by: that channel is "
                  "filtered as it is",
           .min = 1e-6,
           .max = 1},
          {.name = "albedo_filter",
           .type = ParamType::Flag,
           .fallback = "1",
           .doc = "multiply back by a smoothed albedo (one edge-stopped 5x5 pass over it: a "
                  "few-sample albedo is noisy at outlines, texture edges and depth of field); "
                  "0: by the albedo as given"}};
}

GuideSources guide_sources(const Args& args) {
  return {args.text("normal"), args.text("depth"), args.text("albedo")};
}

GuidedStage::GuidedStage(std::string spec, GuideSources sources)
    : Stage(std::move(spec)), sources_(std::move(sources)) {}

const DeviceGuides& GuidedStage::device_guides(Device& device, StageRun& run) {
  if (!run.device_guides) {
    run.uploaded = std::make_unique<DeviceGuides>(upload_guides(device, run.guides));
    run.device_guides = run.uploaded.get();
  }
  return *run.device_guides;
}

bool GuidedStage::demodulates(const Guides* guides, int channels) const {
  if (!guides || !guides->has_albedo()) return false;
  if (channels != 3 && channels != 4)
    throw Error(ErrorKind::BadData, "filter '" + spec() +
                                        "': albedo demodulation needs 3 colour channels, the "
                                        "image has " +
                                        std::to_string(channels));
  return true;
}

void GuidedStage::check_size(const StageRun& run, int width, Span rows, int full_height) const {
  if (!run.guides) return;
  for (const Image* g : {&run.guides->normal, &run.guides->depth, &run.guides->albedo})
    if (g->width() && (g->width() != width || g->full_height() != full_height))
      throw Error(ErrorKind::BadData,
                  "filter '" + spec() + "': guides are " + std::to_string(g->width()) + "x" +
                      std::to_string(g->full_height()) + ", the image at this stage is " +
                      std::to_string(width) + "x" + std::to_string(full_height));
    else if (g->width() && g->span() != rows)
      throw Error(ErrorKind::Internal,
                  "filter '" + spec() + "': guides hold other rows than the image");
}

Image flags_image(const FlagImage& flags) {
  Image img(flags.width, flags.height, 1);
  for (int y = 0; y < flags.height; ++y)
    for (int x = 0; x < flags.width; ++x)
      img.at(x, y, 0) = flags.bits[std::size_t(y) * flags.width + x] / 15.0f;
  return img;
}

}  // namespace halo
