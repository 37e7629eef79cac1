// Frames of a sequence by name (run/sequence.hpp).
#include "run/sequence.hpp"

#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "run/input_stream.hpp"

namespace halo {

FileSequence::FileSequence(std::string path, std::string channels)
    : path_(std::move(path)), channels_(std::move(channels)) {
  const std::size_t slash = path_.find_last_of('/');
  const std::size_t name_at = slash == std::string::npos ? 0 : slash + 1;
  std::size_t end = path_.size();
  while (end > name_at && !std::isdigit(static_cast<unsigned char>(path_[end - 1]))) --end;
  std::size_t begin = end;
  while (begin > name_at && std::isdigit(static_cast<unsigned char>(path_[begin - 1]))) --begin;
  // More than 15 digits is not a frame number (and would not fit a long).
  if (end == begin || end - begin > 15) return;
  digits_at_ = begin;
  digits_ = end - begin;
  number_ = std::stol(path_.substr(begin, digits_));
}

long FileSequence::number(int offset) const {
  return number_ < 0 ? -1 : number_ + offset;
}

std::string FileSequence::name(int offset) const {
  const long n = number(offset);
  if (number_ < 0 || n < 0) return "";
  return path_.substr(0, digits_at_) + fmt::format("{:0{}d}", n, digits_) +
         path_.substr(digits_at_ + digits_);
}

bool FileSequence::exists(int offset) const {
  const std::string n = name(offset);
  std::error_code ec;
  return !n.empty() && std::filesystem::is_regular_file(n, ec);
}

SequenceFrame FileSequence::read(int offset, const GuideSources& sources) const {
  const std::string frame_name = name(offset);
  try {
    InputStream stream(parse_input_ref(frame_name + channels_), {sources});
    const StreamInput& in = stream.input();
    HostStrip strip;
    strip.rows = {0, in.height};
    strip.pixels = PixelBuffer(in.width, in.height, in.channels, in.type, in.alpha);
    for (const auto& shape : in.guide_shapes) {
      Guides g;
      g.described = shape.described;
      const auto make = [&](int planes) {
        return planes ? Image(in.width, strip.rows, in.height, planes) : Image();
      };
      g.normal = make(shape.normal);
      g.depth = make(shape.depth);
      g.albedo = make(shape.albedo);
      g.motion = make(shape.motion);
      strip.guides.push_back(std::move(g));
    }
    in.read(strip, strip.rows);
    return {to_image(strip.pixels), std::move(strip.guides.at(0))};
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("neighbour frame {}: {}", frame_name, e.what()));
  }
}

}  // namespace halo
