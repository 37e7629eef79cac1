// EXR, TIFF, JPEG and the other formats through OpenImageIO, row by row: read_scanlines and
// write_scanlines, so its decoders and encoders hold a strip, not the image (tiled files are
// read a row of tiles at a time by OpenImageIO itself). Built as the module libhalo_oiio.so,
// loaded when a file needs it (io/codec.cpp); it uses nothing of halo's but headers, so it
// needs nothing from the program that loads it.
#include <ImfChannelList.h>
#include <ImfChromaticitiesAttribute.h>
#include <ImfDoubleAttribute.h>
#include <ImfFloatAttribute.h>
#include <ImfFrameBuffer.h>
#include <ImfInputFile.h>
#include <ImfIntAttribute.h>
#include <ImfMatrixAttribute.h>
#include <ImfRgbaFile.h>
#include <ImfStringAttribute.h>
#include <ImfVecAttribute.h>
#include <OpenImageIO/filesystem.h>
#include <OpenImageIO/imagebuf.h>
#include <OpenImageIO/imagebufalgo.h>
#include <OpenImageIO/imageio.h>
#include <OpenImageIO/tiffutils.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string_view>

#include "core/error.hpp"
#include "core/text.hpp"
#include "io/codec.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

// More MIP levels than a 2^32-pixel side has: the count stops there whatever a file declares.
constexpr int kMostMipLevels = 33;

// OpenImageIO's messages can span lines; errors are one line ("a; b").
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (std::size_t at; (at = text.find('\n')) != std::string::npos;) text.replace(at, 1, "; ");
  return text;
}

// OpenImageIO's readers read the file through the descriptor halo checked, never by its name
// (io/codec.cpp), each proxy from its own position.
class DescriptorProxy : public OIIO::Filesystem::IOProxy {
 public:
  explicit DescriptorProxy(std::shared_ptr<const CheckedFile> file)
      : IOProxy(file->path(), Read), file_(std::move(file)) {}
  const char* proxytype() const override { return "halo"; }
  std::size_t read(void* out, std::size_t n) override {
    const std::size_t got = pread(out, n, m_pos);
    m_pos += std::int64_t(got);
    return got;
  }
  std::size_t pread(void* out, std::size_t n, std::int64_t offset) override {
    const long long got = offset < 0 ? -1 : file_->pread_at(out, n, std::uint64_t(offset));
    return got < 0 ? 0 : std::size_t(got);
  }
  std::size_t size() const override { return std::size_t(file_->size()); }

 private:
  std::shared_ptr<const CheckedFile> file_;
};

// The name to give a reader of OpenImageIO's that cannot take a proxy (Cineon, FITS, SGI, ...):
// the checked descriptor's own entry in /proc, the same file whatever its name now points to;
// the name itself only where /proc is not mounted.
std::string descriptor_name(const CheckedFile& file) {
  const std::string name = "/proc/self/fd/" + std::to_string(file.descriptor());
  return ::access(name.c_str(), R_OK) == 0 ? name : file.path();
}

// OpenImageIO's reader for the file's extension ("hdr" for .hdr), or the path where none
// claims it (create then says so). Created by that name, not the file's: given a file name,
// OpenImageIO 2.4 probes the file by its name before the reader opens it.
std::string reader_for_extension(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  if (ext.size() < 2) return path;
  const std::string wanted = OIIO::Strutil::lower(ext.substr(1));
  for (const auto& [format, extensions] : OIIO::get_extension_map())
    if (std::find(extensions.begin(), extensions.end(), wanted) != extensions.end()) return format;
  return path;
}

// OpenEXR's stream over the checked descriptor, for its RGBA interface.
class DescriptorStream : public Imf::IStream {
 public:
  explicit DescriptorStream(std::shared_ptr<const CheckedFile> file)
      : Imf::IStream(file->path().c_str()), file_(std::move(file)) {}
  bool read(char c[], int n) override {
    if (n < 0 || file_->pread_at(c, std::size_t(n), position_) != n)
      throw std::runtime_error("the file ends early");
    position_ += std::uint64_t(n);
    return position_ < file_->size();
  }
  std::uint64_t tellg() override { return position_; }
  void seekg(std::uint64_t position) override { position_ = position; }

 private:
  std::shared_ptr<const CheckedFile> file_;
  std::uint64_t position_ = 0;
};

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

