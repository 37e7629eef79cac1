// One pair of `halo compare` (compare/pair.hpp).
#include "compare/pair.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "cl/cl_error.hpp"
#include "core/limits.hpp"
#include "io/image_io.hpp"

namespace halo {

std::string channel_name(const std::vector<std::string>& names, int c) {
  return c < int(names.size()) ? names[c] : std::to_string(c);
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

namespace {

// The channels compared, by name: FILE[...] or --ch, else every channel of the file, so
// that every layer of a multilayer EXR (depth, normals, AOVs) is checked, as idiff does.
// `file`: the file named by `path` where it was opened already (else opened here).
InputRef channels_to_compare(const std::string& path, std::shared_ptr<const CheckedFile> file,
                             ImagePart part, const ComparisonOptions& o) {
  InputRef ref = parse_input_ref(path);
  ref.part = part;
  ref.file = std::move(file);
  ref.file = opened_file(ref);
  if (!ref.channels.empty()) return ref;
  ref.channels =
      o.ch.empty() ? open_reader(ref.file, 1, part)->header().channels : split_names(o.ch);
  return ref;
}

// Both files hold the same channel names (as sets), or Error(NotComparable) naming the first
// difference.
void check_same_channels(const Pair& pair, const InputRef& a, const InputRef& b) {
  for (const auto& [one, other, name] : {std::tuple{&a, &b, pair.b}, std::tuple{&b, &a, pair.a}})
    for (const auto& channel : one->channels)
      if (std::find(other->channels.begin(), other->channels.end(), channel) ==
          other->channels.end())
        throw Error(ErrorKind::NotComparable,
                    fmt::format("not comparable: {} has no channel {}", name, channel));
}

// One of FLIP's colour-mapped images (8-bit sRGB codes), in the type the file can store.
void write_colour_map(const std::string& path, const Flip& f,
                      const std::vector<unsigned char>& codes) {
  PixelBuffer map(f.width, f.height, 3, PixelType::u8);
  std::memcpy(map.bytes.data(), codes.data(), codes.size());
  const SampleType type = storable_type(path, SampleType::u8);
  write_image(path, type == SampleType::u8 ? map : to_pixels(to_image(map), pixel_type(type)),
              type);
}

// |a - b| as an image, or with FLIP computed its heat map (magma, 8-bit sRGB).
void write_difference(const std::string& path, const Image& a, const Image& b, const Flip* f,
                      const ComparisonOptions& o) {
  if (!f) {
    const SampleType type = storable_type(path, SampleType::f32);
    write_image(path,
                to_pixels(difference_image(a, b, o.diff_scale, o.diff_signed), pixel_type(type)),
                type);
    return;
  }
  write_colour_map(path, *f, flip_heat_map(*f));
}

// Runs `compute` on the leased device and logs its kernels' and transfers' time (-v): the
// device's name, or empty without one or when it failed and --device auto lets the CPU go on.
template <class Compute>
std::string on_device(Device* device, const std::string& metric, const ComparisonOptions& o,
                      const Compute& compute) {
  if (!device) return {};
  try {
    device->take_timings();  // what came before is not this metric's
    compute(*device);
    double kernels = 0, transfers = 0;
    for (const auto& t : device->take_timings())
      (t.label.starts_with(metric + "_") ? kernels : transfers) += t.ms;
    spdlog::info("{} on {}: {:.2f} ms in kernels, {:.2f} ms moving rows", metric,
                 device->info().name, kernels, transfers);
    return device->info().name;
  } catch (const ClError& e) {
    if (!o.device_failed) throw;
    o.device_failed(e, metric);
    return {};
  }
}

// FLIP on the leased device (the reference without one, or when the device fails and
// --device auto allows falling back), and with --verify on the reference too: every pixel's
// error within kFlipVerifyTolerance of the reference's.
constexpr double kFlipVerifyTolerance = 2e-3;

// FLIP's colour: the compared channels when they are grey, RGB or RGBA; else the colour
// among them that halo reads by default (R,G,B(,A), or a layer's: a Blender render's
// ViewLayer.Combined), so that a render whose every layer is compared gets FLIP on its image.
// Usage error when there is no colour to pick.
std::vector<int> flip_colour(const std::vector<std::string>& names, const std::string& path) {
  if (names.size() == 1 || names.size() == 3 || names.size() == 4) return {};
  ImageHeader header;
  header.channels = names;
  return choose_channels(header, {path, {}}).picked;
}

Image channels_of(const Image& image, const std::vector<int>& picked, bool alpha) {
  Image out(image.width(), image.height(), int(picked.size()), alpha);
  out.set_source(image.source());
  for (std::size_t c = 0; c < picked.size(); ++c)
    for (int y = 0; y < image.height(); ++y)
      std::copy_n(image.row(picked[c], y), image.width(), out.row(int(c), y));
  return out;
}

void run_flip(PairResult& r, const Image& a, const Image& b, const FlipOptions& fo, Device* device,
              const ComparisonOptions& o) {
  const std::string on =
      on_device(device, "flip", o, [&](Device& d) { r.flip = flip_device(d, a, b, fo); });
  if (!on.empty()) r.metrics_device = on;
  if (!r.flip) r.flip = flip(a, b, fo);
  if (!o.verify || on.empty()) return;
  const Flip reference = flip(a, b, fo);
  double worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < reference.errors.size(); ++i) {
    const double d = std::fabs(double(r.flip->errors[i]) - reference.errors[i]);
    if (!(d <= worst)) {  // NaN counts as the worst
      worst = d;
      at = i;
    }
  }
  const bool failed = !(worst <= kFlipVerifyTolerance);
  r.verify_failed |= failed;
  r.verify.push_back(fmt::format(
      "verify flip on {}: {}: mean {:.6f} vs reference {:.6f}, max pixel difference {:.2e} at "
      "({}, {}) (tolerance {:g})",
      on, failed ? "MISMATCH" : "ok", r.flip->mean, reference.mean, worst,
      at % std::size_t(reference.width), at / std::size_t(reference.width), kFlipVerifyTolerance));
}

// SSIM likewise: with --verify, each channel's mean within kSsimVerifyTolerance of the
// reference's (the device sums float SSIM per centre; the reference works in double).
constexpr double kSsimVerifyTolerance = 1e-5;

void run_ssim(PairResult& r, const Image& a, const Image& b, Device* device,
              const ComparisonOptions& o) {
  const std::string on =
      on_device(device, "ssim", o, [&](Device& d) { r.ssim = ssim_device(d, a, b, o.ssim_range); });
  if (!on.empty()) r.metrics_device = on;
  if (!r.ssim) r.ssim = ssim(a, b, o.ssim_range);
  if (!o.verify || on.empty()) return;
  const Ssim reference = ssim(a, b, o.ssim_range);
  double worst = 0;
  for (std::size_t c = 0; c < reference.channels.size(); ++c) {
    const double d = std::fabs(r.ssim->channels[c] - reference.channels[c]);
    if (!(d <= worst)) worst = d;
  }
  const bool failed = !(worst <= kSsimVerifyTolerance);
  r.verify_failed |= failed;
  r.verify.push_back(fmt::format(
      "verify ssim on {}: {}: mean {:.6f} vs reference {:.6f}, largest channel difference "
      "{:.2e} (tolerance {:g})",
      on, failed ? "MISMATCH" : "ok", r.ssim->mean, reference.mean, worst, kSsimVerifyTolerance));
}

}  // namespace

PairResult compare_pair(const Pair& pair, const ComparisonOptions& o, Device* device) {
  PairResult r;
  try {
    const std::string path_a = pair.read_a.empty() ? pair.a : pair.read_a;
    const std::string path_b = pair.read_b.empty() ? pair.b : pair.read_b;
    if (pair.refused) throw *pair.refused;
    const InputRef ref_a = channels_to_compare(path_a, pair.file_a, pair.part, o);
    InputRef ref_b = parse_input_ref(path_b);
    ref_b.part = pair.part;
    ref_b.file = pair.file_b;
    ref_b.file = opened_file(ref_b);
    if (ref_b.channels.empty()) {
      // Every channel of a, unless a list chose some: then b must have the same set.
      if (o.ch.empty() && parse_input_ref(path_a).channels.empty())
        check_same_channels(pair, ref_a, channels_to_compare(path_b, ref_b.file, pair.part, o));
      ref_b.channels = ref_a.channels;  // b's channels in a's order
    }
    const LoadedImage a = read_image(ref_a);
    LoadedImage b;
    try {
      b = read_image(ref_b);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Usage) throw;  // a channel b lacks: not comparable
      throw Error(ErrorKind::NotComparable, std::string("not comparable: ") + e.what());
    }
    const Image ia = to_image(a.pixels), ib = to_image(b.pixels);
    if (ia.width() != ib.width() || ia.height() != ib.height() || ia.channels() != ib.channels())
      throw Error(
          ErrorKind::NotComparable,
          fmt::format("not comparable: {} is {}x{}x{}, {} is {}x{}x{}", pair.a, ia.width(),
                      ia.height(), ia.channels(), pair.b, ib.width(), ib.height(), ib.channels()));
    r.diff = diff_images(ia, ib, o.thresholds);
    r.channel_names = a.channel_names;
    // A multi-part file (an EXR with a part per layer) is compared by its first part only, as
    // idiff does without -a; said on every report, since the other parts go unchecked.
    if (!o.idiff_all && (a.subimages > 1 || b.subimages > 1)) {
      r.subimages = {a.subimages, b.subimages};
      spdlog::warn(
          "{} vs {}: only the first subimage compared (of {} and {}); halo does not "
          "compare the others yet",
          pair.a, pair.b, a.subimages, b.subimages);
    }
    Verdict verdict = o.idiff_rule ? r.diff.verdict : Verdict::pass;
    // The metrics' maps and rows count against --max-memory beside the two images.
    FlipOptions fo = o.flip;
    fo.hdr = o.flip_mode == "hdr" || (o.flip_mode == "auto" && a.pixels.type == PixelType::f32);
    // FLIP on a render whose every layer is compared takes copies of its colour channels.
    const std::vector<int> colour =
        o.wants("flip") ? flip_colour(r.channel_names, pair.a) : std::vector<int>{};
    const std::size_t colour_bytes = 2 * colour.size() * ia.plane_size() * sizeof(float);
    const std::size_t metric_bytes =
        (o.wants("flip") ? flip_bytes(ia.width(), ia.height(), fo) + colour_bytes : 0) +
        (o.wants("ssim") ? ssim_bytes(ia.width()) : 0);
    const auto metrics_hold =
        metric_bytes ? hold_memory(pair.b, metric_bytes, "computing the metrics") : nullptr;
    if (o.perceptual) r.perceptual_failures = idiff_perceptual_failures(ia, ib);
    if (o.wants("ssim")) {
      run_ssim(r, ia, ib, device, o);
      // NaN fails: a metric that cannot be computed proves nothing.
      if (o.fail_ssim && !(r.ssim->mean >= *o.fail_ssim)) {
        r.failed_metrics.push_back(
            fmt::format("SSIM {:.6g} below --fail-ssim {:g}", r.ssim->mean, *o.fail_ssim));
        verdict = Verdict::fail;
      }
    }
    if (o.wants("flip")) {
      if (colour.empty()) {
        run_flip(r, ia, ib, fo, device, o);
      } else {
        for (int c : colour) r.flip_channels.push_back(r.channel_names[c]);
        const bool alpha = colour.size() == 4;
        run_flip(r, channels_of(ia, colour, alpha), channels_of(ib, colour, alpha), fo, device, o);
      }
      if (o.fail_flip && !(r.flip->mean <= *o.fail_flip)) {
        r.failed_metrics.push_back(
            fmt::format("FLIP mean {:.6g} above --fail-flip {:g}", r.flip->mean, *o.fail_flip));
        verdict = Verdict::fail;
      }
      // FLIP weighs finite colours only: a NaN or an infinity where the other image holds a
      // number (an infinite sample error) is a difference its mean cannot show.
      if (o.fail_flip && r.diff.metrics.nonfinite > 0) {
        r.failed_metrics.push_back(fmt::format(
            "{} samples NaN or infinite where the other image has a number (FLIP weighs finite "
            "colours only)",
            r.diff.metrics.nonfinite));
        verdict = Verdict::fail;
      }
    }
    r.verdict = to_string(verdict);
    r.exit_code = verdict == Verdict::fail ? int(ErrorKind::Mismatch) : 0;
    if (o.idiff_exit) r.exit_code = verdict == Verdict::fail ? 2 : verdict == Verdict::warn ? 1 : 0;
    const bool write =
        o.diff_when == ComparisonOptions::DiffWhen::failure  ? verdict == Verdict::fail
        : o.diff_when == ComparisonOptions::DiffWhen::differ ? r.diff.metrics.max_error != 0
                                                             : true;
    if (r.flip && r.flip->hdr && !pair.exposure_map.empty())
      write_colour_map(pair.exposure_map, *r.flip, flip_exposure_map(*r.flip));
    if (write && !pair.diff_out.empty()) {
      write_difference(pair.diff_out, ia, ib, r.flip ? &*r.flip : nullptr, o);
      r.diff_written = true;
    }
  } catch (const Error& e) {
    r.verdict = "NOT_COMPARABLE";
    r.error = e.what();
    r.exit_code = e.exit_code();
    // idiff 2.4 reports images of different sizes or channels as a FAILURE (2), and a file it
    // cannot read as 4.
    if (o.idiff_exit)
      r.exit_code = e.kind() == ErrorKind::NotComparable ? pair.idiff_incomparable : 4;
  }
  return r;
}

