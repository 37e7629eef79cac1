// The sequence measures of `halo compare` (compare/sequence.hpp).
#include "compare/sequence.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "io/guides.hpp"
#include "io/image_io.hpp"

namespace halo {

namespace {

// Channels [first, first + count) of `image`, as an image of their own.
Image planes_of(const Image& image, int first, int count) {
  Image out(image.width(), image.height(), count);
  for (int c = 0; c < count; ++c)
    for (int y = 0; y < image.height(); ++y)
      std::copy_n(image.row(first + c, y), image.width(), out.row(c, y));
  return out;
}

// A frame as the temporal measures see it: its colour in display space, and the motion, depth
// and normals the file holds: `motion` names its two channels (another renderer's, in
// Blender's convention), else Blender's ViewLayer.Vector.X/Y are found like the guides. The
// file is decoded once, for all of them.
TemporalFrame temporal_frame(const std::string& path, const std::vector<std::string>& motion) {
  InputRef ref = parse_input_ref(path);
  ref.file = opened_file(ref);
  const ImageHeader header = open_reader(ref.file)->header();
  const ChannelChoice colour = choose_channels(header, ref);
  const int colours = int(colour.names.size()) - (colour.alpha ? 1 : 0);
  std::vector<std::string> found = motion.empty() ? find_motion_channels(header.channels) : motion;
  found.resize(std::min<std::size_t>(found.size(), 2));  // towards the previous frame
  const std::vector<std::string> vectors = std::move(found);
  const GuideChannels guides = find_guide_channels(header.channels);
  ref.channels.assign(colour.names.begin(), colour.names.begin() + colours);
  for (const auto* layer : {&vectors, &guides.depth, &guides.normal})
    ref.channels.insert(ref.channels.end(), layer->begin(), layer->end());
  const LoadedImage loaded = read_image(ref);
  const Image all = to_image(loaded.pixels);
  TemporalFrame frame;
  frame.colour = display_colour(planes_of(all, 0, colours), loaded.pixels.type == PixelType::f32);
  int next = colours;
  for (auto [layer, image] :
       {std::pair{&vectors, &frame.motion}, std::pair{&guides.depth, &frame.depth},
        std::pair{&guides.normal, &frame.normal}}) {
    if (!layer->empty()) *image = planes_of(all, next, int(layer->size()));
    next += int(layer->size());
  }
  return frame;
}

}  // namespace

TemporalResult measure_sequence(const std::vector<Pair>& pairs,
                                const std::vector<PairResult>& results, const SequenceOptions& o) {
  TemporalResult t;
  std::optional<TemporalFrame> prev_a, prev_b;
  std::optional<long> prev_frame;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (!results[i].error.empty()) {  // missing or unreadable: no step into or out of it
      prev_a.reset(), prev_b.reset(), prev_frame.reset();
      continue;
    }
    TemporalFrame a = temporal_frame(pairs[i].a, o.motion),
                  b = temporal_frame(pairs[i].b, o.motion);
    t.motion_a = t.motion_a || a.motion.width() > 0;
    t.motion_b = t.motion_b || b.motion.width() > 0;
    if (prev_frame && pairs[i].frame && *pairs[i].frame == *prev_frame + 1) {
      t.frames.push_back(*pairs[i].frame);
      t.error.push_back(temporal_error(prev_a->colour, a.colour, prev_b->colour, b.colour));
      t.flicker_a.push_back(flicker(*prev_a, a));
      t.flicker_b.push_back(flicker(*prev_b, b));
    }
    prev_a = std::move(a), prev_b = std::move(b), prev_frame = pairs[i].frame;
  }
  // A gate that measured nothing holds nothing: failed, never passed.
  if ((o.fail_temporal || o.fail_flicker) && t.frames.empty())
    t.failed.push_back("no two consecutive frames compared: the temporal gates cannot hold");
  if (o.fail_temporal && t.mean(t.error) > *o.fail_temporal)
    t.failed.push_back(fmt::format("temporal error {:.6g} above --fail-temporal {:g}",
                                   t.mean(t.error), *o.fail_temporal));
  if (const double flicker = t.mean_flicker(t.flicker_a);
      o.fail_flicker && !t.frames.empty() && !(flicker <= *o.fail_flicker))
    t.failed.push_back(
        std::isnan(flicker)
            ? std::string("no pixel seen in both frames of any step: "
                          "--fail-flicker cannot hold")
            : fmt::format("flicker {:.6g} above --fail-flicker {:g}", flicker, *o.fail_flicker));
  return t;
}

}  // namespace halo
