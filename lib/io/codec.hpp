// Image files read and written row by row, so that no image has to fit in memory at once.
// One reader and one writer per format family: PNG through libpng and halo's own encoder
// (io/png.cpp), JPEG through libjpeg-turbo (io/jpeg.cpp), PFM (io/pfm.cpp), WebP stills read
// through libwebp (io/webp.cpp), everything else through OpenImageIO's scanline calls
// (io/oiio.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/checked_file.hpp"
#include "core/image.hpp"
#include "core/placement.hpp"
#include "core/text.hpp"
#include "io/metadata.hpp"

namespace halo {

// What a file stores, which is also what `--type` asks for. Half data is widened to float in
// memory and narrowed again when written.
enum class SampleType { u8, u16, half, f32 };

SampleType parse_sample_type(const std::string& name);  // u8|u16|half|float (Usage error else)
std::string to_string(SampleType type);
std::size_t stored_size(SampleType type);  // bytes of one stored sample
// The names a file gets for `channels` unnamed channels: Y, Y A, R G B, R G B A, channelN.
// Inline: the OpenImageIO module, loaded at run time, needs it too.
inline std::vector<std::string> standard_names(int channels, bool alpha) {
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
// The in-memory type that holds it.
inline PixelType pixel_type(SampleType type) {
  return type == SampleType::u8    ? PixelType::u8
         : type == SampleType::u16 ? PixelType::u16
                                   : PixelType::f32;
}

// One image of a file: a part of a multi-part file (OpenEXR) and a MIP level of it (a
// mipmapped TIFF or EXR). {0, 0} is the image a file opens on.
struct ImagePart {
  int subimage = 0, miplevel = 0;
  bool first() const { return subimage == 0 && miplevel == 0; }
};

struct ImageHeader {
  int width = 0, height = 0;
  std::vector<std::string> channels;  // names as the file has them
  SampleType stored = SampleType::u8;
  // Each channel's own type where a file mixes them (an EXR render's half colour beside float
  // depth); empty when every channel is `stored`.
  std::vector<SampleType> channel_types;
  std::string compression;              // an EXR's ("zip", "piz", ...): its outputs keep it
  bool alpha = false;                   // the file marks its last channel as alpha
  std::string format;                   // "png", "openexr", ...
  bool whole_image = false;             // the decoder holds the whole image (interlaced PNG)
  int tile_width = 0, tile_height = 0;  // a tiled file's tiles (a row of them is read at once)
  int decode_rows = 0;      // rows of stored samples the decoder holds at once (OpenImageIO's)
  int shrink = 1;           // decoded at 1/shrink of the stored size (open_reader's shrink)
  bool can_shrink = false;  // the decoder itself can decode at 1/2, 1/4 or 1/8 (JPEG, WebP)
  // The decoder resamples the whole image to the shrunk size (libwebp's scaler), so its last
  // pixels hold no partial block: the image spans every shrunk pixel.
  bool shrinks_whole = false;
  int subimages = 1;  // parts of a multi-part file (OpenEXR); open_reader's part is read
  // Channels the reader leaves out, with why ("Z (2x2)": an EXR's subsampled layers):
  // open_reader warns of them once a file.
  std::vector<std::string> left_out;
  Placement placement;
  Metadata metadata;  // what the header says besides the pixels
};

class ImageReader {
 public:
  virtual ~ImageReader() = default;
  const ImageHeader& header() const { return header_; }
  // The next `count` rows (rows are read once, in order from row 0), channels [first, first +
  // n), as interleaved samples of `type`: 8/16-bit codes as they are (or widened to float
  // codes / 65535 and / 255 for float), float as float.
  virtual void read_rows(int count, int first, int n, PixelType type, std::byte* out) = 0;

 protected:
  ImageHeader header_;

  friend std::unique_ptr<ImageReader> open_reader(std::shared_ptr<const CheckedFile> file,
                                                  int shrink, ImagePart part);
};

// Sample i of `out` as `type`, as readers hand samples over: an 8 or 16-bit code as it is, or
// widened to float as code / max_code (max_code 1 for float data).
template <typename T>
void put_sample(std::byte* out, std::size_t i, PixelType type, T v, float max_code) {
  switch (type) {
    case PixelType::u8:
      reinterpret_cast<std::uint8_t*>(out)[i] = std::uint8_t(v);
      break;
    case PixelType::u16:
      reinterpret_cast<std::uint16_t*>(out)[i] = std::uint16_t(v);
      break;
    case PixelType::f32:
      reinterpret_cast<float*>(out)[i] = float(v) * (1.0f / max_code);
      break;
  }
}

// Channels [first, first + n) of a row of `width` pixels of `channels` interleaved samples,
// as samples of `type` (put_sample's rule), into `out`.
template <typename T>
void pick_samples(const T* row, int width, int channels, int first, int n, PixelType type,
                  std::byte* out, float max_code) {
  for (int x = 0; x < width; ++x)
    for (int c = 0; c < n; ++c)
      put_sample(out, std::size_t(x) * n + c, type, row[std::size_t(x) * channels + first + c],
                 max_code);
}

// Reads the header of a file opened by CheckedFile::open (no pixels yet), its metadata within
// cap_metadata's limits; the reader reads through the file's descriptor only, never its name.
// NoInput for a missing or unreadable file, BadData for a corrupt one or a format halo cannot read.
// shrink > 1: the image at that fraction of its size, each side rounded up (header().shrink
// says): a JPEG or WebP decoded smaller (2, 4 or 8: libjpeg-turbo's DCT scaling, libwebp's
// scaler), much faster; any other format read through averaged blocks (shrink_by_blocks).
// part: which image of a multi-part or mipmapped file (BadData when the file has no such part).
std::unique_ptr<ImageReader> open_reader(std::shared_ptr<const CheckedFile> file, int shrink = 1,
                                         ImagePart part = {});
// The same for `path`, opened and checked here.
std::unique_ptr<ImageReader> open_reader(const std::string& path, int shrink = 1,
                                         ImagePart part = {});
// The MIP levels of each of a file's subimages ({1} for a file of one image), after the checks
// open_reader makes. BadData for more than 1024 subimages.
std::vector<int> mip_levels(const std::shared_ptr<const CheckedFile>& file);

// How an output is encoded; empty/0: the format's default (see `halo run --help`).
struct WriteOptions {
  std::string compression;  // PNG: zip[:0-9]; EXR: none|rle|zips|zip|piz|pxr24|b44|b44a|dwaa|dwab
                            // [:level]; TIFF: none|lzw|zip|packbits
  std::string png_filter;   // none|sub|up|average|paeth|adaptive
  int quality = 0;          // JPEG 1..100
  int threads = 0;          // encoder threads (PNG); 0: the number of cores
  // --no-clobber: the output is published only where no file exists by then (of several runs
  // writing one absent output, exactly one wins; the others fail with CantCreate).
  bool no_clobber = false;
};

struct OutputHeader {
  int width = 0, height = 0, channels = 0;
  bool alpha = false;
  SampleType type = SampleType::u8;
  Metadata metadata;                       // stored as far as the format can hold it
  std::vector<std::string> channel_names;  // empty: R, G, B, A / Y by the count
  Placement placement;                     // kept by EXR and TIFF
  // Each channel's type (EXR keeps half channels half beside float ones); empty: all `type`.
  std::vector<SampleType> channel_types;
};

class ImageWriter {
 public:
  virtual ~ImageWriter() = default;
  // The next `count` rows, interleaved samples of pixel_type(header.type).
  virtual void write_rows(int count, const std::byte* rows) = 0;
  // After the last row: completes the file.
  virtual void finish() = 0;
};

// Writes `file` (a temporary name) in the format `target`'s extension names. Usage for a
// format that cannot hold the header (alpha in JPEG, 2 channels in PFM) or a bad option,
// CantCreate when the file cannot be created.
std::unique_ptr<ImageWriter> create_writer(const std::string& target, const std::string& file,
                                           const OutputHeader& header, const WriteOptions& options);

// The formats an output may be written in, by lower-case extension with the dot (".png"), and
// their list for messages ("png, jpg, ...").
bool is_writable_format(const std::string& extension);
std::string writable_formats_text();

// The nearest type the format can hold: PNG u8/u16, JPEG u8, PFM float, EXR half/float.
SampleType storable_type(const std::string& path, SampleType wanted);
// Whether the format `path` names can store an alpha channel (JPEG and PFM cannot; other
// extensions ask OpenImageIO's writer for them).
bool stores_alpha(const std::string& path);

// Lower-case extension with its dot: ".png".
inline std::string extension(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) ||
      dot == (slash == std::string::npos ? 0 : slash + 1))
    return "";
  return lower(path.substr(dot));
}

