// Choosing a reader or writer by file name, and sample type names.
#include "io/codec.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include <OpenImageIO/oiioversion.h>
#include <fmt/format.h>
#include <jconfig.h>
#include <libdeflate.h>
#include <openexr.h>
#include <png.h>
#include <spdlog/spdlog.h>
#include <webp/decode.h>
#include <zlib.h>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/paths.hpp"
#include "core/settings.hpp"
#include "core/text.hpp"
#include "io/box_shrink.hpp"
#include "io/exr_header.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

// Where the OpenImageIO module may be: $HALO_OIIO_MODULE, beside the executable (the build
// tree, a packed copy), lib/halo beside its bin folder (an install), and where it was built
// for the build tree's own programs only (core/paths.hpp).
std::vector<std::string> module_candidates() {
  std::vector<std::string> paths;
  if (const std::string& given = settings().oiio_module; !given.empty()) paths.push_back(given);
  if (const fs::path bin = executable_dir(); !bin.empty()) {
    paths.push_back((bin / "libhalo_oiio.so").string());
    paths.push_back((bin.parent_path() / "lib/halo/libhalo_oiio.so").string());
  }
  if (in_build_tree()) paths.push_back(HALO_OIIO_MODULE_BUILT);
  return paths;
}

const OiioCodecs* load_oiio() {
  std::string tried;
  for (const auto& path : module_candidates()) {
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    // Lazy binding: OpenImageIO brings about 260 libraries, and resolving all their
    // functions up front took 0.60 s of a load where binding them at first call takes 0.40 s
    // (2-core EPYC, Debian 12, 2026-11-28); the module is built against the libraries it
    // finds, so no symbol is left to fail later.
    void* module = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!module) {
      tried += std::string("; ") + ::dlerror();
      continue;
    }
    using Entry = const OiioCodecs* (*)();
    if (auto entry = reinterpret_cast<Entry>(::dlsym(module, "halo_oiio_codecs"))) {
      spdlog::debug("OpenImageIO's module loaded: {}", path);  // -vv: why a run started slowly
      return entry();
    }
    tried += "; " + path + ": no halo_oiio_codecs";
  }
  throw Error(ErrorKind::Internal,
              "this format needs halo's OpenImageIO module libhalo_oiio.so, which was not found "
              "beside the halo executable or in ../lib/halo (set HALO_OIIO_MODULE)" +
                  tried);
}

// The formats halo recognises by their first bytes, and the extensions that name them.
struct KnownFormat {
  const char* name;  // as messages say it
  // halo's own reader (shrink: open_reader's, for the readers that can), or null for
  // OpenImageIO's reader of that name; a reader may return null for a file it leaves to that
  // reader (an animated WebP)
  std::unique_ptr<ImageReader> (*open)(std::shared_ptr<const CheckedFile> file, int shrink);
  const char* oiio;  // "": halo's reader only
  std::vector<std::string> extensions;
  bool (*matches)(const unsigned char* b, std::size_t n);
};

const std::vector<KnownFormat>& known_formats() {
  static const std::vector<KnownFormat> formats = {
      {"PNG",
       [](std::shared_ptr<const CheckedFile> file, int) { return open_png(std::move(file)); },
       "",
       {".png"},
       [](const unsigned char* b, std::size_t n) {
         return n >= 8 && std::memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0;
       }},
      {"JPEG",
       open_jpeg,
       "",
       {".jpg", ".jpeg"},
       [](const unsigned char* b, std::size_t n) {
         return n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff;
       }},
      {"PFM",
       [](std::shared_ptr<const CheckedFile> file, int) { return open_pfm(std::move(file)); },
       "",
       {".pfm"},
       [](const unsigned char* b, std::size_t n) {
         return n >= 3 && b[0] == 'P' && (b[1] == 'F' || b[1] == 'f') && std::isspace(b[2]);
       }},
      {"WebP", open_webp, "webp", {".webp"}, is_webp_content},
      {"OpenEXR",
       nullptr,
       "openexr",
       {".exr"},
       [](const unsigned char* b, std::size_t n) {
         return n >= 4 && b[0] == 0x76 && b[1] == 0x2f && b[2] == 0x31 && b[3] == 0x01;
       }},
      {"TIFF",
       [](std::shared_ptr<const CheckedFile> file, int) { return open_tiff(std::move(file)); },
       "tiff",
       {".tif", ".tiff"},
       [](const unsigned char* b, std::size_t n) {
         return n >= 4 && ((b[0] == 'I' && b[1] == 'I' && (b[2] == 42 || b[2] == 43) && !b[3]) ||
                           (b[0] == 'M' && b[1] == 'M' && !b[2] && (b[3] == 42 || b[3] == 43)));
       }},
  };
  return formats;
}

