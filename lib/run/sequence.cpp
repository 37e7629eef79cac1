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

using Strip = std::shared_ptr<const HostStrip>;

// Frames decoded for temporal denoising, shared by every file of the run: those being decoded
// ahead of their read (each file's FileSequence starts the next one's), and those read as a
// neighbour and kept for the frame's own run, which then takes its rows from memory instead of
// decoding the file again. A few of each; the oldest let go (its run decodes the file).
class DecodedFrames {
 public:
  static DecodedFrames& instance() {
    static DecodedFrames frames;
    return frames;
  }
  void read_ahead(const std::string& key, std::function<Strip()> decode) {
    std::lock_guard lock(mutex_);
    for (const auto& [k, f] : ahead_)
      if (k == key) return;
    ahead_.emplace_back(key, std::async(std::launch::async, std::move(decode)).share());
    if (ahead_.size() > kAhead) ahead_.pop_front();
  }
  std::optional<std::shared_future<Strip>> take_ahead(const std::string& key) {
    std::lock_guard lock(mutex_);
    return take(ahead_, key);
  }
  void keep(const std::string& key, Strip strip, std::size_t most) {
    std::lock_guard lock(mutex_);
    if (most == 0) return;
    kept_.emplace_back(key, std::move(strip));
    while (kept_.size() > most) kept_.pop_front();
  }
  Strip take_kept(const std::string& key) {
    std::lock_guard lock(mutex_);
    return take(kept_, key).value_or(nullptr);
  }

 private:
  template <class T>
  static std::optional<T> take(std::deque<std::pair<std::string, T>>& from, const std::string& key) {
    for (auto it = from.begin(); it != from.end(); ++it)
      if (it->first == key) {
        T found = std::move(it->second);
        from.erase(it);
        return found;
      }
    return std::nullopt;
  }

  static constexpr std::size_t kAhead = 4;
  std::mutex mutex_;
  std::deque<std::pair<std::string, std::shared_future<Strip>>> ahead_;
  std::deque<std::pair<std::string, Strip>> kept_;
};

// What identifies a decode: the file, its channels, the guides read with it.
std::string decode_key(const InputRef& input, const GuideSources& s) {
  std::string key = input.path + "[";
  for (const auto& c : input.channels) key += c + ",";
  return key + "]|" + s.normal + "|" + s.depth + "|" + s.albedo + "|" + s.motion + "|" +
         (s.unit_normals ? "1" : "0");
}

// The whole file as its InputStream reads it: interleaved samples of its stored type and the
// guides.
Strip decode_strip(const std::string& frame_name, const std::string& channels,
                   const GuideSources& sources) {
  try {
    InputStream stream(parse_input_ref(frame_name + channels), {sources});
    const StreamInput& in = stream.input();
    auto strip = std::make_shared<HostStrip>();
    strip->rows = {0, in.height};
    strip->pixels = PixelBuffer(in.width, in.height, in.channels, in.type, in.alpha);
    for (const auto& shape : in.guide_shapes) {
      Guides g;
      g.described = shape.described;
      const auto make = [&](int planes) {
        return planes ? Image(in.width, strip->rows, in.height, planes) : Image();
      };
      g.normal = make(shape.normal);
      g.depth = make(shape.depth);
      g.albedo = make(shape.albedo);
      g.motion = make(shape.motion);
      strip->guides.push_back(std::move(g));
    }
    in.read(*strip, strip->rows);
    return strip;
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("neighbour frame {}: {}", frame_name, e.what()));
  }
}

}  // namespace

std::shared_ptr<const HostStrip> take_decoded(const InputRef& input,
                                              const GuideSources& sources) {
  return DecodedFrames::instance().take_kept(decode_key(input, sources));
}

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

void FileSequence::read_ahead(int offset, const GuideSources& sources) const {
  if (!exists(offset)) return;
  const std::string frame_name = name(offset);
  DecodedFrames::instance().read_ahead(
      decode_key(parse_input_ref(frame_name + channels_), sources),
      [frame_name, sources, channels = channels_] {
        return decode_strip(frame_name, channels, sources);
      });
}

SequenceFrame FileSequence::read(int offset, const GuideSources& sources, int keep) const {
  const std::string frame_name = name(offset);
  const std::string key = decode_key(parse_input_ref(frame_name + channels_), sources);
  auto ahead = DecodedFrames::instance().take_ahead(key);
  const Strip strip = ahead ? ahead->get() : decode_strip(frame_name, channels_, sources);
  // A later frame's run takes its rows from here instead of decoding the file again.
  if (offset > 0) DecodedFrames::instance().keep(key, strip, std::size_t(std::max(0, keep)));
  return {to_image(strip->pixels), strip->guides.at(0)};
}

}  // namespace halo
