// TIFF read and written through libtiff itself for the plain files most tools write, so that
// opening or writing one costs no OpenImageIO load (0.3-0.5 s and 120 MB of its libraries).
// "Plain": one image, in strips or tiles, samples interleaved, unsigned 8 or 16-bit or 32-bit
// float, grey (one channel) or RGB (three, or four with an alpha extra sample), no position, and no
// EXIF, GPS, XMP, IPTC or ICC block. Everything else is left to the module (open_tiff returns
// null), which presents the file as it always has. The native reader presents a plain file exactly
// as the module does (channel names, alpha, the header's text tags as OpenImageIO names them):
// tests/io/tiff_test.cpp compares the two on every kind of plain file.
#include <fcntl.h>
#include <tiffio.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstring>
#include <ctime>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "io/codec.hpp"
#include "io/metadata.hpp"

namespace halo {

namespace {

// libtiff's client procedures over a CheckedFile: reads through its descriptor at our own
// position, never by name; writes refused (a reader).
struct Handle {
  const CheckedFile* file;
  toff_t at = 0;
  std::string error;  // libtiff's first error message, for the exception
};

// A libtiff handle, closed however the function holding it ends.
struct TiffCloser {
  void operator()(TIFF* tiff) const { TIFFClose(tiff); }
};
using TiffPtr = std::unique_ptr<TIFF, TiffCloser>;

tmsize_t read_proc(thandle_t h, void* buffer, tmsize_t size) {
  auto* handle = static_cast<Handle*>(h);
  const long long got = handle->file->pread_at(buffer, std::size_t(size), handle->at);
  if (got > 0) handle->at += toff_t(got);
  return tmsize_t(got);
}
tmsize_t write_proc(thandle_t, void*, tmsize_t) {
  return -1;
}
toff_t seek_proc(thandle_t h, toff_t offset, int whence) {
  auto* handle = static_cast<Handle*>(h);
  const toff_t base = whence == SEEK_CUR   ? handle->at
                      : whence == SEEK_END ? toff_t(handle->file->size())
                                           : 0;
  handle->at = base + offset;
  return handle->at;
}
int close_proc(thandle_t) {
  return 0;
}
toff_t size_proc(thandle_t h) {
  return toff_t(static_cast<Handle*>(h)->file->size());
}
int map_proc(thandle_t, void**, toff_t*) {
  return 0;
}
void unmap_proc(thandle_t, void*, toff_t) {}

// libtiff's first error message kept (user: a std::string) for the exception; warnings dropped,
// as OpenImageIO drops them.
int on_error(TIFF*, void* user, const char* module, const char* format, va_list args) {
  auto* error = static_cast<std::string*>(user);
  if (error->empty()) {
    char text[512];
    std::vsnprintf(text, sizeof text, format, args);
    *error = module && *module ? std::string(module) + ": " + text : text;
  }
  return 1;
}
int on_warning(TIFF*, void*, const char*, const char*, va_list) {
  return 1;
}

// The header's tags OpenImageIO reads into attributes, by its names and in its order (the
// Orientation, an int, among the text).
struct TextTag {
  ttag_t tag;
  const char* name;
};
constexpr TextTag kTextTags[] = {
    {TIFFTAG_IMAGEDESCRIPTION, "ImageDescription"},
    {TIFFTAG_ORIENTATION, "Orientation"},
    {TIFFTAG_MAKE, "Make"},
    {TIFFTAG_MODEL, "Model"},
    {TIFFTAG_SOFTWARE, "Software"},
    {TIFFTAG_ARTIST, "Artist"},
    {TIFFTAG_COPYRIGHT, "Copyright"},
    {TIFFTAG_DATETIME, "DateTime"},
    {TIFFTAG_DOCUMENTNAME, "DocumentName"},
    {TIFFTAG_HOSTCOMPUTER, "HostComputer"},
};

// Tags whose presence leaves the file to the module: blocks it decodes into attributes, and
// layouts it reads that this reader does not.
constexpr ttag_t kModuleTags[] = {TIFFTAG_EXIFIFD,      TIFFTAG_GPSIFD,     TIFFTAG_XMLPACKET,
                                  TIFFTAG_RICHTIFFIPTC, TIFFTAG_ICCPROFILE, TIFFTAG_XPOSITION,
                                  TIFFTAG_YPOSITION,    TIFFTAG_SUBIFD,     TIFFTAG_PHOTOSHOP,
                                  TIFFTAG_COLORMAP,     TIFFTAG_JPEGTABLES};

// Rows are served from a band of full rows: a strip, or a row of tiles (tile_height rows).
class TiffReader : public ImageReader {
 public:
  TiffReader(std::shared_ptr<const CheckedFile> file, TiffPtr tiff, std::unique_ptr<Handle> handle,
             ImageHeader header, int band_rows, int samples)
      : file_(std::move(file)),
        tiff_(std::move(tiff)),
        handle_(std::move(handle)),
        band_rows_(band_rows),
        samples_(samples) {
    header_ = std::move(header);
  }