// Attributes that describe how a file is stored rather than what it shows: the output decides
// those itself (--compression, its own layout).
bool is_structural(const std::string& name) {
  static const std::vector<std::string> prefixes = {"oiio:", "tiff:", "openexr:", "jpeg:", "png:"};
  static const std::vector<std::string> names = {"compression", "planarconfig", "ICCProfile",
                                                 "XResolution", "YResolution",  "ResolutionUnit"};
  for (const auto& p : prefixes)
    if (name.starts_with(p)) return true;
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The header attributes of a file read by OpenImageIO: each typed attribute as it is, the ICC
// profile apart, and the EXIF-amenable ones also as an EXIF block for outputs that keep EXIF
// whole (PNG, JPEG).
Metadata metadata_of(const OIIO::ImageSpec& spec) {
  Metadata m;
  bool exif = false;
  for (const OIIO::ParamValue& p : spec.extra_attribs) {
    const std::string name = p.name().string();
    const OIIO::TypeDesc type = p.type();
    if (name == "ICCProfile" && type.basetype == OIIO::TypeDesc::UINT8) {
      m.icc.assign(static_cast<const char*>(p.data()), type.size());
      continue;
    }
    if (is_structural(name)) continue;
    if (type == OIIO::TypeString) {
      m.attributes.push_back({name, "string", p.get_string()});
    } else if (type.basetype != OIIO::TypeDesc::STRING && type.basetype != OIIO::TypeDesc::PTR) {
      m.attributes.push_back(
          {name, type.c_str(), std::string(static_cast<const char*>(p.data()), type.size())});
    }
    exif |= name.starts_with("Exif:") || name.starts_with("GPS:");
  }
  if (exif) {
    std::vector<char> blob;
    OIIO::encode_exif(spec, blob, OIIO::endian::little);
    m.exif.assign(blob.begin(), blob.end());
  }
  return m;
}

// The IPTC-IIM records inside a JPEG's APP13 Photoshop block: the 8BIM resource 0x0404
// (after "Photoshop 3.0\0", resources of "8BIM", an id, a padded Pascal name, a size and
// padded data). Empty when there is none or the block is malformed.
std::string iim_of(const std::string& app13) {
  std::size_t at = app13.find('\0');
  if (at == std::string::npos) return {};
  ++at;
  const auto u8 = [&](std::size_t i) { return std::uint8_t(app13[i]); };
  while (at + 12 <= app13.size() && app13.compare(at, 4, "8BIM") == 0) {
    const unsigned id = unsigned(u8(at + 4)) << 8 | u8(at + 5);
    std::size_t name = u8(at + 6) + 1;
    name += name % 2;  // the Pascal name, length byte included, padded to even
    const std::size_t head = at + 6 + name;
    if (head + 4 > app13.size()) return {};
    const std::size_t size = std::size_t(u8(head)) << 24 | std::size_t(u8(head + 1)) << 16 |
                             std::size_t(u8(head + 2)) << 8 | u8(head + 3);
    if (head + 4 + size > app13.size()) return {};
    if (id == 0x0404) return app13.substr(head + 4, size);
    at = head + 4 + size + size % 2;
  }
  return {};
}

// The metadata as OpenImageIO attributes on `spec`: the EXIF, XMP and IPTC blocks of a PNG or
// JPEG input decoded into attributes first (TIFF stores IPTC, EXR keeps them as attributes),
// then the typed attributes over them.
void set_metadata(OIIO::ImageSpec& spec, const Metadata& m) {
  bool typed_exif = false;
  for (const auto& a : m.attributes) typed_exif |= a.name.starts_with("Exif:");
  if (!m.exif.empty() && !typed_exif) OIIO::decode_exif(OIIO::string_view(m.exif), spec);
  if (!m.xmp.empty()) OIIO::decode_xmp(OIIO::string_view(m.xmp), spec);
  if (const std::string iim = iim_of(m.iptc); !iim.empty())
    OIIO::decode_iptc_iim(iim.data(), int(iim.size()), spec);
  for (const auto& a : m.attributes) {
    if (a.is_text()) {
      spec.attribute(a.name, a.value);
      continue;
    }
    const OIIO::TypeDesc type(a.type);
    if (type.basetype == OIIO::TypeDesc::UNKNOWN || type.size() != a.value.size()) continue;
    spec.attribute(a.name, type, a.value.data());
  }
  if (!m.icc.empty())
    spec.attribute("ICCProfile", OIIO::TypeDesc(OIIO::TypeDesc::UINT8, int(m.icc.size())),
                   m.icc.data());
}

// The attributes of an OpenEXR header as OpenImageIO would name and type them (for files
// OpenImageIO 2.4 does not read: luminance/chroma), the layout's own left out. Chromaticities
// matter most: an XYZ file's values read as Rec.709 without them.
Metadata metadata_of(const Imf::Header& header) {
  static const std::vector<std::string> layout = {
      "channels", "compression", "dataWindow", "displayWindow", "lineOrder",
      "type",     "chunkCount",  "tiles",      "version",       "name"};
  Metadata m;
  const auto typed = [&](const char* name, const char* type, const void* data, std::size_t n) {
    m.attributes.push_back({name, type, std::string(static_cast<const char*>(data), n)});
  };
  for (auto it = header.begin(); it != header.end(); ++it) {
    const char* name = it.name();
    if (std::find(layout.begin(), layout.end(), name) != layout.end()) continue;
    const Imf::Attribute& a = it.attribute();
    if (const auto* text = dynamic_cast<const Imf::StringAttribute*>(&a)) {
      m.attributes.push_back({name, "string", text->value()});
    } else if (const auto* f = dynamic_cast<const Imf::FloatAttribute*>(&a)) {
      typed(name, "float", &f->value(), sizeof(float));
    } else if (const auto* i = dynamic_cast<const Imf::IntAttribute*>(&a)) {
      typed(name, "int", &i->value(), sizeof(int));
    } else if (const auto* d = dynamic_cast<const Imf::DoubleAttribute*>(&a)) {
      typed(name, "double", &d->value(), sizeof(double));
    } else if (const auto* c = dynamic_cast<const Imf::ChromaticitiesAttribute*>(&a)) {
      const Imf::Chromaticities& v = c->value();
      const float values[8] = {v.red.x,  v.red.y,  v.green.x, v.green.y,
                               v.blue.x, v.blue.y, v.white.x, v.white.y};
      typed(name, "float[8]", values, sizeof values);
    } else if (const auto* m44 = dynamic_cast<const Imf::M44fAttribute*>(&a)) {
      typed(name, "matrix", &m44->value(), 16 * sizeof(float));
    } else if (const auto* v2 = dynamic_cast<const Imf::V2fAttribute*>(&a)) {
      typed(name, "float[2]", &v2->value(), 2 * sizeof(float));
    }
  }
  return m;
}

// Rows [y, y + count) of an image held whole as interleaved float samples: channels [first,
// first + n) as `type`.
void serve_rows(const std::vector<float>& whole, int width, int channels, int y, int count,
                int first, int n, PixelType type, std::byte* out) {
  const OIIO::TypeDesc to = type == PixelType::u8    ? OIIO::TypeDesc::UINT8
                            : type == PixelType::u16 ? OIIO::TypeDesc::UINT16
                                                     : OIIO::TypeDesc::FLOAT;
  const std::size_t sample = to.size();
  for (int r = 0; r < count; ++r) {
    const float* row = whole.data() + std::size_t(y + r) * width * channels;
    std::byte* dst = out + std::size_t(r) * width * n * sample;
    if (first == 0 && n == channels) {  // all channels: the row in one call
      OIIO::convert_pixel_values(OIIO::TypeFloat, row, to, dst, width * n);
      continue;
    }
    for (int x = 0; x < width; ++x)
      OIIO::convert_pixel_values(OIIO::TypeFloat, row + std::size_t(x) * channels + first, to,
                                 dst + std::size_t(x) * n * sample, n);
  }
}

// An EXR read whole through OpenEXR's own interfaces (files OpenImageIO 2.4 refuses): the
// header's common fields, and rows served from the image held as interleaved floats.
class WholeExrReader : public ImageReader {
 public:
  // The pixels are read on the first call, after open_reader has checked the header's size.
  void read_rows(int count, int first, int n, PixelType type, std::byte* out) override {
    if (whole_.empty()) load();
    serve_rows(whole_, header_.width, int(header_.channels.size()), next_, count, first, n, type,
               out);
    next_ += count;
  }

 protected:
  explicit WholeExrReader(std::shared_ptr<const CheckedFile> input)
      : path_(input->path()), stream_(std::move(input)) {}

  // Size, windows and metadata from the header; BadData for an empty data window.
  void describe(const Imf::Header& h) {
    const Imath::Box2i data = h.dataWindow(), display = h.displayWindow();
    header_.width = data.max.x - data.min.x + 1;
    header_.height = data.max.y - data.min.y + 1;
    if (header_.width <= 0 || header_.height <= 0)
      throw Error(ErrorKind::BadData, path_ + ": image has no pixels");
    header_.format = "openexr";
    header_.whole_image = true;
    header_.metadata = metadata_of(h);
    header_.placement = {data.min.x,
                         data.min.y,
                         display.min.x,
                         display.min.y,
                         display.max.x - display.min.x + 1,
                         display.max.y - display.min.y + 1};
  }
  virtual void load() = 0;

  std::string path_;
  DescriptorStream stream_;
  std::vector<float> whole_;  // the image, channels interleaved

 private:
  int next_ = 0;
};

// An EXR of luminance and subsampled chroma (Y, RY, BY: what OpenEXR's RGBA interface writes
// in its YC modes), which OpenImageIO 2.4 refuses: read through that same interface, which
// rebuilds R, G, B from them, the whole image at once.
class YcReader : public WholeExrReader {
 public:
  explicit YcReader(std::shared_ptr<const CheckedFile> input) try
      : WholeExrReader(input), file_(stream_) {
    describe(file_.header());
    const bool alpha = file_.channels() & Imf::WRITE_A;
    header_.channels = alpha ? std::vector<std::string>{"R", "G", "B", "A"}
                             : std::vector<std::string>{"R", "G", "B"};
    header_.alpha = alpha;
    header_.stored = SampleType::half;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ErrorKind::BadData,
                input->path() + ": cannot read its luminance and chroma: " + one_line(e.what()));
  }

 private:
  void load() override try {
    const Imath::Box2i data = file_.dataWindow();
    std::vector<Imf::Rgba> pixels(std::size_t(header_.width) * header_.height);
    file_.setFrameBuffer(pixels.data() - data.min.x - std::ptrdiff_t(data.min.y) * header_.width, 1,
                         std::size_t(header_.width));
    file_.readPixels(data.min.y, data.max.y);
    const int channels = int(header_.channels.size());
    whole_.resize(pixels.size() * channels);
    for (std::size_t i = 0; i < pixels.size(); ++i) {
      float* px = whole_.data() + i * channels;
      px[0] = pixels[i].r, px[1] = pixels[i].g, px[2] = pixels[i].b;
      if (channels == 4) px[3] = pixels[i].a;
    }
  } catch (const std::exception& e) {
    throw Error(ErrorKind::BadData,
                path_ + ": cannot read its luminance and chroma: " + one_line(e.what()));
  }

  Imf::RgbaInputFile file_;
};