const KnownFormat* format_of_content(const CheckedFile& file) {
  unsigned char head[12] = {};
  const std::size_t n = file.read_at(head, sizeof head, 0);
  for (const auto& f : known_formats())
    if (f.matches(head, n)) return &f;
  return nullptr;
}

const KnownFormat* format_of_extension(const std::string& path) {
  const std::string ext = extension(path);
  for (const auto& f : known_formats())
    if (std::find(f.extensions.begin(), f.extensions.end(), ext) != f.extensions.end()) return &f;
  return nullptr;
}

}  // namespace

const OiioCodecs& oiio_codecs() {
  static const OiioCodecs* codecs = load_oiio();
  return *codecs;
}

SampleType parse_sample_type(const std::string& name) {
  if (name == "u8") return SampleType::u8;
  if (name == "u16") return SampleType::u16;
  if (name == "half") return SampleType::half;
  if (name == "float") return SampleType::f32;
  throw Error(ErrorKind::Usage, "--type '" + name + "': expected u8, u16, half or float");
}

std::size_t stored_size(SampleType type) {
  return type == SampleType::u8 ? 1 : type == SampleType::f32 ? 4 : 2;
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

void copy_u8_row(const std::uint8_t* samples, int width, int channels, int first, int n,
                 PixelType type, std::byte* out) {
  for (int x = 0; x < width; ++x)
    for (int c = 0; c < n; ++c) {
      const std::uint8_t v = samples[std::size_t(x) * channels + first + c];
      const std::size_t i = std::size_t(x) * n + c;
      if (type == PixelType::u8)
        reinterpret_cast<std::uint8_t*>(out)[i] = v;
      else if (type == PixelType::u16)
        reinterpret_cast<std::uint16_t*>(out)[i] = v;
      else
        reinterpret_cast<float*>(out)[i] = float(v) * unit_scale(PixelType::u8);
    }
}

bool is_writable_format(const std::string& extension) {
  const auto& formats = image_extensions();
  return std::find(formats.begin(), formats.end(), extension) != formats.end();
}

std::string writable_formats_text() {
  std::string text;
  for (const auto& ext : image_extensions()) text += (text.empty() ? "" : ", ") + ext.substr(1);
  return text;
}

SampleType storable_type(const std::string& path, SampleType wanted) {
  const auto ext = extension(path);
  if (ext == ".png") return wanted == SampleType::u8 ? SampleType::u8 : SampleType::u16;
  if (ext == ".jpg" || ext == ".jpeg") return SampleType::u8;
  if (ext == ".pfm") return SampleType::f32;
  if (ext == ".exr") return wanted == SampleType::f32 ? SampleType::f32 : SampleType::half;
  return wanted;
}

bool stores_alpha(const std::string& path) {
  const auto ext = extension(path);
  if (ext == ".png" || ext == ".tif" || ext == ".tiff" || ext == ".exr") return true;
  if (ext == ".jpg" || ext == ".jpeg" || ext == ".pfm") return false;
  return oiio_codecs().stores_alpha(path);
}

namespace {

// The format comes from the file's first bytes: a PNG named .jpg is read as PNG (with a
// warning), and a file whose extension names a known format but whose content is none of them
// is refused, instead of being handed to every reader OpenImageIO has. Other extensions (.hdr,
// .bmp, .dpx, ...) go to OpenImageIO's reader for that extension only.
std::unique_ptr<ImageReader> open_any_reader(std::shared_ptr<const CheckedFile> file, int shrink,
                                             ImagePart part) {
  const std::string& path = file->path();
  const KnownFormat* content = format_of_content(*file);
  const KnownFormat* named = format_of_extension(path);
  std::unique_ptr<ImageReader> reader;
  if (content) {
    if (named && named != content)
      spdlog::warn("{}: the content is {}, not {}; reading it as {}", path, content->name,
                   named->name, content->name);
    if (content->open && part.first())
      if (auto own = content->open(file, shrink)) return own;  // checks the size on its header
    if (!*content->oiio)
      throw Error(ErrorKind::BadData,
                  fmt::format("{}: {} holds one image, not subimage {} MIP level {}", path,
                              content->name, part.subimage, part.miplevel));
    if (std::string(content->oiio) == "openexr") {
      check_exr_header(file);
      reader = open_exr(file, part);
    }
    if (!reader) reader = oiio_codecs().open(file, content->oiio, part);
  } else if (named) {
    throw Error(ErrorKind::BadData, path + ": not " + named->name +
                                        " data (the file's first bytes "
                                        "are not " +
                                        named->name + "'s, nor another format's halo reads)");
  } else if (extension(path).empty()) {
    throw Error(ErrorKind::BadData, path +
                                        ": not an image halo recognises by its content (PNG, "
                                        "JPEG, PFM, WebP, OpenEXR, TIFF), and no extension names "
                                        "another format");
  } else {
    // Some of OpenImageIO's readers (PNM's among them) take the whole file into memory, so
    // the file's size must fit the budget: a 100x100 PGM padded to 1 GB took 1.15 GB.
    check_memory(
        path, std::size_t(file->size()),
        "the whole file (OpenImageIO's " + extension(path).substr(1) + " reader may hold it)");
    reader = oiio_codecs().open(file, "", part);
  }
  // OpenImageIO's readers have read only the header when open returns.
  const ImageHeader& h = reader->header();
  check_image_size(path, h.width, h.height);
  // One row in float, and the rows the decoder holds as stored (OpenImageIO: 256 rows or a
  // TIFF strip, even beyond the image's height; see io/oiio.cpp).
  const double samples = double(h.width) * double(h.channels.size());
  const double bytes = samples * sizeof(float) +
                       samples * std::max(1, h.decode_rows) * double(stored_size(h.stored));
  check_memory(path, bytes,
               h.decode_rows > 1 ? "decoding " + std::to_string(h.decode_rows) + " rows"
                                 : "a row of " + std::to_string(h.width) + " pixels");
  // A tiled file is read a row of tiles at a time: OpenImageIO holds whole tiles (wider than
  // the image when the tiles are) and the reader the rows of the image among them.
  if (h.tile_width > 0) {
    const double tiles_wide = std::ceil(double(h.width) / h.tile_width);
    const double bytes = 2 * tiles_wide * h.tile_width * h.tile_height * double(h.channels.size()) *
                         sizeof(float);  // in double: a fuzzed header's tiles overflow 64 bits
    check_memory(path, bytes,
                 "a row of " + std::to_string(h.tile_width) + "x" + std::to_string(h.tile_height) +
                     " tiles");
  }
  return reader;
}

// Once a file, however often it is opened (probed, read, its layers carried).
void warn_left_out(const std::string& path, const std::vector<std::string>& channels) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard lock(mutex);
  if (!warned.insert(path).second) return;
  spdlog::warn(
      "{}: channels {} are subsampled and left out (halo reads full-resolution "
      "channels)",
      path, fmt::join(channels, ", "));
}

}  // namespace