// For readers whose decoders give 8-bit rows (JPEG, WebP): channels [first, first + n) of a
// row of `width` pixels of `channels` samples, into `out` as `type` (float: code / 255).
void copy_u8_row(const std::uint8_t* samples, int width, int channels, int first, int n,
                 PixelType type, std::byte* out);

// Per format: io/png.cpp, io/jpeg.cpp, io/pfm.cpp, io/webp.cpp (reading), and io/oiio.cpp, a module
// (libhalo_oiio.so) loaded on first use: OpenImageIO and the ~260 libraries it links cost 0.1 s and
// 120 MiB at start, which the common formats do without.
bool is_png(const std::string& path);
bool is_jpeg(const std::string& path);
bool is_pfm(const std::string& path);
std::unique_ptr<ImageReader> open_png(std::shared_ptr<const CheckedFile> file);
// shrink 2, 4 or 8: decoded at that fraction of its size (DCT scaling); else whole.
std::unique_ptr<ImageReader> open_jpeg(std::shared_ptr<const CheckedFile> file, int shrink);
std::unique_ptr<ImageReader> open_pfm(std::shared_ptr<const CheckedFile> file);
// shrink 2, 4 or 8: decoded at that fraction of its size (libwebp's scaling); else whole.
// Null for an animation, which OpenImageIO reads (its frames as subimages).
std::unique_ptr<ImageReader> open_webp(std::shared_ptr<const CheckedFile> file, int shrink);
bool is_webp_content(const unsigned char* bytes, std::size_t n);  // RIFF....WEBP
std::unique_ptr<ImageWriter> create_png(const std::string& file, const OutputHeader& header,
                                        const WriteOptions& options);