// An open OpenImageIO reader of a checked file, with the proxy it reads through.
struct OpenInput {
  const CheckedFile* file = nullptr;  // kept alive by the proxy
  std::string format;
  std::unique_ptr<DescriptorProxy> proxy;
  std::unique_ptr<OIIO::ImageInput> in;
  int subimages = 0;
};

// Readers of multi-part files kept open after use: `compare -a` reads each part of a file in
// turn, and opening a 300-part EXR anew for each part read its 300 headers each time
// (quadratic: 26 s where idiff took 4). Each is handed to one OiioReader at a time; the last
// few are kept, and never freed (a process's readers live as long as OpenImageIO's plugins).
class KeptInputs {
 public:
  static KeptInputs& instance() {
    static KeptInputs* kept = new KeptInputs;
    return *kept;
  }
  std::optional<OpenInput> take(const CheckedFile* file, const std::string& format) {
    const std::lock_guard lock(mutex_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if (it->file == file && it->format == format) {
        OpenInput found = std::move(*it);
        kept_.erase(it);
        return found;
      }
    return std::nullopt;
  }
  void give_back(OpenInput input) {
    const std::lock_guard lock(mutex_);
    kept_.push_back(std::move(input));
    if (kept_.size() > kKept) kept_.pop_front();
  }

 private:
  static constexpr std::size_t kKept = 4;
  std::mutex mutex_;
  std::deque<OpenInput> kept_;
};

class OiioReader : public ImageReader {
 public:
  OiioReader(std::shared_ptr<const CheckedFile> file, const std::string& format, ImagePart part)
      : path_(file->path()), file_(file), format_(format), part_(part) {
    if (auto kept = KeptInputs::instance().take(file.get(), format)) {
      proxy_ = std::move(kept->proxy);
      in_ = std::move(kept->in);
      header_.subimages = kept->subimages;
    } else {
      open();
      header_.subimages = count_subimages();
    }
    seek(part);
    const OIIO::ImageSpec& spec = in_->spec();
    if (spec.width <= 0 || spec.height <= 0 || spec.nchannels <= 0)
      throw Error(ErrorKind::BadData, path_ + ": image has no pixels");
    header_.width = spec.width;
    header_.height = spec.height;
    header_.channels = spec.channelnames;
    header_.channels.resize(spec.nchannels);
    header_.stored = stored_type(spec.format);
    header_.alpha = spec.alpha_channel == spec.nchannels - 1;
    header_.format = in_->format_name();
    if (header_.format == "openexr") {  // as halo's own EXR reader describes a file
      header_.compression = spec.get_string_attribute("compression");
      if (!spec.channelformats.empty())
        for (int c = 0; c < spec.nchannels; ++c)
          header_.channel_types.push_back(stored_type(spec.channelformat(c)));
    }
    header_.metadata = metadata_of(spec);
    y0_ = spec.y;
    header_.placement = {spec.x,      spec.y,          spec.full_x,
                         spec.full_y, spec.full_width, spec.full_height};
    if (spec.tile_width > 0 && (spec.tile_height <= 0 || spec.tile_depth > 1 || spec.depth > 1))
      throw Error(ErrorKind::BadData, path_ + ": tiles of " + std::to_string(spec.tile_width) +
                                          "x" + std::to_string(spec.tile_height) + "x" +
                                          std::to_string(spec.tile_depth) +
                                          " (halo reads 2D images only)");
    // A row of tiles is checked against --max-memory by open_reader.
    header_.tile_width = std::max(spec.tile_width, 0);
    header_.tile_height = spec.tile_width > 0 ? spec.tile_height : 0;
    tile_rows_ = spec.tile_width > 0 ? std::min(spec.tile_height, spec.height) : 0;
    // OpenImageIO 2.4's read_scanlines converts through a buffer of 256 rows, whatever the
    // rows asked for or the image's height (fuzz_oiio: 2 GB for a 1048580x1 EXR, 3.6 GB for a
    // 32261x6 TIFF of 110 channels), and a TIFF strip is decoded whole, as declared (4.3 GB
    // for a 32775x5 TIFF declaring 65504 rows per strip).
    if (spec.tile_width <= 0)
      header_.decode_rows = std::max(256, spec.get_int_attribute("tiff:RowsPerStrip", 0));
    if (spec.deep) {  // flattened on the first read, after open_reader has checked the size
      deep_ = true;
      header_.stored = SampleType::f32;
      header_.whole_image = true;
      header_.tile_width = header_.tile_height = 0;
      header_.decode_rows = 0;
      tile_rows_ = 0;
    }
  }

