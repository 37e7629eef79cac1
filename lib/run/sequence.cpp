// Frames of a sequence by name (run/sequence.hpp).
#include "run/sequence.hpp"

#include <cctype>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "core/concurrency.hpp"
#include "core/error.hpp"
#include "run/input_stream.hpp"

namespace halo {

namespace {

using Strip = std::shared_ptr<const HostStrip>;

// Frames decoded whole for temporal denoising, shared by every file of the run: each frame is
// decoded once, by whichever comes first (its own run, a window's neighbour read, or the read
// ahead on another thread), the others wait for it. The last `most` frames stay, the oldest let
// go (a frame read again after that is decoded again).
class DecodedFrames {
 public:
  static DecodedFrames& instance() {
    static DecodedFrames frames;
    return frames;
  }

  // The frame `key`, decoded by `decode` unless kept or being decoded (`decoded`: whether it
  // was decoded here).
  Strip get(const std::string& key, const std::function<Strip()>& decode, bool* decoded = nullptr) {
    return compute_once<std::string, Strip>(
        mutex_, frames_, key,
        [&] {
          Strip strip = decode();
          keep(key);
          return strip;
        },
        decoded);
  }
  // Starts get() on another thread; the caller waits for it before the run ends.
  std::shared_future<void> read_ahead(const std::string& key, std::function<Strip()> decode) {
    {
      std::lock_guard lock(mutex_);
      if (frames_.count(key)) return {};
    }
    return std::async(std::launch::async,
                      [this, key, decode = std::move(decode)] {
                        try {
                          get(key, decode);
                        } catch (...) {  // the read that needs it fails with the same error
                        }
                      })
        .share();
  }
  void keep_at_least(std::size_t most) {
    std::lock_guard lock(mutex_);
    most_ = std::max(most_, most);
  }

 private:
  // A decoded frame joins the kept ones; the oldest beyond `most_` are let go.
  void keep(const std::string& key) {
    std::lock_guard lock(mutex_);
    order_.push_back(key);
    while (order_.size() > most_) {
      frames_.erase(order_.front());
      order_.pop_front();
    }
  }

  std::mutex mutex_;
  std::map<std::string, std::shared_future<Strip>> frames_;  // kept or being decoded
  std::deque<std::string> order_;                            // those kept, oldest first
  // Until a window says how many it needs: a frame and its two neighbours (temporal=2 would
  // keep 5).
  static constexpr std::size_t kFewest = 3;
  std::size_t most_ = kFewest;
};

// What identifies a decode: the file, its channels, the guides read with it.
std::string decode_key(const InputRef& input, const GuideSources& s) {
  std::string key = input.path + "[";
  for (const auto& c : input.channels) key += c + ",";
  return key + "]|" + s.normal + "|" + s.depth + "|" + s.albedo + "|" + s.motion + "|" +
         (s.unit_normals ? "1" : "0");
}

// Set while this thread decodes a frame for the store: that decode's own InputStream reads
// the file (asking the store for the frame it is decoding would wait for itself).
thread_local bool t_decoding = false;

// The whole file as its InputStream reads it: interleaved samples of its stored type and the
// guides.
Strip decode_strip(const std::string& frame_name, const std::string& channels,
                   const GuideSources& sources) {
  struct Decoding {
    Decoding() { t_decoding = true; }
    ~Decoding() { t_decoding = false; }
  } decoding;
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

std::shared_ptr<const HostStrip> shared_decode(const InputRef& input, const GuideSources& sources,
                                               bool* decoded) {
  DecodedFrames& frames = DecodedFrames::instance();
  if (t_decoding) return nullptr;
  const std::string channels = [&] {
    if (input.channels.empty()) return std::string();
    std::string list = "[";
    for (const auto& c : input.channels) list += (list.size() > 1 ? "," : "") + c;
    return list + "]";
  }();
  return frames.get(
      decode_key(input, sources), [&] { return decode_strip(input.path, channels, sources); },
      decoded);
}

FrameDigits frame_digits(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t name_at = slash == std::string::npos ? 0 : slash + 1;
  std::size_t end = path.size();
  while (end > name_at && !std::isdigit(static_cast<unsigned char>(path[end - 1]))) --end;
  std::size_t begin = end;
  while (begin > name_at && std::isdigit(static_cast<unsigned char>(path[begin - 1]))) --begin;
  return {begin, end - begin};
}

FileSequence::FileSequence(std::string path, std::string channels)
    : path_(std::move(path)), channels_(std::move(channels)) {
  const FrameDigits digits = frame_digits(path_);
  // More than 15 digits is not a frame number (and would not fit a long).
  if (digits.count == 0 || digits.count > 15) return;
  digits_at_ = digits.at;
  digits_ = digits.count;
  number_ = std::stol(path_.substr(digits_at_, digits_));
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

std::shared_future<void> FileSequence::read_ahead(int offset, const GuideSources& sources) const {
  if (!exists(offset)) return {};
  const std::string frame_name = name(offset);
  return DecodedFrames::instance().read_ahead(
      decode_key(parse_input_ref(frame_name + channels_), sources),
      [frame_name, sources, channels = channels_] {
        return decode_strip(frame_name, channels, sources);
      });
}

SequenceFrame FileSequence::read(int offset, const GuideSources& sources, int keep) const {
  const std::string frame_name = name(offset);
  DecodedFrames& frames = DecodedFrames::instance();
  frames.keep_at_least(std::size_t(std::max(1, keep)));
  const Strip strip = frames.get(decode_key(parse_input_ref(frame_name + channels_), sources),
                                 [&] { return decode_strip(frame_name, channels_, sources); });
  // The guides as decoded (kept with the decode, not copied).
  return {to_image(strip->pixels), std::shared_ptr<const Guides>(strip, &strip->guides.at(0))};
}

}  // namespace halo
