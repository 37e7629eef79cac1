// Measuring runs (see measure.hpp).
#include "run/measure.hpp"

#include "core/error.hpp"
#include "pipeline/pipeline.hpp"
#include "run/input_stream.hpp"

namespace halo {

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