  void read_rows(int count, int first, int n, PixelType type, std::byte* out) override {
    const std::size_t row = std::size_t(header_.width) * samples_ * stored_size(header_.stored);
    const std::size_t out_row = std::size_t(header_.width) * n * sample_size(type);
    for (int r = 0; r < count; ++r, ++next_) {
      const int strip = next_ / band_rows_;
      if (strip != strip_) load(strip);
      const std::uint8_t* at = strip_bytes_.data() + std::size_t(next_ - strip * band_rows_) * row;
      std::byte* to = out + std::size_t(r) * out_row;
      const int w = header_.width;
      switch (header_.stored) {
        case SampleType::u8:
          pick_samples(at, w, samples_, first, n, type, to, 255.0f);
          break;
        case SampleType::u16:
          pick_samples(reinterpret_cast<const std::uint16_t*>(at), w, samples_, first, n, type, to,
                       65535.0f);
          break;
        default:
          pick_samples(reinterpret_cast<const float*>(at), w, samples_, first, n, type, to, 1.0f);
      }
    }
  }

 private:
  // Band `strip` of full rows: a strip, or a row of tiles.
  void load(int strip) {
    const int rows = std::min(band_rows_, header_.height - strip * band_rows_);
    const std::size_t sample = stored_size(header_.stored);
    const tmsize_t bytes = tmsize_t(rows) * tmsize_t(header_.width) * samples_ * tmsize_t(sample);
    strip_bytes_.resize(std::size_t(bytes));
    if (header_.tile_width > 0)
      load_tiles(strip, rows, sample);
    else if (TIFFReadEncodedStrip(tiff_.get(), uint32_t(strip), strip_bytes_.data(), bytes) !=
             bytes)
      fail("strip " + std::to_string(strip));
    strip_ = strip;
  }

  // The row of tiles `band`: each decoded whole, its rows inside the image copied out.
  void load_tiles(int band, int rows, std::size_t sample) {
    const int tw = header_.tile_width, th = header_.tile_height;
    const std::size_t pixel = std::size_t(samples_) * sample;
    const tmsize_t tile_bytes = tmsize_t(tw) * th * tmsize_t(pixel);
    tile_.resize(std::size_t(tile_bytes));
    const uint32_t y = uint32_t(band) * uint32_t(th);
    for (int x = 0; x < header_.width; x += tw) {
      const ttile_t tile = TIFFComputeTile(tiff_.get(), uint32_t(x), y, 0, 0);
      if (TIFFReadEncodedTile(tiff_.get(), tile, tile_.data(), tile_bytes) != tile_bytes)
        fail("tile " + std::to_string(tile));
      const std::size_t cols = std::size_t(std::min(tw, header_.width - x));
      for (int r = 0; r < rows; ++r)
        std::memcpy(strip_bytes_.data() + (std::size_t(r) * header_.width + x) * pixel,
                    tile_.data() + std::size_t(r) * tw * pixel, cols * pixel);
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorKind::BadData,
                file_->path() + ": cannot read pixels: " + what + ": " +
                    (handle_->error.empty() ? "short or damaged" : handle_->error));
  }

