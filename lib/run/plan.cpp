// How a file runs: strips, lanes, and measuring runs (see plan.hpp).
#include "run/plan.hpp"

#include <algorithm>
#include <thread>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "pipeline/pipeline.hpp"
#include "run/input_stream.hpp"

namespace halo {

int lanes_for(const Device* device, int workers) {
  if (device) return device->info().gpu && workers == 1 ? 2 : 1;
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / workers);
}

int in_flight_for(const Device* device) {
  return device && !device->info().gpu ? 1 : 2;
}

StripLimits strip_limits(const Device* device) {
  StripLimits limits;
  limits.host_bytes = memory_per_file();
  limits.in_flight = in_flight_for(device);
  if (device) {
    limits.device_bytes = device->info().global_memory;
    limits.max_allocation = device->info().max_allocation;
    limits.device_is_host = !device->info().gpu;
    if (device->info().gpu) limits.target_bytes = std::size_t(16) << 20;
  }
  return limits;
}

Histogram stream_histogram(const std::string& input, const std::string& spec, Device* device) {
  const Pipeline pipeline({{spec, ""}});
  InputStream in(parse_input_ref(input), pipeline.guide_sets());
  StreamOptions options{
      .in_flight = in_flight_for(device), .lanes = lanes_for(device, 1), .measure_only = true};
  options.strip_rows =
      choose_strip_rows(pipeline, in.input(), PixelType::f32, strip_limits(device));
  const StreamOutput nothing = [](Span, const PixelBuffer&) {};
  StreamResult result =
      device ? stream_device(*device, pipeline, in.input(), PixelType::f32, nothing, options)
             : stream_reference(pipeline, in.input(), PixelType::f32, nothing, options);
  const auto found = result.runs.at(0).side_output("histogram");
  if (!found || !found->histogram)
    throw Error(ErrorKind::Internal, spec + ": the stage kept no histogram");
  return *found->histogram;
}

}  // namespace halo