std::unique_ptr<ImageReader> open_reader(std::shared_ptr<const CheckedFile> file, int shrink,
                                         ImagePart part) {
  const std::string path = file->path();
  std::unique_ptr<ImageReader> reader = open_any_reader(std::move(file), shrink, part);
  cap_metadata(reader->header_.metadata, path);
  if (!reader->header().left_out.empty()) warn_left_out(path, reader->header().left_out);
  if (shrink > 1 && reader->header().shrink == 1)
    return shrink_by_blocks(std::move(reader), shrink);
  return reader;
}

std::unique_ptr<ImageReader> open_reader(const std::string& path, int shrink, ImagePart part) {
  return open_reader(CheckedFile::open(path), shrink, part);
}

std::vector<int> mip_levels(const std::shared_ptr<const CheckedFile>& file) {
  const std::string& path = file->path();
  const int subimages = open_reader(file)->header().subimages;  // the checks of any read
  const KnownFormat* content = format_of_content(*file);
  if (content && !*content->oiio) return {1};  // halo's own readers only: PNG, JPEG, PFM
  // Each level is a seek in OpenImageIO, and each part a header it has parsed already.
  constexpr int kMostParts = 1024;
  if (subimages > kMostParts)
    throw Error(ErrorKind::BadData, fmt::format("{}: {} subimages, more than the {} halo compares "
                                                "one by one",
                                                path, subimages, kMostParts));
  if (content && std::string(content->oiio) == "openexr")
    if (auto levels = exr_mip_levels(file); !levels.empty()) return levels;
  return oiio_codecs().mip_levels(file, content ? content->oiio : "");
}

