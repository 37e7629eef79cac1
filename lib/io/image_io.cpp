// Whole-image reading and writing on top of the row readers and writers, and channel choice.
#include "io/image_io.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

int find(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : int(it - names.begin());
}

// Default channel choice: plain R,G,B(,A); else the first layer with .R/.G/.B(.A); else all
// channels when there are at most four.
std::vector<int> default_channels(const std::vector<std::string>& names, const std::string& path) {
  const auto rgb_with = [&](const std::string& prefix) -> std::vector<int> {
    std::vector<int> picked;
    for (const char* c : {"R", "G", "B"}) picked.push_back(find(names, prefix + c));
    if (std::count(picked.begin(), picked.end(), -1)) return {};
    if (const int a = find(names, prefix + "A"); a >= 0) picked.push_back(a);
    return picked;
  };
  if (auto picked = rgb_with(""); !picked.empty()) return picked;
  for (const auto& name : names)
    if (name.size() > 2 && name.ends_with(".R"))
      if (auto picked = rgb_with(name.substr(0, name.size() - 1)); !picked.empty()) return picked;
  if (names.size() <= 4) {
    std::vector<int> all(names.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = int(i);
    return all;
  }
  throw Error(ErrorKind::Usage, path + ": " + std::to_string(names.size()) +
                                    " channels and no RGB among them; pick some as '" + path +
                                    "[name,...]' from " + join(names));
}

bool is_alpha_name(const std::string& name) {
  return name == "A" || name.ends_with(".A") || name == "alpha";
}

// Writers name the file they write, the temporary; the user knows the output by its own name.
template <typename Work>
void naming_target(const AtomicOutput& output, const std::string& target, Work work) {
  try {
    work();
  } catch (const Error& e) {
    std::string message = e.what();
    const std::string temp = output.temp_path().string();
    if (temp != target)
      for (auto at = message.find(temp); at != std::string::npos; at = message.find(temp, at))
        message.replace(at, temp.size(), target), at += target.size();
    throw Error(e.kind(), message);
  }
}

}  // namespace

InputRef parse_input_ref(const std::string& text) {
  InputRef ref{text, {}};
  // Only a trailing [..] that is not an existing file name is a channel list.
  std::error_code ec;  // fuzz_names: a name over 255 bytes made fs::exists throw
  if (text.size() > 2 && text.back() == ']' && !fs::exists(text, ec)) {
    const auto open = text.rfind('[');
    if (open != std::string::npos && open > 0) {
      ref.path = text.substr(0, open);
      const std::string list = text.substr(open + 1, text.size() - open - 2);
      std::size_t start = 0;
      for (std::size_t i = 0; i <= list.size(); ++i)
        if (i == list.size() || list[i] == ',') {
          if (i > start) ref.channels.push_back(list.substr(start, i - start));
          start = i + 1;
        }
      if (ref.channels.empty()) throw Error(ErrorKind::Usage, text + ": empty channel list");
    }
  }
  return ref;
}

ChannelChoice choose_channels(const ImageHeader& header, const InputRef& input) {
  ChannelChoice choice;
  if (input.channels.empty()) {
    choice.picked = default_channels(header.channels, input.path);
  } else {
    for (const auto& want : input.channels) {
      const int i = find(header.channels, want);
      if (i < 0)
        throw Error(ErrorKind::Usage, input.path + ": no channel '" + want + "' (have " +
                                          join(header.channels) + ")");
      choice.picked.push_back(i);
    }
  }
  for (int i : choice.picked) choice.names.push_back(header.channels[i]);
  choice.alpha = choice.picked.size() > 1 && is_alpha_name(choice.names.back());
  return choice;
}

void read_picked(ImageReader& reader, const std::vector<int>& picked, int count, PixelType type,
                 std::byte* out) {
  const int lo = *std::min_element(picked.begin(), picked.end());
  const int hi = *std::max_element(picked.begin(), picked.end()) + 1;
  bool in_order = hi - lo == int(picked.size());
  for (std::size_t i = 0; i < picked.size(); ++i) in_order = in_order && picked[i] == lo + int(i);
  if (in_order) return reader.read_rows(count, lo, hi - lo, type, out);
  // Other orders and gaps: read the channels that cover them, then pick.
  const std::size_t size = sample_size(type);
  const std::size_t pixels = std::size_t(reader.header().width) * count;
  std::vector<std::byte> all(pixels * (hi - lo) * size);
  reader.read_rows(count, lo, hi - lo, type, all.data());
  for (std::size_t p = 0; p < pixels; ++p)
    for (std::size_t c = 0; c < picked.size(); ++c)
      std::memcpy(out + (p * picked.size() + c) * size,
                  all.data() + (p * (hi - lo) + (picked[c] - lo)) * size, size);
}

