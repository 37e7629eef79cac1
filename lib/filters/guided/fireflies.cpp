// The guided filters' firefly step (guides.hpp Fireflies); kernels/fireflies.cl is its twin,
// operation for operation.
#include <fmt/format.h>

#include "cl/groups.hpp"
#include "filters/guided/guides.hpp"

namespace halo {

namespace {

float luminance_at(const Image& src, const Guides* g, int x, int y, const Fireflies& f) {
  const auto at = [&](int c) { return colour_at(src, g, x, y, c, f.demod, f.albedo_min); };
  if (GUIDED_COLOURS(src.color_channels()) == 3)
    return 0.2126f * at(0) + 0.7152f * at(1) + 0.0722f * at(2);
  return at(0);
}

}  // namespace

Image clamp_fireflies(const Image& src, const Guides* g, const Fireflies& f, Span rows) {
  const int w = src.width(), y0 = src.y0(), channels = src.color_channels();
  const int colours = GUIDED_COLOURS(channels);  // alpha, if any, is not scaled
  Image dst = src.like(channels, false);
  const std::vector<int> xs = border_table(w, 1, f.border);
  const std::vector<int> ys = row_table(src, rows, 1, f.border);
  for (int y = rows.first; y < rows.last; ++y)
    for (int x = 0; x < w; ++x) {
      const int r = y - y0;
      const float centre = luminance_at(src, g, x, r, f);
      float brightest = 0.0f;
      bool any = false;
      for (int dy = -1; dy <= 1; ++dy) {
        const int qy = ys[y - rows.first + 1 + dy];
        if (qy < 0) continue;
        for (int dx = -1; dx <= 1; ++dx) {
          const int qx = xs[x + 1 + dx];
          if (qx < 0 || (qx == x && qy == r)) continue;  // the pixel, or a copy of it
          const float l = luminance_at(src, g, qx, qy, f);
          brightest = any ? std::fmax(brightest, l) : l;
          any = true;
        }
      }
      float scale = 1.0f;
      if (any) {
        const float bound = f.ratio * brightest;
        if (centre > 0.0f && centre > bound) scale = std::fmax(bound, 0.0f) / centre;
      }
      for (int c = 0; c < channels; ++c)
        dst.at(x, r, c) = c < colours ? src.at(x, r, c) * scale : src.at(x, r, c);
    }
  return dst;
}

DeviceImage clamp_fireflies(Device& device, const DeviceGuides& dg, const DeviceImage& src,
                            const Fireflies& f, Span rows) {
  const int channels = src.color_channels();
  DeviceImage dst = device.image_like(src, channels, false);
  auto k =
      device.kernel("fireflies.cl", "clamp_fireflies", {{"CHANNELS", std::to_string(channels)}});
  set_args(k, src.buffer, dst.buffer, f.demod ? dg.albedo : dg.placeholder, strip_args(src, rows),
           channels, int(f.border), int(f.demod), f.albedo_min, f.ratio);
  const std::size_t row_bytes = std::size_t(src.pitch) * rows.count() * sizeof(float);
  device.launch(k, "clamp_fireflies", cl::NDRange(src.width, rows.count()), groups::window,
                (2 * channels + (f.demod ? 3 : 0)) * row_bytes);
  return dst;
}

Param fireflies_param() {
  return {.name = "fireflies",
          .type = ParamType::Number,
          .fallback = "auto",
          .doc =
              "a pixel brighter (luminance, after albedo demodulation) than this many times "
              "the brightest of its 8 neighbours is scaled down to that bound before "
              "filtering, so a few-sample render's fireflies do not spread into blotches; "
              "0: off; auto: 1.5 with normal or depth guides (renders), off without "
              "(photos, whose small highlights are real)",
          .min = 0,
          .max = 1e6,
          .allow_auto = true};
}

float fireflies_ratio(double value, const Guides* g) {
  if (value >= 0) return float(value);
  return g && g->any_geometry() ? 1.5f : 0.0f;
}

std::string fireflies_detail(float ratio) {
  return ratio > 0 ? fmt::format(
                         "fireflies: pixels over {:g}x their brightest neighbour's "
                         "luminance scaled down to it",
                         ratio)
                   : "fireflies step off";
}

}  // namespace halo
