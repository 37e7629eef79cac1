// SSIM row by row: the window's five moments (means, squares and the product of the two
// images) filtered across each row, kept for the last 11 rows, then down the columns.
#include "verify/ssim.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "cl/device.hpp"
#include "core/bands.hpp"
#include "core/error.hpp"

namespace halo {

namespace {

constexpr double kSigma = 1.5, kK1 = 0.01, kK2 = 0.03;
constexpr int kRadius = 5;  // int(3.5 sigma + 0.5): scipy.ndimage's truncation at 3.5 sigma
constexpr int kTaps = 2 * kRadius + 1;
constexpr int kMoments = 5;  // a, b, a², b², ab

std::array<double, kTaps> window() {
  std::array<double, kTaps> w{};
  double sum = 0;
  for (int k = 0; k < kTaps; ++k)
    sum += w[k] = std::exp(-0.5 * (k - kRadius) * (k - kRadius) / (kSigma * kSigma));
  for (double& v : w) v /= sum;
  return w;
}

// The mean SSIM of one channel over the pixels at least kRadius from every edge: the only
// ones scikit-image averages, and the only ones whose windows lie inside the image, so the
// mirrored edge never enters the figure.
// The sum of SSIM over the centres on image rows [first, last) (all at least kRadius from
// the top and bottom).
double band_ssim(const Image& a, const Image& b, int c, double data_range, int first, int last) {
  const std::array<double, kTaps> w = window();
  const int width = a.width();
  const double c1 = (kK1 * data_range) * (kK1 * data_range);
  const double c2 = (kK2 * data_range) * (kK2 * data_range);
  // Rows filtered across, for the last kTaps image rows: [row % kTaps][moment][x].
  std::vector<double> across(std::size_t(kTaps) * kMoments * width);
  auto at = [&](int row, int moment) {
    return across.data() + (std::size_t(row % kTaps) * kMoments + moment) * width;
  };
  double sum = 0;
  for (int y = first - kRadius; y < last + kRadius; ++y) {
    const float* ra = a.row(c, y);
    const float* rb = b.row(c, y);
    for (int x = kRadius; x < width - kRadius; ++x) {
      double m[kMoments] = {};
      for (int k = 0; k < kTaps; ++k) {
        const double va = ra[x + k - kRadius], vb = rb[x + k - kRadius];
        m[0] += w[k] * va;
        m[1] += w[k] * vb;
        m[2] += w[k] * va * va;
        m[3] += w[k] * vb * vb;
        m[4] += w[k] * va * vb;
      }
      for (int i = 0; i < kMoments; ++i) at(y, i)[x] = m[i];
    }
    if (y < first + kRadius) continue;
    for (int x = kRadius; x < width - kRadius; ++x) {  // the window centred on row y - kRadius
      double m[kMoments] = {};
      for (int k = 0; k < kTaps; ++k)
        for (int i = 0; i < kMoments; ++i) m[i] += w[k] * at(y - kTaps + 1 + k, i)[x];
      const double ux = m[0], uy = m[1];
      const double vx = m[2] - ux * ux, vy = m[3] - uy * uy, vxy = m[4] - ux * uy;
      sum += (2 * ux * uy + c1) * (2 * vxy + c2) / ((ux * ux + uy * uy + c1) * (vx + vy + c2));
    }
  }
  return sum;
}

double channel_ssim(const Image& a, const Image& b, int c, double data_range) {
  const int centres = a.height() - 2 * kRadius;
  std::vector<std::pair<int, double>> parts;  // (first row, sum): added in row order, so
  std::mutex mutex;                           // the figure does not depend on the threads
  in_bands(centres, 64, [&](int first, int last) {
    const double part = band_ssim(a, b, c, data_range, first + kRadius, last + kRadius);
    std::lock_guard lock(mutex);
    parts.emplace_back(first, part);
  });
  std::sort(parts.begin(), parts.end());
  double sum = 0;
  for (const auto& [first, part] : parts) sum += part;
  return sum / (double(a.width() - 2 * kRadius) * double(centres));
}

}  // namespace

std::size_t ssim_bytes(int width) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return cores * std::size_t(kTaps) * kMoments * std::size_t(width) * sizeof(double);
}

