// WebP stills through libwebp: decoded incrementally as rows are asked for (WebPIUpdate over
// the file in memory), at 1/2, 1/4 or 1/8 of the size when a shrinking chain asks for it
// (libwebp's rescaler averages the pixels each output pixel covers), with the ICC profile,
// EXIF and XMP chunks read through the demuxer. Animations are left to OpenImageIO (whose
// reader gives their first frame). OpenImageIO's reader decoded a whole 4096x4096 photo into
// floats before the first row (1.15 s and 213 MB for a 512 thumbnail, vipsthumbnail 0.26 s).
#include <webp/decode.h>
#include <webp/demux.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/paths.hpp"
#include "io/codec.hpp"

namespace halo {

namespace {

// A RIFF file's size field is 32 bits: no WebP is larger.
constexpr std::size_t kMostWebpBytes = (std::size_t(1) << 32) + 8;
// What a header is read from. The whole file is read when its pixels are wanted, or at once
// when the header flags metadata chunks (they may follow the pixels): a probe of a file that
// is then reopened to decode it shrunk costs no second read of the whole file.
constexpr std::size_t kHeadBytes = std::size_t(64) << 10;

HostBytes read_whole_webp(const CheckedFile& file) {
  return file.read_whole(kMostWebpBytes, "the WebP file");
}

const std::uint8_t* data_of(const HostBytes& bytes) {
  return reinterpret_cast<const std::uint8_t*>(bytes.data());
}

std::string status_text(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_OUT_OF_MEMORY:
      return "out of memory";
    case VP8_STATUS_INVALID_PARAM:
      return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR:
      return "corrupt data";
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return "a feature libwebp does not support";
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return "the file ends early (truncated)";
    default:
      return "libwebp error " + std::to_string(int(status));
  }
}

// A chunk's payload through the demuxer, or "" when the file has none.
std::string chunk(const WebPDemuxer* demux, const char* fourcc) {
  WebPChunkIterator it;
  std::string payload;
  if (WebPDemuxGetChunk(demux, fourcc, 1, &it))
    payload.assign(reinterpret_cast<const char*>(it.chunk.bytes), it.chunk.size);
  WebPDemuxReleaseChunkIterator(&it);
  return payload;
}

struct DeleteDemuxer {
  void operator()(WebPDemuxer* d) const { WebPDemuxDelete(d); }
};
struct DeleteDecoder {
  void operator()(WebPIDecoder* d) const { WebPIDelete(d); }
};

class WebpReader : public ImageReader {
 public:
  // bytes: the whole file, or its first bytes when `whole` is false.
  WebpReader(std::shared_ptr<const CheckedFile> file, HostBytes bytes, bool whole,
             const WebPBitstreamFeatures& f, int shrink)
      : file_(std::move(file)), path_(file_->path()), bytes_(std::move(bytes)), whole_(whole) {
    check_image_size(path_, f.width, f.height);
    header_.format = "webp";
    header_.alpha = f.has_alpha;
    header_.channels = standard_names(f.has_alpha ? 4 : 3, f.has_alpha);
    header_.stored = SampleType::u8;
    header_.width = f.width, header_.height = f.height;
    header_.can_shrink = true;
    header_.shrinks_whole = true;
    if (shrink == 2 || shrink == 4 || shrink == 8) {  // each side rounded up, as JPEG's
      header_.width = (f.width + shrink - 1) / shrink;
      header_.height = (f.height + shrink - 1) / shrink;
      header_.shrink = shrink;
    }
    header_.whole_image = true;  // libwebp writes into one buffer the size of the image
    header_.metadata = read_metadata();
  }

  void read_rows(int count, int first, int n, PixelType type, std::byte* out) override {
    if (!decoder_) start();
    const int channels = int(header_.channels.size());
    while (decoded_ < row_ + count) decode_more();
    const std::size_t stride = std::size_t(header_.width) * channels;
    for (int r = 0; r < count; ++r, ++row_) {
      const std::uint8_t* samples = pixels_.data() + std::size_t(row_) * stride;
      std::byte* dst = out + std::size_t(r) * header_.width * n * sample_size(type);
      if (type == PixelType::u8 && first == 0 && n == channels) {
        std::memcpy(dst, samples, stride);
        continue;
      }
      copy_u8_row(samples, header_.width, channels, first, n, type, dst);
    }
  }

 private:
  // The ICC profile, EXIF (TIFF data; a leading "Exif\0\0", which some writers add, dropped)
  // and XMP chunks.
  Metadata read_metadata() {
    // Partial: a truncated file's chunks before the cut are read, and its pixels fail when
    // the rows past it are asked for, saying so.
    std::unique_ptr<WebPDemuxer, DeleteDemuxer> demux = demux_bytes();
    constexpr std::uint32_t kMetadataFlags = ICCP_FLAG | EXIF_FLAG | XMP_FLAG;
    if (!whole_ && (WebPDemuxGetI(demux.get(), WEBP_FF_FORMAT_FLAGS) & kMetadataFlags)) {
      read_whole();
      demux = demux_bytes();
    }
    Metadata m;
    m.icc = chunk(demux.get(), "ICCP");
    m.exif = chunk(demux.get(), "EXIF");
    if (m.exif.starts_with(std::string_view("Exif\0\0", 6))) m.exif.erase(0, 6);
    m.xmp = chunk(demux.get(), "XMP ");
    return m;
  }