  ~OiioReader() override {
    // A multi-part file's reader is kept for the next part, unless it failed.
    if (in_ && header_.subimages > 1 && !in_->has_error())
      KeptInputs::instance().give_back(
          {file_.get(), format_, std::move(proxy_), std::move(in_), header_.subimages});
  }

  // The MIP levels of each subimage (at most kMostMipLevels each).
  std::vector<int> mip_levels() {
    std::vector<int> levels;
    for (int s = 0; s < header_.subimages; ++s) {
      int n = 1;
      while (n < kMostMipLevels && in_->seek_subimage(s, n)) ++n;
      levels.push_back(n);
    }
    (void)in_->geterror();  // the failed seeks' messages, which are no errors here
    return levels;
  }

  // The file's subimages: what its reader says (EXR's part count), else counted by moving to
  // each in turn (a TIFF's directories; its reader sets no count), up to one past what halo
  // compares one by one (codec.cpp refuses more).
  int count_subimages() {
    constexpr int kMostCounted = 1025;
    if (const int said = in_->spec().get_int_attribute("oiio:subimages", 0); said > 0) return said;
    int n = 1;
    while (n < kMostCounted && in_->seek_subimage(n, 0)) ++n;
    (void)in_->geterror();  // the failed seek's message, which is no error here
    return n;
  }

