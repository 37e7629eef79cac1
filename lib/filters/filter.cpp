// Border addressing and alpha pass-through shared by all filters.
#include "filters/filter.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

namespace halo {

Border parse_border(const std::string& name) {
  if (name == "zero") return Border::zero;
  if (name == "clamp") return Border::clamp;
  if (name == "reflect") return Border::reflect;
  if (name == "wrap") return Border::wrap;
  throw Error(ErrorKind::Usage, "unknown border '" + name + "'");
}

int border_index(int i, int n, Border border) {
  if (i >= 0 && i < n) return i;
  switch (border) {
    case Border::zero:
      return -1;
    case Border::clamp:
      return std::clamp(i, 0, n - 1);
    case Border::reflect: {
      if (n == 1) return 0;
      const int period = 2 * n - 2;
      i = std::abs(i) % period;
      return i < n ? i : period - i;
    }
    case Border::wrap:
      return ((i % n) + n) % n;
  }
  return -1;
}

std::vector<int> border_table(int n, int r, Border border) {
  std::vector<int> table(n + 2 * r);
  for (int i = 0; i < int(table.size()); ++i) table[i] = border_index(i - r, n, border);
  return table;
}

std::vector<float> scaled_weights(const std::vector<double>& values, double scale) {
  std::vector<float> weights;
  for (double v : values) weights.push_back(float(v / scale));
  return weights;
}

double sum_or_one(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum == 0 ? 1.0 : sum;
}

void copy_alpha(const Image& in, Image& out) {
  if (!in.alpha() || !out.alpha()) return;
  const int a_in = in.channels() - 1;
  const int a_out = out.channels() - 1;
  for (int y = 0; y < in.height(); ++y)
    std::memcpy(out.row(a_out, y), in.row(a_in, y), sizeof(float) * in.width());
}

void copy_alpha(Device& device, const DeviceImage& in, DeviceImage& out) {
  if (!in.alpha || !out.alpha) return;
  const std::size_t plane = in.plane_size() * sizeof(float);
  device.copy(in.buffer, out.buffer, plane * (in.channels - 1), plane * (out.channels - 1), plane,
              "alpha");
}

}  // namespace halo
