// Streaming input: readers for the image and its guide files, read in step, strip by strip.
#include "run/input_stream.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "io/guides.hpp"
#include "run/sequence.hpp"

namespace halo {

namespace {

constexpr const char* kGuideNames[] = {"normal", "depth", "albedo", "motion"};
// Motion has 2 channels (towards the previous frame) or 4 (and towards the next).
constexpr int kGuideChannels[] = {3, 1, 3, 4};
// The rows of a file's channels decoded at once where its image and guides are picked apart.
constexpr std::size_t kPickBytes = std::size_t(4) << 20;

bool channel_count_fits(int which, std::size_t count) {
  return int(count) == kGuideChannels[which] || (which == 3 && count == 2);
}

std::string describe(const char* what, const std::string& path,
                     const std::vector<std::string>& channels) {
  std::string list;
  for (const auto& c : channels) list += (list.empty() ? "" : ",") + c;
  return std::string(what) + " from " + path + "[" + list + "]";
}

// Sample i of a row of `type` as float: codes scaled to [0, 1], as to_image does.
float sample_at(const std::byte* row, std::size_t i, PixelType type) {
  switch (type) {
    case PixelType::u8:
      return float(reinterpret_cast<const std::uint8_t*>(row)[i]) * unit_scale(type);
    case PixelType::u16:
      return float(reinterpret_cast<const std::uint16_t*>(row)[i]) * unit_scale(type);
    case PixelType::f32:
      return reinterpret_cast<const float*>(row)[i];
  }
  return 0;
}

// Pixels of n interleaved channels (the first is channel `lo`): the picked ones, in their order,
// into `image` (as many channels as picked), samples of `size` bytes.
void pick_image(const std::byte* all, int n, const std::vector<int>& picked, int lo,
                std::size_t size, std::size_t pixels, std::byte* image) {
  const std::size_t m = picked.size();
  for (std::size_t p = 0; p < pixels; ++p)
    for (std::size_t c = 0; c < m; ++c)
      std::memcpy(image + (p * m + c) * size,
                  all + (p * std::size_t(n) + std::size_t(picked[c] - lo)) * size, size);
}

// Channel c of a row of n interleaved channels as float, into one guide row.
void pick_guide(const std::byte* row, int n, int c, PixelType type, int width, float* dst) {
  if (type == PixelType::f32) {  // a render's guides: no conversion, the switch out of the loop
    const float* src = reinterpret_cast<const float*>(row) + c;
    for (int x = 0; x < width; ++x) dst[x] = src[std::size_t(x) * std::size_t(n)];
    return;
  }
  for (int x = 0; x < width; ++x) dst[x] = sample_at(row, std::size_t(x) * n + c, type);
}

Image& guide_image(Guides& g, int which) {
  return which == 0 ? g.normal : which == 1 ? g.depth : which == 2 ? g.albedo : g.motion;
}

// A guide source for the input `input`: "[A,B]" names channels of the input itself; a run of
// '#' in a file name stands for the input's frame number (shot.0041.exr's guide
// mv.####.exr is mv.0041.exr), so each frame of a sequence reads its own guide file.
std::string guide_source(const std::string& source, const std::string& input) {
  if (source.starts_with('[')) return input + source;
  const std::size_t hash = source.find('#');
  if (hash == std::string::npos) return source;
  std::size_t run = hash;
  while (run < source.size() && source[run] == '#') ++run;
  const FrameDigits frame = frame_digits(input);
  if (frame.count == 0)
    throw Error(ErrorKind::Usage, "'" + source + "' names a file per frame, and " + input +
                                      " has no frame number in its name");
  std::string digits = input.substr(frame.at, frame.count);
  const std::size_t width = run - hash;
  while (digits.size() > width && digits.front() == '0') digits.erase(0, 1);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return source.substr(0, hash) + digits + source.substr(run);
}

}  // namespace

InputStream::InputStream(const InputRef& input, const std::vector<GuideSources>& guide_sets,
                         int shrink)
    : shrink_(guide_sets.empty() ? shrink : 1) {
  auto file = opened_file(input);
  files_.push_back({input.path, file, open_reader(file, shrink_)});
  const ImageHeader& h = header();
  choice_ = choose_channels(h, input);
  files_[0].lo = *std::min_element(choice_.picked.begin(), choice_.picked.end());
  files_[0].hi = *std::max_element(choice_.picked.begin(), choice_.picked.end()) + 1;
  input_.width = h.width;
  input_.height = h.height;
  input_.channels = int(choice_.picked.size());
  input_.type = pixel_type(h.stored);
  input_.alpha = choice_.alpha;
  for (std::size_t s = 0; s < guide_sets.size(); ++s) {
    add_guides(s, guide_sets[s]);
    unit_normals_.push_back(guide_sets[s].unit_normals);
  }
  // A frame of temporal denoising (its guides hold motion): decoded once, whole, for its own
  // run and the windows that read it as a neighbour.
  if (guide_sets.size() == 1 && shrink_ == 1 && guide_sets[0].motion != "off") {
    bool decoded = false;
    kept_ = shared_decode(input, guide_sets[0], &decoded);
    if (kept_ && (kept_->pixels.width != input_.width || kept_->pixels.height != input_.height ||
                  kept_->pixels.channels != input_.channels || kept_->pixels.type != input_.type))
      kept_.reset();
    if (kept_ && !decoded)
      spdlog::debug("{}: read as a neighbour frame already, not decoded again", input.path);
  }
  input_.read = [this](HostStrip& strip, Span rows) { read(strip, rows); };
  input_.rewind = [this] { rewind(); };
}

void InputStream::rewind() {
  for (std::size_t i = 0; i < files_.size(); ++i)
    files_[i].reader = open_reader(files_[i].file, i == 0 ? shrink_ : 1);
}

const ImageHeader& InputStream::header() const {
  return files_[0].reader->header();
}

std::size_t InputStream::file_for(const std::string& path) {
  for (std::size_t i = 0; i < files_.size(); ++i)
    if (files_[i].path == path) return i;
  auto file = CheckedFile::open(path);
  files_.push_back({path, file, open_reader(file)});
  File& f = files_.back();
  f.lo = int(f.reader->header().channels.size());
  return files_.size() - 1;
}

void InputStream::add_guides(std::size_t set, const GuideSources& sources) {
  const ImageHeader& h = header();
  const GuideChannels found = find_guide_channels(h.channels);
  const std::vector<std::string> motion = find_motion_channels(h.channels);
  const std::vector<std::string>* in_input[] = {&found.normal, &found.depth, &found.albedo,
                                                &motion};
  const std::string* wanted[] = {&sources.normal, &sources.depth, &sources.albedo, &sources.motion};
  StreamInput::GuideShape shape;
  int* planes[] = {&shape.normal, &shape.depth, &shape.albedo, &shape.motion};
  for (int which = 0; which < 4; ++which) {
    const std::string& source = *wanted[which];
    // A frame's motion is "zero" when asked for: no channels read, the stage knows.
    if (source == "off" || source == "zero" || (source == "auto" && in_input[which]->empty()))
      continue;
    const InputRef ref = source == "auto"
                             ? InputRef{h.channels.empty() ? "" : files_[0].path, *in_input[which]}
                             : parse_input_ref(guide_source(source, files_[0].path));
    GuidePart part{set, which, 0, {}};
    try {
      part.file = file_for(ref.path);
      const ImageHeader& g = files_[part.file].reader->header();
      const ChannelChoice chosen = choose_channels(g, ref);
      part.picked = chosen.picked;
      if (g.width != h.width || g.height != h.height)
        throw Error(ErrorKind::BadData,
                    std::string(kGuideNames[which]) + " guide is " + std::to_string(g.width) + "x" +
                        std::to_string(g.height) + ", the image is " + std::to_string(h.width) +
                        "x" + std::to_string(h.height));
      if (!channel_count_fits(which, part.picked.size()))
        throw Error(
            ErrorKind::BadData,
            std::string(kGuideNames[which]) + " guide has " + std::to_string(part.picked.size()) +
                " channels, needs " +
                (which == 3 ? std::string("2 or 4") : std::to_string(kGuideChannels[which])) +
                " (pick them with file.exr[A,B,C])");
      shape.described += (shape.described.empty() ? "" : "; ") +
                         describe(kGuideNames[which], ref.path, chosen.names);
    } catch (const Error& e) {
      throw Error(e.kind(), files_[0].path + ": " + kGuideNames[which] + " guide: " + e.what());
    }
    File& f = files_[part.file];
    f.lo = std::min(f.lo, *std::min_element(part.picked.begin(), part.picked.end()));
    f.hi = std::max(f.hi, *std::max_element(part.picked.begin(), part.picked.end()) + 1);
    *planes[which] = int(part.picked.size());
    parts_.push_back(std::move(part));
  }
  input_.guide_shapes.push_back(std::move(shape));
}

void InputStream::read(HostStrip& strip, Span rows) {
  if (kept_) {
    copy_rows(*kept_, strip, rows);
    return;
  }
  const std::size_t row0 = std::size_t(rows.first - strip.rows.first);
  const std::size_t image_row = input_.width * input_.channels * sample_size(input_.type);
  std::byte* image = strip.pixels.bytes.data() + row0 * image_row;
  std::vector<std::byte> all;
  for (std::size_t f = 0; f < files_.size(); ++f) {
    File& file = files_[f];
    const bool alone = f == 0 && std::none_of(parts_.begin(), parts_.end(),
                                              [](const GuidePart& p) { return p.file == 0; });
    if (alone) {  // the common case: the image's channels straight into the strip
      read_picked(*file.reader, choice_.picked, rows.count(), input_.type, image);
      continue;
    }
    // The channels the image and the guides need from this file, then each picked out, a few
    // rows at a time: a whole 1080p frame's at once was a 130 MB buffer faulted in page by
    // page on every file, and picked from memory instead of cache.
    const PixelType type = f == 0 ? input_.type : PixelType::f32;
    const int n = file.hi - file.lo;
    const std::size_t size = sample_size(type);
    const std::size_t all_row = std::size_t(input_.width) * std::size_t(n) * size;
    const int block = int(std::max<std::size_t>(
        1, std::min<std::size_t>(kPickBytes / std::max<std::size_t>(all_row, 1), rows.count())));
    all.resize(std::size_t(block) * all_row);
    for (int y0 = 0; y0 < rows.count(); y0 += block) {
      const int count = std::min(block, rows.count() - y0);
      file.reader->read_rows(count, file.lo, n, type, all.data());
      if (f == 0)
        pick_image(all.data(), n, choice_.picked, file.lo, size,
                   std::size_t(input_.width) * std::size_t(count),
                   image + std::size_t(y0) * image_row);
      for (const GuidePart& part : parts_) {
        if (part.file != f) continue;
        Image& guide = guide_image(strip.guides[part.set], part.which);
        for (std::size_t k = 0; k < part.picked.size(); ++k)
          for (int y = 0; y < count; ++y) {
            float* dst = guide.row(int(k), rows.first + y0 + y - guide.y0());
            const std::byte* src = all.data() + std::size_t(y) * all_row;
            pick_guide(src, n, part.picked[k] - file.lo, type, input_.width, dst);
          }
      }
    }
  }
  for (std::size_t s = 0; s < strip.guides.size(); ++s)
    if (unit_normals_[s] && strip.guides[s].has_normal())
      normalise_normals(strip.guides[s].normal, rows);
}

}  // namespace halo