  std::unique_ptr<WebPDemuxer, DeleteDemuxer> demux_bytes() const {
    const WebPData data{data_of(bytes_), bytes_.size()};
    WebPDemuxState state = WEBP_DEMUX_PARSE_ERROR;
    std::unique_ptr<WebPDemuxer, DeleteDemuxer> demux(WebPDemuxPartial(&data, &state));
    if (!demux || state == WEBP_DEMUX_PARSE_ERROR)
      throw Error(ErrorKind::BadData, path_ + ": not a valid WebP container");
    return demux;
  }

  void read_whole() {
    bytes_ = read_whole_webp(*file_);
    whole_ = true;
  }

  // The decoder, writing into pixels_: on the first rows read, not at open (a probe of the
  // header decodes nothing).
  void start() {
    if (!whole_) read_whole();
    const std::size_t channels = header_.channels.size();
    check_memory(path_, double(header_.width) * header_.height * channels,
                 "a WebP image's decoded pixels");
    pixels_.resize(std::size_t(header_.width) * header_.height * channels);
    WebPDecoderConfig& config = config_;
    if (!WebPInitDecoderConfig(&config))
      throw Error(ErrorKind::Internal, "libwebp: WebPInitDecoderConfig failed (version mismatch)");
    if (header_.shrink > 1) {
      config.options.use_scaling = 1;
      config.options.scaled_width = header_.width;
      config.options.scaled_height = header_.height;
    }
    config.options.use_threads = 1;
    config.output.colorspace = header_.alpha ? MODE_RGBA : MODE_RGB;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = pixels_.data();
    config.output.u.RGBA.stride = int(std::size_t(header_.width) * channels);
    config.output.u.RGBA.size = pixels_.size();
    decoder_.reset(WebPIDecode(nullptr, 0, &config));
    if (!decoder_) throw Error(ErrorKind::BadData, path_ + ": libwebp cannot decode it");
  }

  // Hands the decoder the next part of the file; decoded_ becomes the rows it has finished.
  void decode_more() {
    if (fed_ == bytes_.size())
      throw Error(ErrorKind::BadData, fmt::format("{}: cannot read pixels: the file ends early "
                                                  "(truncated) after row {}",
                                                  path_, decoded_));
    fed_ = std::min(bytes_.size(), fed_ + kFeed);
    const VP8StatusCode status = WebPIUpdate(decoder_.get(), data_of(bytes_), fed_);
    if (status != VP8_STATUS_OK && status != VP8_STATUS_SUSPENDED)
      throw Error(ErrorKind::BadData, path_ + ": cannot read pixels: " + status_text(status));
    int last_y = 0;
    WebPIDecGetRGB(decoder_.get(), &last_y, nullptr, nullptr, nullptr);
    decoded_ = last_y;
  }

  static constexpr std::size_t kFeed = std::size_t(256) << 10;  // bytes handed over at a time

  std::shared_ptr<const CheckedFile> file_;
  std::string path_;
  HostBytes bytes_;  // the whole file, or its first bytes until whole_
  bool whole_ = false;
  // The decoded image, written once: unset, on huge pages when large (a 1024x1024 RGB decode
  // zeroed on 4 KiB pages first cost 768 page faults).
  std::vector<std::uint8_t, HostAllocator<std::uint8_t>> pixels_{
      HostAllocator<std::uint8_t>(large_page_resource())};
  WebPDecoderConfig config_{};  // the decoder keeps pointers to its options and output
  std::unique_ptr<WebPIDecoder, DeleteDecoder> decoder_;
  std::size_t fed_ = 0;  // bytes of the file the decoder has
  int decoded_ = 0;      // rows it has finished
  int row_ = 0;          // the next row read_rows returns
};

}  // namespace

bool is_webp_content(const unsigned char* b, std::size_t n) {
  return n >= 12 && std::memcmp(b, "RIFF", 4) == 0 && std::memcmp(b + 8, "WEBP", 4) == 0;
}

std::unique_ptr<ImageReader> open_webp(std::shared_ptr<const CheckedFile> file, int shrink) {
  bool whole = file->size() <= kHeadBytes;
  HostBytes bytes;
  if (whole) {
    bytes = read_whole_webp(*file);
  } else {
    bytes.resize(kHeadBytes);
    bytes.resize(file->read_at(bytes.data(), bytes.size(), 0));
  }
  WebPBitstreamFeatures features;
  VP8StatusCode status = WebPGetFeatures(data_of(bytes), bytes.size(), &features);
  if (status == VP8_STATUS_NOT_ENOUGH_DATA && !whole) {  // a header past the first bytes
    bytes = read_whole_webp(*file);
    whole = true;
    status = WebPGetFeatures(data_of(bytes), bytes.size(), &features);
  }
  if (status != VP8_STATUS_OK)
    throw Error(ErrorKind::BadData,
                file->path() + ": cannot read the WebP header: " + status_text(status));
  if (features.has_animation) return nullptr;  // OpenImageIO's: frames as subimages
  return std::make_unique<WebpReader>(std::move(file), std::move(bytes), whole, features, shrink);
}

}  // namespace halo
