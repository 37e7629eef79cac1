// OpenImageIO-backed reading and writing, with PFM routed to io/pfm.cpp.
#include "io/image_io.hpp"
#include "core/text.hpp"

#include <OpenImageIO/imageio.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "io/pfm.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

// OpenImageIO's messages can span lines; errors are one line ("a; b").
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (std::size_t at; (at = text.find('\n')) != std::string::npos;) text.replace(at, 1, "; ");
  return text;
}

std::string extension(const std::string& path) {
  return lower(fs::path(path).extension().string());
}

bool is_pfm(const std::string& path) {
  return extension(path) == ".pfm";
}

SampleType stored_type(const OIIO::TypeDesc& format) {
  switch (format.basetype) {
    case OIIO::TypeDesc::UINT8:
      return SampleType::u8;
    case OIIO::TypeDesc::UINT16:
      return SampleType::u16;
    case OIIO::TypeDesc::HALF:
      return SampleType::half;
    default:
      return SampleType::f32;  // float, and wider types that float holds well enough
  }
}

OIIO::TypeDesc oiio_type(SampleType type) {
  switch (type) {
    case SampleType::u8:
      return OIIO::TypeDesc::UINT8;
    case SampleType::u16:
      return OIIO::TypeDesc::UINT16;
    case SampleType::half:
      return OIIO::TypeDesc::HALF;
    case SampleType::f32:
      return OIIO::TypeDesc::FLOAT;
  }
  return OIIO::TypeDesc::FLOAT;
}

OIIO::TypeDesc oiio_type(PixelType type) {
  switch (type) {
    case PixelType::u8:
      return OIIO::TypeDesc::UINT8;
    case PixelType::u16:
      return OIIO::TypeDesc::UINT16;
    case PixelType::f32:
      return OIIO::TypeDesc::FLOAT;
  }
  return OIIO::TypeDesc::FLOAT;
}

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
                                    " channels and no RGB among them; pick some as " + path +
                                    "[name,...] from " + join(names));
}

bool is_alpha_name(const std::string& name) {
  return name == "A" || name.ends_with(".A") || name == "alpha";
}

// OpenImageIO reports "file not found" and "not a format I know" the same way; tell them apart
// first so the exit code is right.
void check_readable(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ErrorKind::NoInput, path + ": no such file");
  if (fs::is_directory(path, ec)) throw Error(ErrorKind::NoInput, path + ": is a folder");
  std::ifstream probe(path, std::ios::binary);
  if (!probe) throw Error(ErrorKind::NoInput, path + ": cannot open for reading (permission?)");
  if (fs::file_size(path, ec) == 0) throw Error(ErrorKind::BadData, path + ": file is empty");
}

LoadedImage select_channels(PixelBuffer all, const std::vector<std::string>& names,
                            SampleType stored, const InputRef& input) {
  std::vector<int> picked;
  if (input.channels.empty()) {
    picked = default_channels(names, input.path);
  } else {
    for (const auto& want : input.channels) {
      const int i = find(names, want);
      if (i < 0)
        throw Error(ErrorKind::Usage,
                    input.path + ": no channel '" + want + "' (have " + join(names) + ")");
      picked.push_back(i);
    }
  }
  LoadedImage loaded;
  loaded.stored = stored;
  for (int i : picked) loaded.channel_names.push_back(names[i]);
  const bool alpha = picked.size() > 1 && is_alpha_name(loaded.channel_names.back());
  if (picked.size() == std::size_t(all.channels)) {
    bool identity = true;
    for (std::size_t i = 0; i < picked.size(); ++i) identity = identity && picked[i] == int(i);
    if (identity) {
      all.alpha = alpha;
      loaded.pixels = std::move(all);
      return loaded;
    }
  }
  PixelBuffer out(all.width, all.height, int(picked.size()), all.type, alpha,
                  all.bytes.get_allocator().resource);
  const std::size_t size = sample_size(all.type);
  const std::size_t pixels = std::size_t(all.width) * all.height;
  for (std::size_t p = 0; p < pixels; ++p)
    for (std::size_t c = 0; c < picked.size(); ++c)
      std::memcpy(&out.bytes[(p * picked.size() + c) * size],
                  &all.bytes[(p * all.channels + picked[c]) * size], size);
  loaded.pixels = std::move(out);
  return loaded;
}

std::vector<std::string> standard_names(int channels, bool alpha) {
  switch (channels) {
    case 1:
      return {"Y"};
    case 2:
      return alpha ? std::vector<std::string>{"Y", "A"} : std::vector<std::string>{"Y", "Z"};
    case 3:
      return {"R", "G", "B"};
    case 4:
      return {"R", "G", "B", alpha ? "A" : "W"};
    default: {
      std::vector<std::string> names;
      for (int i = 0; i < channels; ++i) names.push_back("channel" + std::to_string(i));
      return names;
    }
  }
}

}  // namespace

