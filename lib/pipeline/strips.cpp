// Strip sizing (pipeline/strips.hpp): how many output rows a strip holds on a device or the
// reference within the memory budget, and what it reserves of it.
#include "pipeline/strips.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"

namespace halo {

int choose_strip_rows(const Pipeline& pipeline, const StreamInput& input, PixelType out_type,
                      const StripLimits& limits) {
  return size_strips(pipeline, input, out_type, limits).rows;
}

StripSizing size_strips(const Pipeline& pipeline, const StreamInput& input, PixelType out_type,
                        const StripLimits& limits) {
  // Strips count output rows; a stage that shrinks the image reads more input rows for each.
  const Size out = pipeline.output_size({input.width, input.height});
  const std::size_t input_rows_each =
      std::size_t(std::max(1, ceil_div(input.height, std::max(1, out.height))));
  const std::size_t pitch = std::size_t(aligned_pitch(std::max(input.width, out.width)));
  const std::size_t channels = std::size_t(input.channels);
  const std::size_t raw_in = std::size_t(input.width) * channels * sample_size(input.type);
  const std::size_t raw_out = std::size_t(input.width) * channels * sample_size(out_type);
  std::size_t guide_planes = 0;
  for (const auto& g : input.guide_shapes) guide_planes += g.normal + g.depth + g.albedo + g.motion;
  // What the stages declare (StageMemory): the most strip buffers any holds at once, and the
  // largest share of the budget any keeps for its own working set (denoise, whose tiles also
  // want tall strips).
  StageMemory held{.strip_buffers = 0};
  bool tall = false;
  for (const auto& stage : pipeline.stages()) {
    const StageTraits traits = stage->traits();
    held.strip_buffers = std::max(held.strip_buffers, traits.memory.strip_buffers);
    held.budget_share = std::max(held.budget_share, traits.memory.budget_share);
    held.image_planes = std::max(held.image_planes, traits.memory.image_planes);
    tall = tall || traits.tall_strips;
  }
  // A window row on the device: the stages' strip buffers, the guides (with the flags), and
  // both staging buffers.
  const std::size_t float_row = pitch * sizeof(float) * channels;
  const std::size_t device_row = std::size_t(held.strip_buffers) * float_row +
                                 pitch * (sizeof(float) * guide_planes + 1) + raw_in + raw_out;
  // On the host: the strips queued on each side and being read, carried and written.
  const std::size_t queued = std::size_t(limits.in_flight) + 3;
  const std::size_t strip_row =
      raw_in + raw_out + std::size_t(input.width) * sizeof(float) * guide_planes;
  const bool whole = !pipeline.whole_image_reason(input.type).empty();  // one strip, none queued
  const std::size_t host_row =
      (whole ? 1 : queued) * strip_row + (limits.device_is_host ? device_row : 0);
  // What a stage holds of the whole image (a window of frames), then its share of the rest.
  const std::size_t image_bytes =
      std::size_t(held.image_planes) * pitch * std::size_t(input.height) * sizeof(float);
  if (image_bytes >= limits.host_bytes)
    throw Error(ErrorKind::BadData,
                fmt::format("the stages hold {} planes of this {}x{} image ({}), over the limit "
                            "of {}; --max-memory or HALO_MAX_MEMORY raise it",
                            held.image_planes, input.width, input.height, size_text(image_bytes),
                            size_text(limits.host_bytes)));
  const std::size_t kept =
      image_bytes + std::size_t(double(limits.host_bytes - image_bytes) *
                                std::clamp(held.budget_share, 0.0, 0.9));  // the stages'
  const std::size_t host_budget = limits.host_bytes - kept;
  const std::size_t host_window = host_budget / host_row;  // input rows the host holds
  std::size_t window = host_window;
  if (limits.device_bytes) window = std::min(window, limits.device_bytes / 2 / device_row);
  if (limits.max_allocation) window = std::min(window, limits.max_allocation / float_row);
  const int reach = pipeline.reach();
  const auto need = [&](std::size_t rows, const std::string& what) {
    if (rows <= host_window)  // the device is what is short
      return fmt::format(
          "{} of this {}x{} image does not fit the device's memory ({}, "
          "largest buffer {})",
          what, input.width, input.height, size_text(limits.device_bytes),
          size_text(limits.max_allocation));
    const std::string stages_keep =
        kept ? fmt::format(" ({} of it what the stages keep)", size_text(kept)) : "";
    return fmt::format(
        "{} of this {}x{} image needs {} of host memory{}, over the limit of {}; "
        "--max-memory or HALO_MAX_MEMORY raise it",
        what, input.width, input.height, size_text(rows * host_row + kept), stages_keep,
        size_text(limits.host_bytes));
  };
  if (whole) {
    if (window < std::size_t(input.height))
      throw Error(
          ErrorKind::BadData,
          need(input.height, "the whole image (" + pipeline.whole_image_reason(input.type) + ")"));
    return {out.height, kept + std::size_t(input.height) * host_row};
  }
  // The input rows a strip of `rows` output rows reads at most: its rows and the reach each
  // side; through a stage that resizes, what the stages' input_rows say over every strip (a
  // shrink reads several input rows an output row, a crop only its window's, a turn a band
  // of input rows as tall as the turned strip reaches: 2700 rows of an 8000-wide image at
  // 17.5 degrees, which the reach alone never counted).
  const auto reads = [&](std::size_t rows) {
    if (!pipeline.resizes())
      return std::min(rows + 2 * std::size_t(reach), std::size_t(input.height));
    const StripPlan plan(pipeline, {input.width, input.height}, int(rows));
    std::size_t most = 0;
    for (int k = 0; k < plan.strips(); ++k)
      most = std::max(most, std::size_t(plan.input(k).count()));
    return most;
  };
  if (reads(1) > window)
    throw Error(ErrorKind::BadData,
                need(reads(1), fmt::format("a strip of one row ({} rows read)", reads(1))));
  // At least twice the reach on the host's cores, four times on a GPU: the halo rows are then
  // read (and where the rows pass computes them again, filtered) at most once or half again
  // more than the strip's own. A CPU device carries the rows pass's shared rows to the next
  // strip (separable.cpp); on the reference, 4x the reach was as fast as 2x and took more
  // memory (5120x2880 RGB, 2 cores, 2026-11-27: gaussian sigma=4 0.45 s 61 MB -> 0.42 s 43 MB,
  // sigma=8 48 rows 0.60 s 62 MB, 96 rows 0.60 s 86 MB; an RGBA photo 0.71 s 81 MB -> 0.68 s
  // 54 MB).
  const bool gpu = limits.device_bytes > 0 && !limits.device_is_host;
  const std::size_t floor = (gpu ? 4 : 2) * std::size_t(reach);
  // A stage that shrinks reads input_rows_each rows an output row: its strips aim at four
  // targets of input rows instead of one target of output rows (a 5K photo's 512 thumbnail
  // read 250 rows a strip, 15 MB a lane, and peaked at 90 MB; vipsthumbnail 57).
  const std::size_t target_rows = std::min(limits.target_bytes / float_row,
                                           4 * limits.target_bytes / float_row / input_rows_each);
  const std::size_t most = tall ? window : std::max<std::size_t>({target_rows, floor, 1});
  std::size_t rows = std::min(most, std::size_t(out.height));
  if (reads(rows) > window) {  // the most rows whose strips fit the window
    std::size_t fits = 1, over = rows;
    while (over - fits > 1) {
      const std::size_t mid = fits + (over - fits) / 2;
      (reads(mid) <= window ? fits : over) = mid;
    }
    rows = fits;
  }
  return {int(rows), kept + reads(rows) * host_row};
}

int lanes_for(const Device* device, int workers) {
  if (device) return workers == 1 ? device->profile().lanes : 1;
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / workers);
}

int in_flight_for(const Device* device) {
  return device ? device->profile().in_flight : 2;
}

StripLimits strip_limits(const Device* device) {
  StripLimits limits;
  limits.host_bytes = memory_per_file();
  limits.in_flight = in_flight_for(device);
  if (device) {
    limits.device_bytes = device->info().global_memory;
    limits.max_allocation = device->info().max_allocation;
    const DeviceProfile profile = device->profile();
    limits.device_is_host = !profile.own_memory;
    if (profile.strip_bytes) limits.target_bytes = profile.strip_bytes;
  }
  return limits;
}

}  // namespace halo
