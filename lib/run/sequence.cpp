// Frames of a sequence by name (run/sequence.hpp).
#include "run/sequence.hpp"

#include <cctype>
#include <deque>
#include <filesystem>
#include <future>
#include <mutex>

#include <fmt/format.h>

#include "core/error.hpp"
#include "run/input_stream.hpp"

namespace halo {

namespace {

// Frames being decoded ahead of their read, shared by every file of the run (each file's
// FileSequence starts the next one's): a few at most, the oldest dropped.
class ReadAhead {
 public:
  static ReadAhead& instance() {
    static ReadAhead kept;
    return kept;
  }
  void start(const std::string& key, std::function<SequenceFrame()> decode) {
    std::lock_guard lock(mutex_);
    for (const auto& [k, f] : frames_)
      if (k == key) return;
    frames_.emplace_back(key, std::async(std::launch::async, std::move(decode)).share());
    if (frames_.size() > kMost) frames_.pop_front();
  }
  std::optional<std::shared_future<SequenceFrame>> take(const std::string& key) {
    std::lock_guard lock(mutex_);
    for (auto it = frames_.begin(); it != frames_.end(); ++it)
      if (it->first == key) {
        auto frame = std::move(it->second);
        frames_.erase(it);
        return frame;
      }
    return std::nullopt;
  }

 private:
  static constexpr std::size_t kMost = 4;
  std::mutex mutex_;
  std::deque<std::pair<std::string, std::shared_future<SequenceFrame>>> frames_;
};

}  // namespace

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

std::string FileSequence::key(const std::string& frame_name, const GuideSources& s) const {
  return frame_name + channels_ + "|" + s.normal + "|" + s.depth + "|" + s.albedo + "|" +
         s.motion + "|" + (s.unit_normals ? "1" : "0");
}

void FileSequence::read_ahead(int offset, const GuideSources& sources) const {
  if (!exists(offset)) return;
  const std::string frame_name = name(offset);
  ReadAhead::instance().start(key(frame_name, sources), [frame_name, sources,
                                                         channels = channels_] {
    return FileSequence(frame_name, channels).decode(frame_name, sources);
  });
}

SequenceFrame FileSequence::read(int offset, const GuideSources& sources) const {
  const std::string frame_name = name(offset);
  if (auto ahead = ReadAhead::instance().take(key(frame_name, sources))) return ahead->get();
  return decode(frame_name, sources);
}

SequenceFrame FileSequence::decode(const std::string& frame_name,
                                   const GuideSources& sources) const {
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
