// Temporal measures of frame sequences (verify/temporal.hpp); tests/oracle's NumPy form
// computes the same from the definitions.
#include "verify/temporal.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace halo {

namespace {

void check_same(const Image& a, const Image& b, const char* what) {
  if (a.width() != b.width() || a.height() != b.height() || a.channels() != b.channels())
    throw Error(ErrorKind::NotComparable,
                fmt::format("not comparable: {} of {}x{}x{} and {}x{}x{}", what, a.width(),
                            a.height(), a.channels(), b.width(), b.height(), b.channels()));
}

// Bilinear sample of channel c at (x, y) in pixel-centre coordinates, clamped at the edges.
float bilinear(const Image& image, int c, double x, double y) {
  const double fx = std::floor(x), fy = std::floor(y);
  const double u = x - fx, v = y - fy;
  const auto at = [&](double px, double py) {
    const int ix = std::clamp(int(px), 0, image.width() - 1);
    const int iy = std::clamp(int(py), 0, image.height() - 1);
    return double(image.at(ix, iy, c));
  };
  return float((at(fx, fy) * (1 - u) + at(fx + 1, fy) * u) * (1 - v) +
               (at(fx, fy + 1) * (1 - u) + at(fx + 1, fy + 1) * u) * v);
}

// The nearest pixel's value of channel c at (x, y).
float nearest(const Image& image, int c, double x, double y) {
  const int ix = std::clamp(int(std::lround(x)), 0, image.width() - 1);
  const int iy = std::clamp(int(std::lround(y)), 0, image.height() - 1);
  return image.at(ix, iy, c);
}

// Whether the surface at (x, y) of the current frame is the one at (px, py) of the previous.
bool seen_before(const TemporalFrame& previous, const TemporalFrame& current, int x, int y,
                 double px, double py) {
  const int w = current.colour.width(), h = current.colour.height();
  if (px < 0 || py < 0 || px > w - 1 || py > h - 1) return false;
  if (current.depth.width() > 0 && previous.depth.width() > 0) {
    const double z = current.depth.at(x, y, 0), before = nearest(previous.depth, 0, px, py);
    if (std::isfinite(z) || std::isfinite(before)) {
      if (!(std::fabs(z - before) <= 0.05 * std::min(std::fabs(z), std::fabs(before))))
        return false;
    }
  }
  if (current.normal.width() > 0 && previous.normal.width() > 0) {
    double dot = 0, n1 = 0, n2 = 0;
    for (int c = 0; c < 3; ++c) {
      const double a = current.normal.at(x, y, c), b = nearest(previous.normal, c, px, py);
      dot += a * b, n1 += a * a, n2 += b * b;
    }
    constexpr double kCos25 = 0.90630778703665;  // cos(25 degrees)
    if (n1 > 0 && n2 > 0 && dot < kCos25 * std::sqrt(n1 * n2)) return false;
  }
  return true;
}

}  // namespace

Image display_colour(const Image& image, bool linear) {
  const int channels = image.color_channels() >= 3 ? 3 : 1;
  Image out(image.width(), image.height(), channels);
  for (int c = 0; c < channels; ++c)
    for (int y = 0; y < image.height(); ++y) {
      const float* from = image.row(c, y);
      float* to = out.row(c, y);
      for (int x = 0; x < image.width(); ++x)
        to[x] = linear ? float(std::pow(std::clamp(double(from[x]), 0.0, 1.0), 1 / 2.2)) : from[x];
    }
  return out;
}

double temporal_error(const Image& a_prev, const Image& a, const Image& b_prev, const Image& b) {
  check_same(a_prev, a, "frames");
  check_same(b_prev, b, "frames");
  check_same(a, b, "sequences' frames");
  double sum = 0;
  for (int c = 0; c < a.channels(); ++c)
    for (int y = 0; y < a.height(); ++y)
      for (int x = 0; x < a.width(); ++x)
        sum += std::fabs((double(a.at(x, y, c)) - a_prev.at(x, y, c)) -
                         (double(b.at(x, y, c)) - b_prev.at(x, y, c)));
  return sum / (double(a.channels()) * a.width() * a.height());
}

Flicker flicker(const TemporalFrame& previous, const TemporalFrame& current) {
  check_same(previous.colour, current.colour, "frames");
  const Image& now = current.colour;
  const bool moves = current.motion.width() > 0;
  double sum = 0;
  std::size_t seen = 0;
  for (int y = 0; y < now.height(); ++y)
    for (int x = 0; x < now.width(); ++x) {
      const double px = moves ? x + current.motion.at(x, y, 0) : x;
      const double py = moves ? y - current.motion.at(x, y, 1) : y;
      if (!seen_before(previous, current, x, y, px, py)) continue;
      for (int c = 0; c < now.channels(); ++c)
        sum += std::fabs(double(now.at(x, y, c)) - bilinear(previous.colour, c, px, py));
      ++seen;
    }
  return {seen ? sum / (double(seen) * now.channels()) : 0.0, seen};
}

}  // namespace halo
