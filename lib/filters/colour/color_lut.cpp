// Baked colour tables (color_lut.hpp); the device side is kernels/color_lut.cl, with the same
// arithmetic as ColorLut::apply.
#include "filters/colour/color_lut.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cl/groups.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/paths.hpp"
#include "core/settings.hpp"
#include "core/text.hpp"

namespace halo {

namespace {

// Curves are the table when they reproduce the transform this closely (relative, as --verify
// measures): channels that truly mix are far above it, float rounding of a matrix's zeros below.
constexpr double kCurvesError = 5e-4;
// Curves this close need no split tried (float rounding of the steps).
constexpr double kExactError = 1e-5;
// What --verify holds a device to, relative to max(1, |value|): a table, half an 8-bit code;
// the library's own GPU program, float rounding.
constexpr double kTableTolerance = 2e-3;
constexpr double kProgramTolerance = 1e-4;
// Odd, so that 0 is an entry, and each half of 2048 cells puts the toe's end (1/64) on one.
constexpr int kCurveSize = 4097;
constexpr int kProbes = 20000;

float lerp(float a, float b, float f) {
  return a + f * (b - a);
}

// The table position of coordinate u on an axis of n entries: the cell and the fraction in it.
void locate(float u, int n, int& i, float& f) {
  const float pos = u * float(n - 1);
  i = std::min(int(pos), n - 2);
  f = pos - float(i);
}

void apply_matrix(const std::vector<float>& m, float* p) {
  const float r = p[0], g = p[1], b = p[2];
  for (int c = 0; c < 3; ++c) {
    const float* row = &m[std::size_t(c) * 4];
    p[c] = row[0] * r + row[1] * g + row[2] * b + row[3];
  }
}

// Three curves of n entries starting at table[first * 4], read through `shaper`.
void apply_curves(const std::vector<float>& table, std::size_t first, int n, const Shaper& shaper,
                  float* p) {
  for (int c = 0; c < 3; ++c) {
    int i;
    float f;
    locate(shaper(p[c]), n, i, f);
    const std::size_t at = (first + std::size_t(i)) * 4 + c;
    p[c] = lerp(table[at], table[at + 4], f);
  }
}

void apply_split(const ColorLut& lut, float* p) {
  const std::size_t n = std::size_t(lut.size);
  apply_curves(lut.table, 0, lut.size, lut.shaper, p);
  const std::vector<float> m(lut.table.begin() + std::ptrdiff_t(2 * n * 4),
                             lut.table.begin() + std::ptrdiff_t(2 * n * 4 + 12));
  apply_matrix(m, p);
  apply_curves(lut.table, n, lut.size, lut.post_shaper, p);
}

// Tetrahedral interpolation: the cell's diagonal splits it into six tetrahedra; the order of
// the three fractions picks the one holding the point, and the path from the cell's corner 000
// to 111 through its corners a and b: v = c000 + f1 (ca - c000) + f2 (cb - ca) + f3 (c111 - cb)
// with f1 >= f2 >= f3 the fractions along the path's steps.
struct Tetrahedron {
  int a[3], b[3];  // the corners after the first and second steps (red, green, blue)
  float f1, f2, f3;
};

Tetrahedron tetrahedron(float fr, float fg, float fb) {
  if (fr > fg) {
    if (fg > fb) return {{1, 0, 0}, {1, 1, 0}, fr, fg, fb};
    if (fr > fb) return {{1, 0, 0}, {1, 0, 1}, fr, fb, fg};
    return {{0, 0, 1}, {1, 0, 1}, fb, fr, fg};
  }
  if (fb > fg) return {{0, 0, 1}, {0, 1, 1}, fb, fg, fr};
  if (fb > fr) return {{0, 1, 0}, {0, 1, 1}, fg, fb, fr};
  return {{0, 1, 0}, {1, 1, 0}, fg, fr, fb};
}

void apply_cube(const ColorLut& lut, float* p) {
  const int n = lut.size;
  int i[3];
  float f[3];
  for (int c = 0; c < 3; ++c) locate(lut.shaper(p[c]), n, i[c], f[c]);
  const auto at = [&](const int(&d)[3], int c) {
    const std::size_t index = (std::size_t(i[2] + d[2]) * n + (i[1] + d[1])) * n + (i[0] + d[0]);
    return lut.table[index * 4 + c];
  };
  const Tetrahedron t = tetrahedron(f[0], f[1], f[2]);
  constexpr int kFirst[3] = {0, 0, 0}, kLast[3] = {1, 1, 1};
  for (int c = 0; c < 3; ++c) {
    const float c000 = at(kFirst, c), ca = at(t.a, c), cb = at(t.b, c), c111 = at(kLast, c);
    p[c] = c000 + t.f1 * (ca - c000) + t.f2 * (cb - ca) + t.f3 * (c111 - cb);
  }
}

// Inputs spread evenly over the shaper's coordinates (every cell of a table is hit), plus the
// greys, where a display transform's errors show first. A cube's few negative cells are not
// probed: what a tone curve does to colours below zero (outside every gamut) changes faster
// than any table holds, and the error measured there would hide the rest's; --verify reports
// such pixels.
std::vector<float> probes(const Shaper& shaper) {
  std::mt19937 random(20261126);
  const float first = shaper.neg < 0.5f ? shaper.neg : 0.0f;
  std::uniform_real_distribution<float> unit(first, 1.0f);
  std::vector<float> rgb;
  rgb.reserve(std::size_t(kProbes) * 3 + 3000);
  for (int i = 0; i < kProbes * 3; ++i) rgb.push_back(shaper.inverse(unit(random)));
  for (int i = 0; i < 1000; ++i) {
    const float v = shaper.inverse(first + (1.0f - first) * (float(i) + 0.5f) / 1000.0f);
    rgb.insert(rgb.end(), {v, v, v});
  }
  return rgb;
}

// The probes of a shaper and the transform's values there, computed once for the tables
// measured on them.
struct ProbeSet {
  std::vector<float> inputs, want;