std::shared_ptr<const CheckedFile> opened_file(const InputRef& input) {
  return input.file ? input.file : CheckedFile::open(input.path);
}

LoadedImage read_image(const InputRef& input, std::pmr::memory_resource* memory) {
  auto reader = open_reader(opened_file(input), 1, input.part);
  const ImageHeader& h = reader->header();
  const ChannelChoice choice = choose_channels(h, input);
  LoadedImage loaded;
  loaded.stored = h.stored;
  loaded.channel_names = choice.names;
  loaded.file_channels = h.channels;
  loaded.subimages = h.subimages;
  // As stored, and as floats: what the commands that hold whole images (hist, compare) make.
  loaded.hold = hold_memory(input.path,
                            std::size_t(h.width) * h.height * choice.picked.size() *
                                (sample_size(pixel_type(h.stored)) + sizeof(float)),
                            "the whole image");
  loaded.pixels = PixelBuffer(h.width, h.height, int(choice.picked.size()), pixel_type(h.stored),
                              choice.alpha, memory);
  read_picked(*reader, choice.picked, h.height, loaded.pixels.type, loaded.pixels.bytes.data());
  return loaded;
}

void write_image(const std::string& path, const PixelBuffer& pixels, SampleType type,
                 const WriteOptions& options) {
  if (pixel_type(type) != pixels.type)  // quantised or widened as halo run's output would be
    return write_image(path, to_pixels(to_image(pixels), pixel_type(type)), type, options);
  AtomicOutput output(path);
  naming_target(output, path, [&] {
    auto writer =
        create_writer(path, output.temp_path().string(),
                      {pixels.width, pixels.height, pixels.channels, pixels.alpha, type}, options);
    writer->write_rows(pixels.height, pixels.bytes.data());
    writer->finish();
  });
  output.commit();
}

OutputImage::OutputImage(std::string path, int width, int height, SampleType type,
                         WriteOptions options, Metadata metadata)
    : path_(std::move(path)),
      width_(width),
      height_(height),
      type_(type),
      options_(std::move(options)),
      metadata_(std::move(metadata)),
      file_(std::make_unique<AtomicOutput>(
          path_, options_.no_clobber ? Replace::never : Replace::existing)) {}

OutputImage::~OutputImage() = default;

void OutputImage::place(const Placement& placement) {
  if (!placement.placed(width_, height_)) return;
  const std::string ext = extension(path_);
  if (ext == ".exr" || ext == ".tif" || ext == ".tiff") {
    placement_ = placement;
    spdlog::info("{}: {}{}", path_, placement.text(width_, height_),
                 ext == ".exr" ? "" : " (TIFF keeps the position, not the frame)");
  } else {
    spdlog::warn(
        "{}: {} has no data window: the input's {} become a {}x{} image at (0, 0) "
        "(write EXR to keep the placement)",
        path_, ext.empty() ? "this format" : ext.substr(1), placement.text(width_, height_), width_,
        height_);
  }
}

void OutputImage::write(Span rows, const PixelBuffer& pixels) {
  naming_target(*file_, path_, [&] {
    if (!writer_) {
      // A grey image of an RGB profile's encoding (R = G = B: emboss, gray=1, icc on grey) is
      // tagged with that profile's grey twin, so it keeps saying how its values encode light.
      const int colours = pixels.channels - (pixels.alpha ? 1 : 0);
      if (!metadata_.icc.empty() && !icc_fits(metadata_.icc, pixels.channels) && colours == 1)
        if (std::string grey = grey_icc(metadata_.icc); !grey.empty()) {
          spdlog::info("{}: a grey image: tagged with the grey form of its RGB ICC profile", path_);
          metadata_.icc = std::move(grey);
        }
      if (!metadata_.icc.empty() && !icc_fits(metadata_.icc, pixels.channels)) {
        spdlog::info("{}: the input's ICC profile does not describe {} channel{}; left out", path_,
                     pixels.channels, pixels.channels == 1 ? "" : "s");
        metadata_.icc.clear();
      }
      writer_ = create_writer(path_, file_->temp_path().string(),
                              {width_, height_, pixels.channels, pixels.alpha, type_, metadata_,
                               channel_names_, placement_, channel_types_},
                              options_);
    }
    writer_->write_rows(rows.count(), pixels.bytes.data());
  });
}

void OutputImage::commit() {
  if (!writer_) throw Error(ErrorKind::Internal, path_ + ": no rows were written");
  naming_target(*file_, path_, [&] {
    writer_->finish();
    writer_.reset();
  });
  file_->commit();
}

}  // namespace halo