namespace {

void check_sizes(const Image& a, const Image& b) {
  if (a.width() != b.width() || a.height() != b.height() || a.channels() != b.channels())
    throw Error(ErrorKind::NotComparable,
                fmt::format("ssim: the images are {}x{}x{} and {}x{}x{}", a.width(), a.height(),
                            a.channels(), b.width(), b.height(), b.channels()));
  if (a.width() < kSsimMinSize || a.height() < kSsimMinSize)
    throw Error(ErrorKind::NotComparable,
                fmt::format("ssim: needs at least {0}x{0} pixels (one window), the images are "
                            "{1}x{2}",
                            kSsimMinSize, a.width(), a.height()));
}

}  // namespace

Ssim ssim(const Image& a, const Image& b, double data_range) {
  check_sizes(a, b);
  Ssim result;
  for (int c = 0; c < a.channels(); ++c) {
    result.channels.push_back(channel_ssim(a, b, c, data_range));
    result.mean += result.channels.back();
  }
  result.mean /= double(a.channels());
  return result;
}

Ssim ssim_device(Device& device, const Image& a, const Image& b, double data_range,
                 std::size_t strip_bytes) {
  check_sizes(a, b);
  const std::array<double, kTaps> w = window();
  const cl::Buffer taps = device.constants(std::vector<float>(w.begin(), w.end()), "ssim taps");
  const int width = a.width(), height = a.height(), pitch = a.pitch();
  const int centres = height - 2 * kRadius, inner = width - 2 * kRadius;
  // Strips whose moments (5 planes) stay within the budget.
  const std::size_t budget = std::min<std::size_t>(strip_bytes, device.info().max_allocation / 4);
  // At most kShiftRows centre rows: the moments are taken about a sample of the strip's middle
  // row (kernels/ssim.cl), which should lie near every window of the strip.
  constexpr int kShiftRows = 64;
  const int strip =
      std::clamp(int(budget / (kMoments * std::size_t(width) * sizeof(float))) - 2 * kRadius, 1,
                 std::min(centres, kShiftRows));
  const int most = strip + 2 * kRadius;
  const std::size_t row_bytes = std::size_t(pitch) * sizeof(float);
  cl::Buffer in[2] = {device.buffer(row_bytes * most, "ssim rows a"),
                      device.buffer(row_bytes * most, "ssim rows b")};
  cl::Buffer moments =
      device.buffer(kMoments * std::size_t(width) * most * sizeof(float), "ssim moments");
  cl::Buffer out = device.buffer(std::size_t(inner) * strip * sizeof(float), "ssim centres");
  // Rows in and centres out through page-locked memory, which DMA reads and writes without
  // the driver's copy of pageable memory (FLIP's rows: 105-154 ms -> 33-42 ms for an 8K pair).
  const auto pinned_rows = device.pinned(2 * row_bytes * most);
  const auto pinned_centres = device.pinned(std::size_t(inner) * strip * sizeof(float));
  auto* staging = static_cast<std::byte*>(pinned_rows->data());
  const float* centre = static_cast<const float*>(pinned_centres->data());
  auto across = device.kernel("ssim.cl", "ssim_across", {});
  auto down = device.kernel("ssim.cl", "ssim_down", {});
  const float c1 = float((kK1 * data_range) * (kK1 * data_range));
  const float c2 = float((kK2 * data_range) * (kK2 * data_range));
  Ssim result;
  for (int c = 0; c < a.channels(); ++c) {
    double sum = 0;
    for (int first = 0; first < centres; first += strip) {  // centre rows, less kRadius
      const int count = std::min(strip, centres - first), rows = count + 2 * kRadius;
      std::memcpy(staging, a.row(c, first), row_bytes * rows);
      std::memcpy(staging + row_bytes * most, b.row(c, first), row_bytes * rows);
      device.write(in[0], staging, row_bytes * rows, "ssim rows in");
      device.write(in[1], staging + row_bytes * most, row_bytes * rows, "ssim rows in");
      set_args(across, in[0], in[1], width, pitch, rows, taps, kRadius, moments);
      device.launch(across, "ssim_across", cl::NDRange(std::size_t(inner), std::size_t(rows)),
                    cl::NDRange(64, 4));
      set_args(down, in[0], in[1], pitch, moments, width, rows, count, taps, kRadius, c1, c2, out);
      device.launch(down, "ssim_down", cl::NDRange(std::size_t(inner), std::size_t(count)),
                    cl::NDRange(64, 4));
      device.read(out, pinned_centres->data(), std::size_t(inner) * count * sizeof(float),
                  "ssim centres out");
      for (std::size_t i = 0; i < std::size_t(inner) * count; ++i) sum += centre[i];
    }
    result.channels.push_back(sum / (double(inner) * double(centres)));
    result.mean += result.channels.back();
  }
  result.mean /= double(a.channels());
  return result;
}

}  // namespace halo