  ProbeSet(const ColorTransform& exact, const Shaper& shaper) : inputs(probes(shaper)) {
    want = inputs;
    exact(want.data(), want.size() / 3);
  }
};

double largest_error(const ColorLut& lut, const ProbeSet& probe) {
  std::vector<float> got = probe.inputs;
  lut.apply(got.data(), got.size() / 3);
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float want = probe.want[i];
    if (!std::isfinite(want)) continue;  // the table cannot hold it; --verify reports it
    const double scale = std::max(1.0, double(std::fabs(want)));
    worst = std::max(worst, std::fabs(double(got[i]) - double(want)) / scale);
  }
  return worst;
}

// A transform's three curves, as (r, g, b, 0) entries: greys through it.
std::vector<float> curve_entries(const ColorTransform& transform, const Shaper& shaper) {
  std::vector<float> rgb(std::size_t(kCurveSize) * 3);
  for (int i = 0; i < kCurveSize; ++i) {
    const float v = shaper.inverse(float(i) / float(kCurveSize - 1));
    rgb[std::size_t(i) * 3] = rgb[std::size_t(i) * 3 + 1] = rgb[std::size_t(i) * 3 + 2] = v;
  }
  transform(rgb.data(), kCurveSize);
  std::vector<float> entries(std::size_t(kCurveSize) * 4, 0.0f);
  for (int i = 0; i < kCurveSize; ++i)
    for (int c = 0; c < 3; ++c) entries[std::size_t(i) * 4 + c] = rgb[std::size_t(i) * 3 + c];
  return entries;
}

ColorLut bake_curves(const ColorTransform& exact, Shaper shaper) {
  return {.kind = ColorLut::Kind::curves,
          .shaper = shaper,
          .size = kCurveSize,
          .table = curve_entries(exact, shaper)};
}

ColorLut bake_split(const SplitTransform& split) {
  ColorLut lut{.kind = ColorLut::Kind::split,
               .shaper = split.before_shaper,
               .post_shaper = split.after_shaper,
               .size = kCurveSize,
               .table = curve_entries(split.before, split.before_shaper)};
  const std::vector<float> after = curve_entries(split.after, split.after_shaper);
  lut.table.insert(lut.table.end(), after.begin(), after.end());
  lut.table.insert(lut.table.end(), split.matrix.begin(), split.matrix.end());
  return lut;
}

ColorLut bake_cube(const ColorTransform& exact, Shaper shaper, int n) {
  ColorLut lut{.kind = ColorLut::Kind::cube, .shaper = shaper, .size = n};
  std::vector<float> axis(n);
  for (int i = 0; i < n; ++i) axis[i] = shaper.inverse(float(i) / float(n - 1));
  const std::size_t entries = std::size_t(n) * n * n;
  std::vector<float> rgb(entries * 3);
  std::size_t k = 0;
  for (int b = 0; b < n; ++b)
    for (int g = 0; g < n; ++g)
      for (int r = 0; r < n; ++r) {
        rgb[k++] = axis[r];
        rgb[k++] = axis[g];
        rgb[k++] = axis[b];
      }
  exact(rgb.data(), entries);
  lut.table.assign(entries * 4, 0.0f);
  for (std::size_t e = 0; e < entries; ++e)
    for (int c = 0; c < 3; ++c) lut.table[e * 4 + c] = rgb[e * 3 + c];
  return lut;
}

}  // namespace