  // Moves to the part: BadData when the file has no such subimage or MIP level.
  void seek(ImagePart part) {
    if (part.subimage < 0 || part.subimage >= header_.subimages || part.miplevel < 0 ||
        !in_->seek_subimage(part.subimage, part.miplevel))
      throw Error(ErrorKind::BadData, path_ + ": has no subimage " + std::to_string(part.subimage) +
                                          " MIP level " + std::to_string(part.miplevel) +
                                          " (it has " + std::to_string(header_.subimages) +
                                          " subimages)");
  }

  void read_rows(int count, int first, int n, PixelType type, std::byte* out) override {
    if (deep_ && whole_.empty()) flatten();
    if (deep_)
      serve_rows(whole_, header_.width, int(header_.channels.size()), next_, count, first, n, type,
                 out);
    else if (tile_rows_ > 0)
      read_tiled_rows(count, first, n, type, out);
    else
      read_region(y0_ + next_, y0_ + next_ + count, first, n, type, out);
    next_ += count;
  }

 private:
  // Opens the file through its descriptor.
  void open() {
    const std::string& path = path_;
    // Keep stored values: no premultiplication of PNG alpha on the way in.
    OIIO::ImageSpec config;
    config.attribute("oiio:UnassociatedAlpha", 1);
    proxy_ = std::make_unique<DescriptorProxy>(file_);
    in_ = OIIO::ImageInput::create(format_.empty() ? reader_for_extension(path) : format_, false,
                                   &config);
    if (in_) {
      const bool proxied = in_->supports("ioproxy") && in_->set_ioproxy(proxy_.get());
      OIIO::ImageSpec spec;
      if (!in_->open(proxied ? path : descriptor_name(*file_), spec, config)) {
        const auto why = one_line(in_->geterror());
        throw Error(ErrorKind::BadData,
                    path + ": cannot read: " + (why.empty() ? "corrupt or unsupported" : why));
      }
    }
    if (!in_) {
      const auto why = one_line(OIIO::geterror());
      throw Error(ErrorKind::BadData,
                  path + ": cannot read: " + (why.empty() ? "unknown format" : why));
    }
  }

  // A deep image (samples at many depths in each pixel) as the flat image it composites to:
  // each pixel's samples `over` each other front to back, as oiiotool --flatten.
  void flatten() {
    DescriptorProxy proxy(file_);
    const OIIO::ImageBuf deep(path_, part_.subimage, part_.miplevel, nullptr, nullptr, &proxy);
    const OIIO::ImageBuf flat = OIIO::ImageBufAlgo::flatten(deep);
    if (flat.has_error() || !flat.initialized())
      throw Error(ErrorKind::BadData,
                  path_ + ": cannot flatten the deep image: " + one_line(flat.geterror()));
    const OIIO::ImageSpec& spec = flat.spec();
    whole_.resize(std::size_t(spec.width) * spec.height * spec.nchannels);
    if (!flat.get_pixels(flat.roi(), OIIO::TypeFloat, whole_.data()))
      throw Error(ErrorKind::BadData, path_ + ": cannot read the deep image's samples");
  }

  // OpenImageIO reads scanlines of scanline files only; a tiled file (common for EXR from
  // renderers, and TIFF) is read a row of tiles at a time into band_, and rows are served from it.
  void read_tiled_rows(int count, int first, int n, PixelType type, std::byte* out) {
    const OIIO::ImageSpec& spec = in_->spec();
    const std::size_t row_bytes = std::size_t(spec.width) * n * oiio_type(type).size();
    if (band_first_ != first || band_n_ != n || band_type_ != type) {
      band_.clear();  // another choice of channels or type: the band is read again
      band_first_ = first, band_n_ = n, band_type_ = type;
    }
    for (int i = 0; i < count; ++i) {
      const int y = y0_ + next_ + i;
      if (band_.empty() || y < band_y_ || y >= band_y_ + band_rows_) {
        band_y_ = y0_ + (y - y0_) / tile_rows_ * tile_rows_;
        band_rows_ = std::min(tile_rows_, y0_ + spec.height - band_y_);
        band_.resize(row_bytes * band_rows_);
        read_region(band_y_, band_y_ + band_rows_, first, n, type, band_.data());
      }
      std::memcpy(out + row_bytes * i, band_.data() + row_bytes * (y - band_y_), row_bytes);
    }
  }