Tally tally(const std::vector<PairResult>& results, bool idiff_exit) {
  Tally t;
  for (const auto& r : results) {
    t.failed += r.verdict == "FAILURE";
    t.warned += r.verdict == "WARNING";
    t.incomparable += r.verdict == "NOT_COMPARABLE";
    t.mismatch |= r.verify_failed;
  }
  if (results.size() == 1)
    t.exit_code = results.front().exit_code;
  else if (idiff_exit)  // 4 unreadable, then 2 failed, then 1 warned
    for (const auto& r : results) t.exit_code = std::max(t.exit_code, r.exit_code);
  else
    t.exit_code = t.incomparable ? int(ErrorKind::NotComparable) : t.failed ? 1 : 0;
  return t;
}

std::string metrics_device(const std::string& asked, const ComparisonOptions& o) {
  if (asked != "auto" || o.verify || !(o.wants("flip") || o.wants("ssim"))) return asked;
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  const auto all = list_devices();
  const auto faster = std::find_if(all.begin(), all.end(), [&](const DeviceInfo& d) {
    return device_costs(d).parallel > 4 * cores;
  });
  return faster != all.end() ? std::to_string(faster->index) : "ref";
}

constexpr double kPi = 3.14159265358979323846;

double flip_pixels_per_degree(const std::string& viewing) {
  const std::vector<std::string> parts = split_names(viewing);
  std::vector<double> v;
  for (const auto& part : parts) {
    std::size_t used = 0;
    double x = 0;
    try {
      x = std::stod(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != part.size() || !std::isfinite(x) || x <= 0) break;
    v.push_back(x);
  }
  const double ppd = v.size() == 3 && parts.size() == 3 ? v[0] * v[2] / v[1] * kPi / 180 : 0;
  if (!(ppd >= kLeastFlipPpd && ppd <= 1e4))
    throw Error(ErrorKind::Usage,
                "compare: --flip-viewing " + viewing +
                    ": give DISTANCE,WIDTH,PIXELS, three numbers > 0 (the distance to the "
                    "screen and its width in one unit, its width in pixels: 0.7,0.7,3840), "
                    "making 2 to 10000 pixels per degree");
  return ppd;
}

}  // namespace halo