float Shaper::operator()(float x) const {
  if (neg > 0.0f) {
    Shaper half = *this;
    half.neg = 0.0f;
    if (x < 0.0f) {
      half.hi = neg_hi;
      return neg * (1.0f - half(-x));
    }
    return neg + (1.0f - neg) * half(x);
  }
  if (kind == Kind::linear) {
    const float u = (x - lo) / (hi - lo);
    return u > 0.0f ? (u < 1.0f ? u : 1.0f) : 0.0f;  // NaN: 0
  }
  if (!(x > 0.0f)) return 0.0f;
  const float a = std::exp2(lo);
  if (x < a) return x / a * toe;
  const float u = toe + (1.0f - toe) * ((std::log2(x) - lo) / (hi - lo));
  return u < 1.0f ? u : 1.0f;
}

float Shaper::inverse(float u) const {
  if (neg > 0.0f) {
    Shaper half = *this;
    half.neg = 0.0f;
    if (u < neg) {
      half.hi = neg_hi;
      return -half.inverse(1.0f - u / neg);
    }
    return half.inverse((u - neg) / (1.0f - neg));
  }
  if (kind == Kind::linear) return lo + u * (hi - lo);
  if (u <= toe) return u / toe * std::exp2(lo);
  return std::exp2(lo + (u - toe) / (1.0f - toe) * (hi - lo));
}

std::string Shaper::describe() const {
  const std::string negatives =
      neg <= 0.0f ? ""
      : kind == Kind::linear
          ? fmt::format("-{:g}..0 over {:.3g}% of the table; ", neg_hi, neg * 100)
          : fmt::format("-2^{:g}..0 over {:.3g}% of the table; ", neg_hi, neg * 100);
  if (kind == Kind::linear) return fmt::format("inputs {}{:g}..{:g} evenly", negatives, lo, hi);
  return fmt::format("inputs {}0..2^{:g} evenly, then 2^{:g}..2^{:g} by equal stops", negatives, lo,
                     lo, hi);
}

void ColorLut::apply(float* rgb, std::size_t pixels) const {
  for (std::size_t i = 0; i < pixels; ++i) {
    float* p = rgb + i * 3;
    switch (kind) {
      case Kind::matrix:
        apply_matrix(table, p);
        break;
      case Kind::curves:
        apply_curves(table, 0, size, shaper, p);
        break;
      case Kind::split:
        apply_split(*this, p);
        break;
      case Kind::cube:
        apply_cube(*this, p);
        break;
    }
  }
}

std::string ColorLut::describe() const {
  switch (kind) {
    case Kind::matrix:
      return fmt::format("a 3x3 matrix and offset (largest error {:.2g})", error);
    case Kind::curves:
      return fmt::format("three curves of {} entries, {} (largest error {:.2g})", size,
                         shaper.describe(), error);
    case Kind::split:
      return fmt::format(
          "curves of {} entries ({}), a 3x3 matrix and offset, curves ({}) "
          "(largest error {:.2g})",
          size, shaper.describe(), post_shaper.describe(), error);
    case Kind::cube:
      return fmt::format("a {}^3 cube, tetrahedral, {} (largest error {:.2g})", size,
                         shaper.describe(), error);
  }
  return {};
}