  std::shared_ptr<const CheckedFile> file_;
  TiffPtr tiff_;
  std::unique_ptr<Handle> handle_;
  int band_rows_, samples_;
  int strip_ = -1, next_ = 0;
  std::vector<std::uint8_t> strip_bytes_;
  std::vector<std::uint8_t> tile_;
};

template <typename T>
T field(TIFF* tiff, ttag_t tag, T fallback) {
  T value = fallback;
  return TIFFGetFieldDefaulted(tiff, tag, &value) == 1 ? value : fallback;
}

}  // namespace

std::unique_ptr<ImageReader> open_tiff(std::shared_ptr<const CheckedFile> file) {
  auto handle = std::make_unique<Handle>(Handle{file.get()});
  TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
  TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, &handle->error);
  TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, handle.get());
  // Strips are allocated by this reader; libtiff's own allocations (tag arrays) stay small.
  TIFFOpenOptionsSetMaxSingleMemAlloc(options, tmsize_t(64) << 20);
  TiffPtr owned(TIFFClientOpenExt(file->path().c_str(), "rm", handle.get(), read_proc, write_proc,
                                  seek_proc, close_proc, size_proc, map_proc, unmap_proc, options));
  TIFFOpenOptionsFree(options);
  if (!owned) return nullptr;  // the module reports what is wrong, as it always has
  TIFF* tiff = owned.get();
  // The file left to the module (the handle closed with `owned`).
  const auto leave = [] { return nullptr; };
  if (TIFFLastDirectory(tiff) == 0) return leave();                       // pages
  if (field<uint32_t>(tiff, TIFFTAG_IMAGEDEPTH, 1) != 1) return leave();  // volumes
  for (const ttag_t tag : kModuleTags) {
    std::uint64_t slots[4] = {};  // room for any tag's values (counts, pointers, offsets)
    if (TIFFGetField(tiff, tag, &slots[0], &slots[1], &slots[2], &slots[3])) return leave();
  }
  const uint16_t bits = field<uint16_t>(tiff, TIFFTAG_BITSPERSAMPLE, 1);
  const uint16_t format = field<uint16_t>(tiff, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
  const uint16_t samples = field<uint16_t>(tiff, TIFFTAG_SAMPLESPERPIXEL, 1);
  const uint16_t photometric = field<uint16_t>(tiff, TIFFTAG_PHOTOMETRIC, 0xffff);
  const uint16_t planar = field<uint16_t>(tiff, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  const uint16_t compression = field<uint16_t>(tiff, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
  uint16_t extra = 0;
  uint16_t* extra_kinds = nullptr;
  TIFFGetField(tiff, TIFFTAG_EXTRASAMPLES, &extra, &extra_kinds);
  ImageHeader h;
  if (format == SAMPLEFORMAT_UINT && bits == 8)
    h.stored = SampleType::u8;
  else if (format == SAMPLEFORMAT_UINT && bits == 16)
    h.stored = SampleType::u16;
  else if (format == SAMPLEFORMAT_IEEEFP && bits == 32)
    h.stored = SampleType::f32;
  else
    return leave();
  const bool alpha =
      extra == 1 && extra_kinds &&
      (extra_kinds[0] == EXTRASAMPLE_ASSOCALPHA || extra_kinds[0] == EXTRASAMPLE_UNASSALPHA);
  if (photometric == PHOTOMETRIC_MINISBLACK && samples == 1 && extra == 0)
    h.channels = {"Y"};
  else if (photometric == PHOTOMETRIC_RGB && samples == 3 && extra == 0)
    h.channels = {"R", "G", "B"};
  else if (photometric == PHOTOMETRIC_RGB && samples == 4 && alpha)
    h.channels = {"R", "G", "B", "A"};
  else
    return leave();
  if (planar != PLANARCONFIG_CONTIG || !TIFFIsCODECConfigured(compression) ||
      compression == COMPRESSION_OJPEG || compression == COMPRESSION_JPEG)
    return leave();
  const uint32_t width = field<uint32_t>(tiff, TIFFTAG_IMAGEWIDTH, 0);
  const uint32_t height = field<uint32_t>(tiff, TIFFTAG_IMAGELENGTH, 0);
  if (width == 0 || height == 0) return leave();
  const std::string& path = file->path();
  check_image_size(path, width, height);  // before an int holds them
  h.width = int(width), h.height = int(height);
  h.alpha = alpha;
  h.format = "tiff";
  h.placement = {0, 0, 0, 0, h.width, h.height};  // as OpenImageIO's spec gives it
  const double row = double(h.width) * samples;
  uint32_t band_rows = 0;
  if (TIFFIsTiled(tiff)) {
    // As OpenImageIO describes a tiled file (no decode_rows); a row of tiles at a time.
    const uint32_t tw = field<uint32_t>(tiff, TIFFTAG_TILEWIDTH, 0);
    const uint32_t th = field<uint32_t>(tiff, TIFFTAG_TILELENGTH, 0);
    if (tw == 0 || th == 0 || tw > (1u << 16) || th > (1u << 16)) return leave();
    h.tile_width = int(tw), h.tile_height = int(th);
    band_rows = std::min(th, uint32_t(h.height));
    const double tiles_wide = std::ceil(double(h.width) / tw);
    check_memory(path,
                 tiles_wide * tw * th * samples * stored_size(h.stored) +
                     row * th * (sizeof(float) + stored_size(h.stored)),
                 "a row of " + std::to_string(tw) + "x" + std::to_string(th) + " tiles");
  } else {
    band_rows = std::min<uint32_t>(field<uint32_t>(tiff, TIFFTAG_ROWSPERSTRIP, uint32_t(h.height)),
                                   uint32_t(h.height));
    if (band_rows == 0) return leave();
    h.decode_rows = int(band_rows);
    // A strip is decoded whole: its samples, and a row of them as float.
    check_memory(path, row * sizeof(float) + row * band_rows * stored_size(h.stored),
                 "decoding " + std::to_string(band_rows) + " rows");
  }
  for (const TextTag& t : kTextTags) {
    if (t.tag == TIFFTAG_ORIENTATION) {
      uint16_t orientation = 0;
      if (TIFFGetField(tiff, t.tag, &orientation) == 1)
        h.metadata.attributes.push_back(Attribute::typed(t.name, "int", int(orientation)));
      continue;
    }
    const char* text = nullptr;
    if (TIFFGetField(tiff, t.tag, &text) != 1 || !text || !*text) continue;
    // OpenImageIO reads settings of its own out of a description (oiio:ConstantColor=...).
    if (t.tag == TIFFTAG_IMAGEDESCRIPTION && std::strstr(text, "oiio:")) return leave();
    h.metadata.attributes.push_back({t.name, "string", text});
  }
  // The pixels' shape from the two resolutions, as OpenImageIO gives it (the resolutions
  // themselves describe the storage, which halo's outputs do not keep).
  float x_resolution = 0, y_resolution = 0;
  if (TIFFGetField(tiff, TIFFTAG_XRESOLUTION, &x_resolution) == 1 &&
      TIFFGetField(tiff, TIFFTAG_YRESOLUTION, &y_resolution) == 1 && x_resolution > 0 &&
      y_resolution > 0)
    h.metadata.attributes.push_back(
        Attribute::typed("PixelAspectRatio", "float", y_resolution / x_resolution));
  return std::make_unique<TiffReader>(std::move(file), std::move(owned), std::move(handle),
                                      std::move(h), int(band_rows), samples);
}

namespace {

// --compression for TIFF as libtiff's scheme, and zip's level (0: libtiff's default); false
// for what the module answers (its error for an unknown name, or a level it ignores).
bool tiff_compression(const std::string& given, uint16_t& scheme, int& level) {
  const std::string method = given.substr(0, given.find(':'));
  const std::string rest = given.size() > method.size() ? given.substr(method.size() + 1) : "";
  level = 0;
  if (method.empty() || method == "zip") {
    scheme = COMPRESSION_ADOBE_DEFLATE;  // OpenImageIO's default
    if (rest.empty()) return true;
    if (rest.size() != 1 || rest[0] < '1' || rest[0] > '9') return false;
    level = rest[0] - '0';
    return true;
  }
  if (!rest.empty()) return false;
  if (method == "none")
    scheme = COMPRESSION_NONE;
  else if (method == "lzw")
    scheme = COMPRESSION_LZW;
  else if (method == "packbits")
    scheme = COMPRESSION_PACKBITS;
  else
    return false;
  return true;
}

// Now as OpenImageIO's writer dates a file that says nothing of its own.
std::string date_time_now() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y:%m:%d %H:%M:%S", &local);
  return text;
}

// The rows of a strip as they come, each strip encoded when full.
class TiffWriter : public ImageWriter {
 public:
  TiffWriter(const std::string& target, TiffPtr tiff, std::unique_ptr<std::string> error,
             const OutputHeader& h, int rows_per_strip)
      : target_(target),
        tiff_(std::move(tiff)),
        error_(std::move(error)),
        height_(h.height),
        band_rows_(rows_per_strip),
        row_bytes_(std::size_t(h.width) * h.channels * stored_size(h.type)) {
    strip_.resize(row_bytes_ * std::size_t(rows_per_strip));
  }

  void write_rows(int count, const std::byte* rows) override {
    for (int r = 0; r < count; ++r) {
      std::memcpy(strip_.data() + std::size_t(rows_) * row_bytes_, rows + r * row_bytes_,
                  row_bytes_);
      if (++rows_ == band_rows_) flush();
    }
  }

  void finish() override {
    if (rows_ > 0) flush();
    if (written_ != height_)
      throw Error(ErrorKind::Internal, target_ + ": " + std::to_string(written_) + " of " +
                                           std::to_string(height_) + " rows written");
    const bool flushed = TIFFFlush(tiff_.get()) == 1;
    tiff_.reset();  // closes the descriptor
    if (!flushed) fail();
  }

 private:
  void flush() {
    const tmsize_t bytes = tmsize_t(rows_) * tmsize_t(row_bytes_);
    if (TIFFWriteEncodedStrip(tiff_.get(), uint32_t(written_ / band_rows_), strip_.data(), bytes) !=
        bytes)
      fail();
    written_ += rows_;
    rows_ = 0;
  }
  [[noreturn]] void fail() const {
    throw Error(ErrorKind::Io,
                target_ + ": write failed: " + (error_->empty() ? std::strerror(errno) : *error_));
  }

  std::string target_;
  TiffPtr tiff_;
  std::unique_ptr<std::string> error_;
  int height_, band_rows_;
  std::size_t row_bytes_;
  std::vector<std::byte> strip_;
  int rows_ = 0, written_ = 0;
};

// What OpenImageIO's writer stores of the header for a plain file: the text tags, the
// orientation (1 when none), the date (now when none) and the pixels' aspect as resolutions;
// other attributes (EXIF, IPTC and renderers' names) it leaves out of a TIFF, as here.
void set_tags(TIFF* tiff, const OutputHeader& h) {
  const Metadata& m = h.metadata;
  for (const TextTag& t : kTextTags) {
    if (t.tag == TIFFTAG_ORIENTATION) continue;
    const std::string* text = m.text(t.name);
    if (t.tag == TIFFTAG_DATETIME) {
      TIFFSetField(tiff, t.tag, text ? text->c_str() : date_time_now().c_str());
      continue;
    }
    if (text) TIFFSetField(tiff, t.tag, text->c_str());
  }
  TIFFSetField(tiff, TIFFTAG_ORIENTATION, uint16_t(orientation(m)));
  float aspect = 0;
  for (const Attribute& a : m.attributes)
    if (a.name == "PixelAspectRatio" && a.type == "float" && a.value.size() == sizeof(float))
      std::memcpy(&aspect, a.value.data(), sizeof(float));
  if (aspect > 0) {
    TIFFSetField(tiff, TIFFTAG_XRESOLUTION, 1.0f);
    TIFFSetField(tiff, TIFFTAG_YRESOLUTION, aspect);
  }
}

}  // namespace

std::unique_ptr<ImageWriter> create_tiff(const std::string& target, const std::string& file,
                                         const OutputHeader& h, const WriteOptions& options) {
  uint16_t scheme = COMPRESSION_ADOBE_DEFLATE;
  int level = 0;
  // What this writer does not store as OpenImageIO's would is written by the module.
  const bool plain_channels = (h.channels == 1 || h.channels == 3) ? !h.alpha
                              : h.channels == 4                    ? h.alpha
                                                                   : false;
  if (!plain_channels || h.type == SampleType::half || !h.channel_types.empty() ||
      h.placement.placed(h.width, h.height) || !h.metadata.icc.empty() ||
      !h.metadata.exif.empty() || !h.metadata.xmp.empty() || !h.metadata.iptc.empty() ||
      options.quality > 0 || !tiff_compression(options.compression, scheme, level))
    return nullptr;
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    throw Error(ErrorKind::CantCreate, target + ": cannot create: " + std::strerror(errno));
  auto error = std::make_unique<std::string>();
  TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
  TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, error.get());
  TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, nullptr);
  // BigTIFF past what 32-bit offsets reach (the stored samples and room for the tags).
  const double bytes = double(h.width) * h.height * h.channels * stored_size(h.type);
  TiffPtr owned(TIFFFdOpenExt(fd, target.c_str(), bytes > 4.0e9 ? "w8" : "w", opts));
  TIFFOpenOptionsFree(opts);
  if (!owned) {
    ::close(fd);
    throw Error(ErrorKind::CantCreate, target + ": cannot create: " + *error);
  }
  TIFF* tiff = owned.get();
  const uint16_t bits = uint16_t(8 * stored_size(h.type));
  const int rows_per_strip = std::min(32, h.height);  // as OpenImageIO's writer
  TIFFSetField(tiff, TIFFTAG_IMAGEWIDTH, uint32_t(h.width));
  TIFFSetField(tiff, TIFFTAG_IMAGELENGTH, uint32_t(h.height));
  TIFFSetField(tiff, TIFFTAG_BITSPERSAMPLE, bits);
  TIFFSetField(tiff, TIFFTAG_SAMPLEFORMAT,
               h.type == SampleType::f32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT);
  TIFFSetField(tiff, TIFFTAG_SAMPLESPERPIXEL, uint16_t(h.channels));
  TIFFSetField(tiff, TIFFTAG_PHOTOMETRIC,
               h.channels == 1 ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB);
  TIFFSetField(tiff, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(tiff, TIFFTAG_ROWSPERSTRIP, uint32_t(rows_per_strip));
  TIFFSetField(tiff, TIFFTAG_COMPRESSION, scheme);
  if (scheme == COMPRESSION_ADOBE_DEFLATE || scheme == COMPRESSION_LZW)
    TIFFSetField(tiff, TIFFTAG_PREDICTOR,
                 h.type == SampleType::f32 ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL);
  if (level > 0) TIFFSetField(tiff, TIFFTAG_ZIPQUALITY, level);
  if (h.alpha) {
    const uint16_t straight[] = {EXTRASAMPLE_UNASSALPHA};  // halo's 8/16-bit alpha
    TIFFSetField(tiff, TIFFTAG_EXTRASAMPLES, 1, straight);
  }
  set_tags(tiff, h);
  return std::make_unique<TiffWriter>(target, std::move(owned), std::move(error), h,
                                      rows_per_strip);
}

}  // namespace halo