// `target`: the output's own name, for warnings (`file` may be its temporary).
std::unique_ptr<ImageWriter> create_jpeg(const std::string& target, const std::string& file,
                                         const OutputHeader& header, const WriteOptions& options);
std::unique_ptr<ImageWriter> create_pfm(const std::string& file, const OutputHeader& header);
// OpenEXR through OpenEXRCore (io/exr.cpp); null for what it leaves to the OpenImageIO module
// (deep parts, DWA chunks, subsampled channels, ripmap and environment-map levels; outputs
// with DWA compression or EXIF, XMP, IPTC or ICC blocks).
std::unique_ptr<ImageReader> open_exr(std::shared_ptr<const CheckedFile> file, ImagePart part);
std::unique_ptr<ImageWriter> create_exr(const std::string& target, const std::string& file,
                                        const OutputHeader& header, const WriteOptions& options);
// TIFF through libtiff (io/tiff.cpp) for a plain file (one image in strips or tiles, 8/16-bit or
// float, grey, RGB or RGBA, no EXIF/XMP/IPTC/ICC block); null for what it leaves to the module.
std::unique_ptr<ImageReader> open_tiff(std::shared_ptr<const CheckedFile> file);
// A plain TIFF written through libtiff (1 or 3 channels, or 4 with alpha; 8/16-bit or float;
// none, lzw, zip[:1-9] or packbits; no position, ICC, EXIF, XMP or IPTC block), stored as
// OpenImageIO's writer stores it; null for what the module writes.
std::unique_ptr<ImageWriter> create_tiff(const std::string& target, const std::string& file,
                                         const OutputHeader& header, const WriteOptions& options);
// Whether `compression` ("zip", "dwaa:45") is one of OpenEXR's that halo writes.
bool is_exr_compression(const std::string& compression);
// Lets the open readers of `file` keep up to `bytes` of what they decoded for one another:
// a run that holds the whole image reads its filtered channels to the end before the carried
// layers' reader starts, and finds the chunks decoded only if they were all kept. Whether they
// can: halo's own EXR readers (a chunk holds every channel of its rows) have the file open;
// they keep their last strips' anyway.
bool share_decoded(const CheckedFile& file, std::size_t bytes);
// The MIP levels of each part of an EXR, or empty when the module counts them.
std::vector<int> exr_mip_levels(const std::shared_ptr<const CheckedFile>& file);

// What the OpenImageIO module offers; halo_oiio_codecs() in the module returns it.
struct OiioCodecs {
  // format: OpenImageIO's reader to use ("openexr", "tiff"), or "" for the one the
  // extension names; never any other (OpenImageIO's try-all-readers fallback is off).
  std::unique_ptr<ImageReader> (*open)(std::shared_ptr<const CheckedFile> file,
                                       const std::string& format, ImagePart part);
  // The MIP levels of each subimage, from one open (format as for open).
  std::vector<int> (*mip_levels)(std::shared_ptr<const CheckedFile> file,
                                 const std::string& format);
  std::unique_ptr<ImageWriter> (*create)(const std::string& target, const std::string& file,
                                         const OutputHeader& header, const WriteOptions& options);
  // An EXIF block with the given attributes set (OpenImageIO's names: Artist, Exif:..., as
  // --attrib gives them), the rest as it was.
  std::string (*update_exif)(const std::string& exif, const std::vector<Attribute>& set);
  // An EXIF block of the EXIF-amenable typed attributes (Exif:..., GPS:..., as an EXR header
  // holds them), for outputs that keep EXIF whole (PNG, JPEG).
  std::string (*encode_exif)(const std::vector<Attribute>& attributes);
  // Whether OpenImageIO's writer for the file's extension stores alpha.
  bool (*stores_alpha)(const std::string& target);
  const char* version;  // OpenImageIO's, as the module was built against it
};
// Loads the module the first time (Error(Internal) naming where it looked when it cannot).
const OiioCodecs& oiio_codecs();

// The codec libraries halo reads and writes with, for `halo --version`: libpng, libjpeg-turbo,
// zlib, and OpenImageIO through the module (loaded for it), or why the module is not there.
std::string codec_versions();

}  // namespace halo