ColorLut bake_color_lut(const ColorBake& b) {
  // The source's own range (the cube's shaper) is probed once for the split and the cube.
  std::optional<ProbeSet> source;
  const auto measured = [&](ColorLut lut, const ProbeSet& probe) {
    lut.error = largest_error(lut, probe);
    return lut;
  };
  const auto in_source = [&]() -> const ProbeSet& {
    if (!source) source.emplace(b.exact, b.shaper);
    return *source;
  };
  if (b.matrix) {
    ColorLut lut{.kind = ColorLut::Kind::matrix};
    lut.table.assign(b.matrix->begin(), b.matrix->end());
    return measured(std::move(lut), in_source());
  }
  ColorLut best =
      measured(bake_curves(b.exact, b.curves_shaper), ProbeSet(b.exact, b.curves_shaper));
  if (b.split && best.error > kExactError) {  // probed where the cube would be
    ColorLut split = measured(bake_split(*b.split), in_source());
    if (split.error < best.error) best = std::move(split);
  }
  if (best.error <= kCurvesError) return best;
  ColorLut cube = measured(bake_cube(b.exact, b.shaper, b.cube_size), in_source());
  if (cube.error > kTableTolerance && b.finer) {
    const auto& [size, shaper] = *b.finer;
    ColorLut finer = measured(bake_cube(b.exact, shaper, size), ProbeSet(b.exact, shaper));
    if (finer.error < cube.error) cube = std::move(finer);
  }
  return best.error < cube.error ? best : cube;
}

ColorTransformStage::ColorTransformStage(std::string spec, Plan plan)
    : Stage(std::move(spec)), plan_(std::move(plan)) {}

namespace {

namespace fs = std::filesystem;

// The cache file's layout: magic, the key's length and bytes, kind, size, both shapers, the
// error, the table's length and floats (this machine's byte order: the cache is this machine's).
constexpr char kTableMagic[8] = {'H', 'A', 'L', 'O', 'L', 'U', 'T', '1'};

template <class T>
void put(std::ostream& out, const T& v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof v);
}
template <class T>
bool get(std::istream& in, T& v) {
  return bool(in.read(reinterpret_cast<char*>(&v), sizeof v));
}

void put_shaper(std::ostream& out, const Shaper& s) {
  put(out, int(s.kind)), put(out, s.lo), put(out, s.hi), put(out, s.toe), put(out, s.neg);
  put(out, s.neg_hi);
}
bool get_shaper(std::istream& in, Shaper& s) {
  int kind = 0;
  if (!get(in, kind) || (kind != 0 && kind != 1)) return false;
  s.kind = Shaper::Kind(kind);
  return get(in, s.lo) && get(in, s.hi) && get(in, s.toe) && get(in, s.neg) && get(in, s.neg_hi);
}

std::optional<ColorLut> read_table(const fs::path& path, const std::string& key) {
  const std::optional<std::string> bytes =
      read_cached_file(path.string(), std::size_t(64) << 20, "colour table", spdlog::level::debug);
  if (!bytes) return std::nullopt;
  std::istringstream in(*bytes);
  char magic[8];
  std::uint64_t key_size = 0, count = 0;
  if (!in || !get(in, magic) || !std::equal(magic, magic + 8, kTableMagic) || !get(in, key_size) ||
      key_size != key.size())
    return std::nullopt;
  std::string stored(key_size, '\0');
  if (!in.read(stored.data(), std::streamsize(key_size)) || stored != key) return std::nullopt;
  ColorLut lut;
  int kind = 0;
  if (!get(in, kind) || kind < 0 || kind > 3 || !get(in, lut.size) || !get_shaper(in, lut.shaper) ||
      !get_shaper(in, lut.post_shaper) || !get(in, lut.error) || !get(in, count) ||
      count > (std::uint64_t(1) << 28))
    return std::nullopt;
  lut.kind = ColorLut::Kind(kind);
  lut.table.resize(count);
  if (!in.read(reinterpret_cast<char*>(lut.table.data()), std::streamsize(count * sizeof(float))))
    return std::nullopt;
  return lut;
}