namespace {

// EXIF kept as typed attributes (an EXR's Exif:... read by halo's own reader) as the EXIF
// block PNG and JPEG store, encoded by OpenImageIO's module, which only such outputs load.
// Only typed ones call for a block: text named Exif:... came as text (a PNG's tEXt chunk, as
// oiiotool writes Exif:ImageHistory) and goes out as text, without the module's 0.4 s.
OutputHeader with_exif_block(const OutputHeader& header) {
  OutputHeader h = header;
  std::vector<Attribute> exif;
  for (const auto& a : h.metadata.attributes)
    if (a.name.starts_with("Exif:") || a.name.starts_with("GPS:")) exif.push_back(a);
  const bool typed =
      std::any_of(exif.begin(), exif.end(), [](const Attribute& a) { return !a.is_text(); });
  if (h.metadata.exif.empty() && typed) h.metadata.exif = oiio_codecs().encode_exif(exif);
  return h;
}

}  // namespace

std::unique_ptr<ImageWriter> create_writer(const std::string& target, const std::string& file,
                                           const OutputHeader& given, const WriteOptions& options) {
  const OutputHeader header = is_png(target) || is_jpeg(target) ? with_exif_block(given) : given;
  if (is_pfm(target)) {
    if (!options.compression.empty() || options.quality)
      throw Error(ErrorKind::Usage, target + ": PFM has no compression or quality setting");
    return create_pfm(file, header);
  }
  if (is_png(target)) {
    if (options.quality) throw Error(ErrorKind::Usage, "--quality applies to JPEG, not PNG");
    return create_png(file, header, options);
  }
  if (!options.png_filter.empty())
    throw Error(ErrorKind::Usage, "--png-filter applies to PNG, not " + extension(target));
  if (is_jpeg(target)) return create_jpeg(target, file, header, options);
  if (extension(target) == ".exr")
    if (auto native = create_exr(target, file, header, options)) return native;
  if (extension(target) == ".tif" || extension(target) == ".tiff")
    if (auto native = create_tiff(target, file, header, options)) return native;
  return oiio_codecs().create(target, file, header, options);
}

std::string codec_versions() {
  const int webp = WebPGetDecoderVersion();
  int exr_major = 0, exr_minor = 0, exr_patch = 0;
  const char* exr_extra = nullptr;
  exr_get_library_version(&exr_major, &exr_minor, &exr_patch, &exr_extra);
  std::string text = fmt::format(
      "libpng {}, libdeflate {}, libjpeg-turbo {}.{}.{}, libwebp {}.{}.{}, zlib {}, OpenEXR "
      "{}.{}.{}",
      png_get_libpng_ver(nullptr), LIBDEFLATE_VERSION_STRING,
      LIBJPEG_TURBO_VERSION_NUMBER / 1000000, LIBJPEG_TURBO_VERSION_NUMBER / 1000 % 1000,
      LIBJPEG_TURBO_VERSION_NUMBER % 1000, webp >> 16, webp >> 8 & 0xff, webp & 0xff, zlibVersion(),
      exr_major, exr_minor, exr_patch);
  // The module named, not loaded: loading it is 0.4 s of OpenImageIO's 260 libraries.
  std::string module;
  for (const auto& path : module_candidates()) {
    std::error_code ec;
    if (fs::exists(path, ec)) {
      module = path;
      break;
    }
  }
  text += module.empty() ? fmt::format(
                               ", OpenImageIO {}: its module libhalo_oiio.so was not found "
                               "beside the halo executable or in ../lib/halo (TIFF beyond "
                               "plain files and the other formats need it)",
                               OIIO_VERSION_STRING)
                         : fmt::format(", OpenImageIO {} (module {})", OIIO_VERSION_STRING, module);
  return text;
}

}  // namespace halo