SampleType parse_sample_type(const std::string& name) {
  if (name == "u8") return SampleType::u8;
  if (name == "u16") return SampleType::u16;
  if (name == "half") return SampleType::half;
  if (name == "float") return SampleType::f32;
  throw Error(ErrorKind::Usage, "--type '" + name + "': expected u8, u16, half or float");
}

std::string to_string(SampleType type) {
  switch (type) {
    case SampleType::u8:
      return "u8";
    case SampleType::u16:
      return "u16";
    case SampleType::half:
      return "half";
    case SampleType::f32:
      return "float";
  }
  return "?";
}

PixelType pixel_type(SampleType type) {
  switch (type) {
    case SampleType::u8:
      return PixelType::u8;
    case SampleType::u16:
      return PixelType::u16;
    default:
      return PixelType::f32;
  }
}

InputRef parse_input_ref(const std::string& text) {
  InputRef ref{text, {}};
  // Only a trailing [..] that is not an existing file name is a channel list.
  if (text.size() > 2 && text.back() == ']' && !fs::exists(text)) {
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

LoadedImage read_image(const InputRef& input, std::pmr::memory_resource* memory) {
  const std::string& path = input.path;
  if (is_pfm(path)) {
    auto pixels = read_pfm(path);
    const auto names = standard_names(pixels.channels, false);
    LoadedImage loaded = select_channels(std::move(pixels), names, SampleType::f32, input);
    loaded.file_channels = names;
    return loaded;
  }
  check_readable(path);
  // Keep stored values: no premultiplication of PNG alpha on the way in.
  OIIO::ImageSpec config;
  config.attribute("oiio:UnassociatedAlpha", 1);
  auto in = OIIO::ImageInput::open(path, &config);
  if (!in) {
    const auto why = one_line(OIIO::geterror());
    throw Error(ErrorKind::BadData,
                path + ": cannot read: " + (why.empty() ? "unknown format" : why));
  }
  const OIIO::ImageSpec& spec = in->spec();
  const SampleType stored = stored_type(spec.format);
  if (spec.width <= 0 || spec.height <= 0 || spec.nchannels <= 0)
    throw Error(ErrorKind::BadData, path + ": image has no pixels");
  PixelBuffer all(spec.width, spec.height, spec.nchannels, pixel_type(stored), false, memory);
  if (!in->read_image(0, 0, 0, spec.nchannels, oiio_type(all.type), all.bytes.data())) {
    const auto why = one_line(in->geterror());
    throw Error(ErrorKind::BadData,
                path + ": cannot read pixels: " + (why.empty() ? "corrupt or truncated" : why));
  }
  std::vector<std::string> names = spec.channelnames;
  names.resize(spec.nchannels);
  LoadedImage loaded = select_channels(std::move(all), names, stored, input);
  loaded.file_channels = std::move(names);
  return loaded;
}

SampleType storable_type(const std::string& path, SampleType wanted) {
  const auto ext = extension(path);
  if (ext == ".png") return wanted == SampleType::u8 ? SampleType::u8 : SampleType::u16;
  if (ext == ".jpg" || ext == ".jpeg") return SampleType::u8;
  if (ext == ".pfm") return SampleType::f32;
  if (ext == ".exr") return wanted == SampleType::f32 ? SampleType::f32 : SampleType::half;
  return wanted;
}

void write_image(const std::string& path, const PixelBuffer& pixels, SampleType type) {
  AtomicOutput output(path);
  const std::string temp = output.temp_path().string();
  if (is_pfm(path)) {
    write_pfm(temp, pixels);
  } else {
    auto out = OIIO::ImageOutput::create(path);
    if (!out)
      throw Error(ErrorKind::Usage,
                  path + ": cannot write this format: " + one_line(OIIO::geterror()));
    OIIO::ImageSpec spec(pixels.width, pixels.height, pixels.channels, oiio_type(type));
    spec.channelnames = standard_names(pixels.channels, pixels.alpha);
    spec.alpha_channel = pixels.alpha ? pixels.channels - 1 : -1;
    spec.attribute("oiio:UnassociatedAlpha", 1);
    if (!out->supports("alpha") && pixels.alpha)
      throw Error(ErrorKind::Usage, path + ": this format cannot store alpha");
    if (!out->open(temp, spec))
      throw Error(ErrorKind::CantCreate, path + ": cannot create: " + one_line(out->geterror()));
    if (!out->write_image(oiio_type(pixels.type), pixels.bytes.data()) || !out->close())
      throw Error(ErrorKind::Io, path + ": write failed: " + one_line(out->geterror()));
  }
  output.commit();
}

}  // namespace halo
