// Measuring runs (see measure.hpp).
#include "run/measure.hpp"

#include "core/error.hpp"
#include "pipeline/strips.hpp"

namespace halo {

HistogramStream::HistogramStream(const std::string& input, const std::string& spec)
    : spec_(spec), pipeline_({{spec, ""}}), in_(parse_input_ref(input), pipeline_.guide_sets()) {}

double HistogramStream::samples() const {
  const ImageHeader& header = in_.header();
  return double(header.width) * header.height * double(header.channels.size());
}

Histogram HistogramStream::count(Device* device) {
  if (started_) in_.input().rewind();
  started_ = true;
  StreamOptions options{
      .in_flight = in_flight_for(device), .lanes = lanes_for(device, 1), .measure_only = true};
  options.strip_rows =
      choose_strip_rows(pipeline_, in_.input(), PixelType::f32, strip_limits(device));
  const StreamOutput nothing = [](Span, const PixelBuffer&) {};
  StreamResult result =
      device ? stream_device(*device, pipeline_, in_.input(), PixelType::f32, nothing, options)
             : stream_reference(pipeline_, in_.input(), PixelType::f32, nothing, options);
  const auto found = result.runs.at(0).side_output("histogram");
  if (!found || !found->histogram)
    throw Error(ErrorKind::Internal, spec_ + ": the stage kept no histogram");
  return *found->histogram;
}

}  // namespace halo