  void read_region(int y_begin, int y_end, int first, int n, PixelType type, std::byte* out) {
    if (type == PixelType::f32 && has_exr_uint(first, n))
      return read_uint_by_value(y_begin, y_end, first, n, reinterpret_cast<float*>(out));
    read_as(y_begin, y_end, first, n, oiio_type(type), out);
  }

  // OpenEXR's UINT channels (object ids, sample counts) are numbers, where OpenImageIO's
  // conversion to float makes them fractions of 2^32 - 1: halo reads them as OpenEXR does.
  bool has_exr_uint(int first, int n) const {
    const OIIO::ImageSpec& spec = in_->spec();
    if (std::string_view(in_->format_name()) != "openexr") return false;
    for (int c = first; c < first + n; ++c)
      if (spec.channelformat(c).basetype == OIIO::TypeDesc::UINT) return true;
    return false;
  }

  // The channels as stored (each its own type), then each to float: UINT by value, the others
  // as OpenImageIO converts them.
  void read_uint_by_value(int y_begin, int y_end, int first, int n, float* out) {
    const OIIO::ImageSpec& spec = in_->spec();
    std::vector<std::size_t> offsets;
    std::size_t pixel_bytes = 0;
    for (int c = first; c < first + n; ++c) {
      offsets.push_back(pixel_bytes);
      pixel_bytes += spec.channelformat(c).size();
    }
    const std::size_t pixels = std::size_t(spec.width) * (y_end - y_begin);
    std::vector<std::byte> native(pixels * pixel_bytes);
    read_as(y_begin, y_end, first, n, OIIO::TypeUnknown, native.data());
    for (int k = 0; k < n; ++k) {
      const OIIO::TypeDesc format = spec.channelformat(first + k);
      for (std::size_t i = 0; i < pixels; ++i) {
        const std::byte* src = native.data() + i * pixel_bytes + offsets[std::size_t(k)];
        float* dst = out + i * n + k;
        if (format.basetype == OIIO::TypeDesc::UINT) {
          std::uint32_t v;
          std::memcpy(&v, src, sizeof v);
          *dst = float(v);
        } else {
          OIIO::convert_pixel_values(format, src, OIIO::TypeFloat, dst, 1);
        }
      }
    }
  }

  // Rows [y_begin, y_end), channels [first, first + n), as `to` (TypeUnknown: as stored).
  void read_as(int y_begin, int y_end, int first, int n, OIIO::TypeDesc to, std::byte* out) {
    const OIIO::ImageSpec& spec = in_->spec();
    const bool ok = tile_rows_ > 0 ? in_->read_tiles(part_.subimage, part_.miplevel, spec.x,
                                                     spec.x + spec.width, y_begin, y_end, spec.z,
                                                     spec.z + 1, first, first + n, to, out)
                                   : in_->read_scanlines(part_.subimage, part_.miplevel, y_begin,
                                                         y_end, 0, first, first + n, to, out);
    // A reader may fill what it could not decode (a truncated TIFF strip: zeros) and still
    // return true, leaving only its error behind: every read is checked for both, and the
    // first error ends the file (its messages are not left to pile up over the next strips).
    if (!ok || in_->has_error()) {
      std::string text = in_->geterror();
      text = text.substr(0, text.find('\n'));  // the first error: the others follow from it
      const auto why = one_line(text);
      throw Error(ErrorKind::BadData,
                  path_ + ": cannot read pixels: " + (why.empty() ? "corrupt or truncated" : why));
    }
  }