void write_table(const fs::path& path, const std::string& key, const ColorLut& lut) {
  fs::create_directories(path.parent_path());
  AtomicOutput output(path);
  {
    std::ofstream out(output.temp_path(), std::ios::binary);
    out.write(kTableMagic, sizeof kTableMagic);
    put(out, std::uint64_t(key.size()));
    out.write(key.data(), std::streamsize(key.size()));
    put(out, int(lut.kind)), put(out, lut.size);
    put_shaper(out, lut.shaper), put_shaper(out, lut.post_shaper);
    put(out, lut.error), put(out, std::uint64_t(lut.table.size()));
    out.write(reinterpret_cast<const char*>(lut.table.data()),
              std::streamsize(lut.table.size() * sizeof(float)));
    if (!out.flush()) throw Error(ErrorKind::Io, path.string() + ": write failed");
  }
  output.commit();
}

}  // namespace

ColorLut cached_color_lut(const std::string& key, const ColorBake& b,
                          const std::optional<fs::path>& cache_dir) {
  if (key.empty() || !cache_dir) return bake_color_lut(b);
  // The transform's key, and how it is baked: a file written by another bake is not taken.
  const auto shaper = [](const Shaper& s) {
    return fmt::format("{} {} {} {} {} {}", int(s.kind), s.lo, s.hi, s.toe, s.neg, s.neg_hi);
  };
  std::string full = fmt::format("bake 1; cube {} {}; curves {}", b.cube_size, shaper(b.shaper),
                                 shaper(b.curves_shaper));
  if (b.finer) full += fmt::format("; finer {} {}", b.finer->first, shaper(b.finer->second));
  if (b.split)
    full +=
        fmt::format("; split {} {}", shaper(b.split->before_shaper), shaper(b.split->after_shaper));
  full += "; " + key;
  const fs::path path = *cache_dir / "colour-tables" / (fnv1a_hex(full) + ".lut");
  if (auto lut = read_table(path, full)) return *lut;
  ColorLut lut = bake_color_lut(b);
  try {
    write_table(path, full, lut);
  } catch (const std::exception& e) {
    spdlog::debug("colour table not kept: {}", e.what());
  }
  return lut;
}

namespace {

// Tables in this process, by their plan's key (a handful: one per colour stage), read from the
// cache folder or baked.
std::shared_ptr<const ColorLut> shared_table(const std::string& key, const ColorBake& bake) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const ColorLut>> tables;
  if (key.empty()) return std::make_shared<const ColorLut>(bake_color_lut(bake));
  {
    std::lock_guard lock(mutex);
    if (const auto it = tables.find(key); it != tables.end()) return it->second;
  }
  auto table = std::make_shared<const ColorLut>(cached_color_lut(key, bake, settings().cache_dir));
  std::lock_guard lock(mutex);
  if (tables.size() >= 64) tables.clear();  // a bound; pipelines hold a few
  return tables.emplace(key, table).first->second;
}

}  // namespace

const ColorLut& ColorTransformStage::lut() const {
  std::call_once(baked_, [&] { lut_ = shared_table(plan_.key, plan_.bake); });
  return *lut_;
}

std::vector<std::string> ColorTransformStage::details(const StageRun&) const {
  if (!plan_.program.empty())
    return {plan_.what, "on a device: OpenColorIO's own GPU program (analytic, no table)"};
  return {plan_.what, "on a device: " + lut().describe()};
}

// A matrix computes as the library does; the library's own program as its CPU code does but
// for float rounding and the CPU's fast pow and log (1.2e-5 of the value at most on the ACES
// view over 2^-30..2^33); a table is held to half an 8-bit code, whatever its probes said.
double ColorTransformStage::verify_tolerance(const Device&, double given) const {
  if (plan_.bake.matrix) return given;  // the library's own float arithmetic
  return std::max(given, plan_.program.empty() ? kTableTolerance : kProgramTolerance);
}

StageTraits ColorTransformStage::traits() const {
  if (!plan_.program.empty()) return {.cost = {.reference_ns = 160, .device_ns = 250}};
  return {.cost = {.reference_ns = 60, .device_ns = 18}};
}

std::array<float, 2> ColorTransformStage::bounds() const {
  if (!plan_.program.empty() || plan_.bake.matrix) return {-COLOUR_BOUND, COLOUR_BOUND};
  const Shaper& s = lut().shaper;
  return {s.inverse(0.0f), s.inverse(1.0f)};
}