  std::string path_;
  std::shared_ptr<const CheckedFile> file_;
  std::string format_;
  std::unique_ptr<DescriptorProxy> proxy_;
  ImagePart part_;
  std::unique_ptr<OIIO::ImageInput> in_;
  int y0_ = 0, next_ = 0;
  int tile_rows_ = 0;  // 0 for a scanline file
  bool deep_ = false;
  std::vector<float> whole_;  // a deep image, flattened
  std::vector<std::byte> band_;
  int band_y_ = 0, band_rows_ = 0, band_first_ = -1, band_n_ = 0;
  PixelType band_type_ = PixelType::f32;
};

// --compression as OpenImageIO's attribute for the format of `ext` (JPEG, PNG and PFM are
// halo's own).
void set_encoding(OIIO::ImageSpec& spec, const std::string& ext, const WriteOptions& o) {
  if (!o.compression.empty()) {
    static const std::vector<std::string> exr = {"none",  "rle", "zips", "zip",  "piz",
                                                 "pxr24", "b44", "b44a", "dwaa", "dwab"};
    static const std::vector<std::string> tiff = {"none", "lzw", "zip", "packbits"};
    const std::string method = o.compression.substr(0, o.compression.find(':'));
    const auto& known = ext == ".exr" ? exr : tiff;
    if ((ext != ".exr" && ext != ".tif" && ext != ".tiff") ||
        std::find(known.begin(), known.end(), method) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw Error(ErrorKind::Usage, "--compression '" + o.compression + "' does not apply to " +
                                        ext +
                                        (ext == ".exr" || ext == ".tif" || ext == ".tiff"
                                             ? " (have " + list + ", with :level for zip and dwa)"
                                             : " files"));
    }
    spec.attribute("compression", o.compression);
  }
  if (o.quality > 0) throw Error(ErrorKind::Usage, "--quality applies to JPEG, not " + ext);
}

class OiioWriter : public ImageWriter {
 public:
  OiioWriter(const std::string& target, const std::string& file, const OutputHeader& h,
             const WriteOptions& options)
      : target_(target), header_(h) {
    out_ = OIIO::ImageOutput::create(target);
    if (!out_)
      throw Error(ErrorKind::Usage,
                  target + ": cannot write this format: " + one_line(OIIO::geterror()));
    OIIO::ImageSpec spec(h.width, h.height, h.channels, oiio_type(h.type));
    spec.channelnames = int(h.channel_names.size()) == h.channels
                            ? h.channel_names
                            : standard_names(h.channels, h.alpha);
    spec.alpha_channel = h.alpha ? h.channels - 1 : -1;
    if (int(h.channel_types.size()) == h.channels)  // an EXR's half beside float
      for (const SampleType t : h.channel_types) spec.channelformats.push_back(oiio_type(t));
    spec.attribute("oiio:UnassociatedAlpha", 1);
    set_metadata(spec, h.metadata);
    set_encoding(spec, extension(target), options);
    place(spec, h.placement);
    if (!out_->supports("alpha") && h.alpha)
      throw Error(ErrorKind::Usage, target + ": this format cannot store alpha");
    if (!out_->open(file, spec))
      throw Error(ErrorKind::CantCreate, target + ": cannot create: " + one_line(out_->geterror()));
  }

  void write_rows(int count, const std::byte* rows) override {
    const int y = y0_ + next_;  // rows are numbered in the data window
    if (!out_->write_scanlines(y, y + count, 0, oiio_type(pixel_type(header_.type)), rows))
      throw Error(ErrorKind::Io, target_ + ": write failed: " + one_line(out_->geterror()));
    next_ += count;
  }

  void finish() override {
    if (!out_->close())
      throw Error(ErrorKind::Io, target_ + ": write failed: " + one_line(out_->geterror()));
  }

 private:
  // The input's data window and display window, where the format has them (EXR: both; TIFF:
  // the position); halo's own writers (PNG, JPEG, PFM) have neither.
  void place(OIIO::ImageSpec& spec, const Placement& p) {
    if (!p.placed(spec.width, spec.height)) return;
    if (out_->supports("origin")) {
      spec.x = p.x;
      spec.y = y0_ = p.y;
    }
    if (out_->supports("displaywindow") && p.full_width > 0 && p.full_height > 0) {
      spec.full_x = p.full_x, spec.full_y = p.full_y;
      spec.full_width = p.full_width, spec.full_height = p.full_height;
    }
  }

  std::string target_;
  OutputHeader header_;
  int y0_ = 0;
  std::unique_ptr<OIIO::ImageOutput> out_;
  int next_ = 0;
};

// An EXR with subsampled channels that are not luminance/chroma (a render's Z or diffuse
// layers stored at half resolution beside full-resolution colour), which OpenImageIO 2.4
// refuses: its full-resolution channels read exactly, each as stored (half or float), through
// OpenEXR's own interface, the whole image at once; the subsampled ones left out, by name.
class SampledExrReader : public WholeExrReader {
 public:
  explicit SampledExrReader(std::shared_ptr<const CheckedFile> input) try
      : WholeExrReader(input), file_(stream_) {
    const Imf::Header& h = file_.header();
    describe(h);
    std::vector<std::string>& left_out = header_.left_out;
    bool floats = false;
    for (auto it = h.channels().begin(); it != h.channels().end(); ++it) {
      if (it.channel().xSampling != 1 || it.channel().ySampling != 1) {
        left_out.push_back(std::string(it.name()) + " (" + std::to_string(it.channel().xSampling) +
                           "x" + std::to_string(it.channel().ySampling) + ")");
        continue;
      }
      header_.channels.push_back(it.name());
      floats = floats || it.channel().type != Imf::HALF;
    }
    if (header_.channels.empty())
      throw Error(ErrorKind::BadData, path_ +
                                          ": every channel is subsampled; halo reads "
                                          "full-resolution channels");
    // Colour first and alpha after it, as OpenImageIO orders an EXR's channels.
    std::stable_sort(header_.channels.begin(), header_.channels.end(),
                     [](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    header_.alpha =
        std::find(header_.channels.begin(), header_.channels.end(), "A") != header_.channels.end();
    if (header_.alpha && header_.channels.size() > 4) header_.alpha = false;
    header_.stored = floats ? SampleType::f32 : SampleType::half;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ErrorKind::BadData, input->path() + ": cannot read: " + one_line(e.what()));
  }

 private:
  // R, G, B, A, then the other channels in the file's (alphabetical) order.
  static int rank(const std::string& name) {
    static const std::vector<std::string> first = {"R", "G", "B", "A"};
    const auto at = std::find(first.begin(), first.end(), name);
    return at == first.end() ? 4 : int(at - first.begin());
  }

  void load() override try {
    const Imath::Box2i data = file_.header().dataWindow();
    const std::size_t channels = header_.channels.size(), width = std::size_t(header_.width);
    whole_.resize(width * std::size_t(header_.height) * channels);
    const std::size_t x_stride = channels * sizeof(float), y_stride = width * x_stride;
    Imf::FrameBuffer frame;
    for (std::size_t c = 0; c < channels; ++c) {
      // The slice's base is where pixel (0, 0) of the data window's coordinates would be.
      char* base = reinterpret_cast<char*>(whole_.data() + c) -
                   std::ptrdiff_t(data.min.x) * std::ptrdiff_t(x_stride) -
                   std::ptrdiff_t(data.min.y) * std::ptrdiff_t(y_stride);
      frame.insert(header_.channels[c], Imf::Slice(Imf::FLOAT, base, x_stride, y_stride));
    }
    file_.setFrameBuffer(frame);
    file_.readPixels(data.min.y, data.max.y);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::BadData, path_ + ": cannot read pixels: " + one_line(e.what()));
  }

  Imf::InputFile file_;
};

// OpenImageIO refuses an EXR's subsampled channels: luminance and chroma (OpenEXR's RGBA
// interface reads them) or other layers (SampledExrReader), in a single-part file's only image.
bool refused_sampling(const std::string& format, const Error& e) {
  return format == "openexr" && std::string(e.what()).find("Subsampled") != std::string::npos;
}

// Whether an EXR's subsampled channels are luminance and chroma (RY and BY, beside Y).
bool luminance_chroma(const std::shared_ptr<const CheckedFile>& file) try {
  DescriptorStream stream(file);
  const Imf::InputFile exr(stream);
  const Imf::ChannelList& channels = exr.header().channels();
  return channels.findChannel("RY") && channels.findChannel("BY");
} catch (const std::exception& e) {
  throw Error(ErrorKind::BadData, file->path() + ": cannot read: " + one_line(e.what()));
}

std::unique_ptr<ImageReader> open_sampled(std::shared_ptr<const CheckedFile> file) {
  if (luminance_chroma(file)) return std::make_unique<YcReader>(std::move(file));
  return std::make_unique<SampledExrReader>(std::move(file));
}

std::unique_ptr<ImageReader> open_oiio(std::shared_ptr<const CheckedFile> file,
                                       const std::string& format, ImagePart part) {
  try {
    return std::make_unique<OiioReader>(file, format, part);
  } catch (const Error& e) {
    if (part.first() && refused_sampling(format, e)) return open_sampled(std::move(file));
    throw;
  }
}

// An EXR with subsampled channels (read through YcReader or SampledExrReader) is one image.
std::vector<int> mip_levels_oiio(std::shared_ptr<const CheckedFile> file,
                                 const std::string& format) {
  try {
    return OiioReader(std::move(file), format, ImagePart{}).mip_levels();
  } catch (const Error& e) {
    if (refused_sampling(format, e)) return {1};
    throw;
  }
}

std::unique_ptr<ImageWriter> create_oiio(const std::string& target, const std::string& file,
                                         const OutputHeader& header, const WriteOptions& options) {
  return std::make_unique<OiioWriter>(target, file, header, options);
}

}  // namespace

}  // namespace halo

// The module's one entry point (io/codec.cpp looks it up after dlopen).
namespace halo {
namespace {

bool stores_alpha_oiio(const std::string& target) {
  const auto out = OIIO::ImageOutput::create(target);
  return out && out->supports("alpha");
}

std::string encode_exif(const std::vector<Attribute>& attributes) {
  OIIO::ImageSpec spec;
  Metadata m;
  m.attributes = attributes;
  set_metadata(spec, m);
  std::vector<char> blob;
  OIIO::encode_exif(spec, blob, OIIO::endian::little);
  return std::string(blob.begin(), blob.end());
}

std::string update_exif(const std::string& exif, const std::vector<Attribute>& set) {
  OIIO::ImageSpec spec;
  OIIO::decode_exif(OIIO::string_view(exif), spec);
  for (const auto& a : set) spec.attribute(a.name, a.value);
  std::vector<char> blob;
  OIIO::encode_exif(spec, blob, OIIO::endian::little);
  return std::string(blob.begin(), blob.end());
}

}  // namespace
}  // namespace halo

extern "C" const halo::OiioCodecs* halo_oiio_codecs() {
  // Set once as the module loads, before any reader or writer: only the reader asked for,
  // never OpenImageIO's fallback through every reader it has; and no "OIIO DEBUG:" lines of its
  // own on stderr (its EXR writer printed one for every ICC profile): what halo reports goes
  // through its log.
  static const bool configured =
      OIIO::attribute("try_all_readers", 0) && OIIO::attribute("debug", 0);
  (void)configured;
  static const halo::OiioCodecs codecs{
      halo::open_oiio,   halo::mip_levels_oiio,   halo::create_oiio,  halo::update_exif,
      halo::encode_exif, halo::stores_alpha_oiio, OIIO_VERSION_STRING};
  return &codecs;
}