void ColorTransformStage::check_channels(int colours) const {
  if (colours != 3 && colours != 1)
    throw Error(ErrorKind::Usage,
                fmt::format("filter '{}': needs three colour channels (RGB or RGBA) or one (grey); "
                            "this image has {}",
                            spec(), colours));
}

// A grey image goes through as R = G = B and keeps the result's green; the library is given
// samples within COLOUR_BOUND, and a pixel with a NaN sample comes out NaN
// (kernels/color_pixel.cl, the same rule).
Image ColorTransformStage::reference_rows(const Image& in, Span out, StageRun&) const {
  const int colours = in.color_channels();
  check_channels(colours);
  Image result = in.like(in.channels(), in.alpha());
  std::vector<float> rgb(std::size_t(in.width()) * 3);
  std::vector<char> nan(std::size_t(in.width()));
  const auto [lo, hi] = bounds();
  for (int y = out.first; y < out.last; ++y) {
    const int r = y - in.y0();
    for (int x = 0; x < in.width(); ++x) {
      nan[x] = false;
      for (int c = 0; c < 3; ++c) {
        const float v = in.row(colours == 1 ? 0 : c, r)[x];
        nan[x] = nan[x] || std::isnan(v);
        rgb[std::size_t(x) * 3 + c] = std::clamp(v, lo, hi);
      }
    }
    plan_.bake.exact(rgb.data(), std::size_t(in.width()));
    for (int x = 0; x < in.width(); ++x)
      for (int c = 0; c < colours; ++c)
        result.row(c, r)[x] = nan[x] ? std::numeric_limits<float>::quiet_NaN()
                                     : rgb[std::size_t(x) * 3 + (colours == 1 ? 1 : c)];
  }
  copy_alpha(in, result);
  return result;
}

namespace {

// A shaper as the kernels take it: (lo, hi, toe, 2^lo, neg, neg_hi) and its kind.
cl_float8 shaper_values(const Shaper& s) {
  return {{s.lo, s.hi, s.toe, float(std::exp2(s.lo)), s.neg, s.neg_hi, 0.0f, 0.0f}};
}
cl_int shaper_kind(const Shaper& s) {
  return int(s.kind);
}

// The table on the device, uploaded once a run.
struct LutState : StageState {
  cl::Buffer table;
};

}  // namespace

DeviceImage ColorTransformStage::enqueue_rows(Device& device, const DeviceImage& in, Span out,
                                              StageRun& run) const {
  check_channels(in.color_channels());
  const auto bounds_values = [&] {
    const auto [lo, hi] = bounds();
    return cl_float2{{lo, hi}};
  };
  DeviceImage result = device.image_like(in, in.channels, in.alpha);
  const std::size_t bytes = 2 * std::size_t(in.width) * out.count() * 3 * 4;
  const cl::NDRange global(in.width, out.count());
  if (!plan_.program.empty()) {
    auto kernel = device.kernel("color_program.cl", "color_program", {}, plan_.program.code);
    auto& state = run.state_as<LutState>();
    if (!state.table())
      state.table = device.constants(plan_.program.textures, spec() + " LUT textures");
    set_args(kernel, in.buffer, result.buffer, strip_args(in, out), in.color_channels(),
             bounds_values(), state.table);
    device.launch(kernel, "color_program", global, groups::tile, bytes);
    copy_alpha(device, in, result);
    return result;
  }
  const ColorLut& table = lut();
  auto& state = run.state_as<LutState>();
  if (!state.table()) state.table = device.constants(table.table, spec() + " colour table");
  static const char* const names[] = {"color_matrix", "color_curves", "color_split", "color_cube"};
  const char* name = names[int(table.kind)];
  auto kernel = device.kernel("color_lut.cl", name, {});
  set_args(kernel, in.buffer, result.buffer, strip_args(in, out), state.table, table.size,
           shaper_values(table.shaper), shaper_kind(table.shaper), shaper_values(table.post_shaper),
           shaper_kind(table.post_shaper), in.color_channels(), bounds_values());
  device.launch(kernel, name, global, groups::tile, bytes);
  copy_alpha(device, in, result);
  return result;
}

}  // namespace halo
