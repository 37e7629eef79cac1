// OpenEXR through OpenEXR's own C core (OpenEXRCore), chunk by chunk: its chunks are decoded
// and encoded on every core, a band of them at a time, so memory stays bounded and a render's
// codec time shrinks with the cores, and no process that only reads and writes EXR loads
// OpenImageIO and its ~260 libraries (0.2 s and 100 MB at start). What OpenEXRCore 3.1 cannot
// do, or OpenImageIO's reader presents its own way, is left to the OpenImageIO module
// (io/oiio.cpp): deep parts, DWAA/DWAB chunks (not in OpenEXRCore before 3.2), subsampled
// channels (luminance/chroma), ripmap and environment-map levels, B44 with float channels
// (OpenEXRCore 3.1 decodes them wrongly), and outputs that carry EXIF, XMP, IPTC or an ICC
// profile (OpenImageIO turns them into EXR attributes) or ask for DWA or B44 with floats.
// Uncompressed and ZIP chunks are packed, unpacked, deflated and inflated by halo itself
// (libdeflate); the other compressions go through OpenEXRCore's pipelines.
//
// The reader presents a file as OpenImageIO 2.4 does, so that the two agree sample for sample
// and name for name: channels in its order (by layer; R, G, B, A first within a layer, X, Y,
// Z first in a layer that has X), its names for the standard attributes (owner -> Copyright),
// its types spelled as it spells them ("float2", "matrix"). The writer maps them back.
#include <fcntl.h>
#include <openexr.h>
// Imath's conversions without its table, which lives in libImath: exact either way.
#define IMATH_HALF_NO_LOOKUP_TABLE
#include <Imath/half.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <libdeflate.h>
#include <spdlog/spdlog.h>

#include "core/concurrency.hpp"
#include "core/error.hpp"
#include "core/host_memory.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"
#include "io/codec.hpp"
#include "io/exr_piz.hpp"

namespace halo {

namespace {

// The codec's worker threads: one per core, and no more than this many (a chunk is 16-32
// rows; past 16 threads a 1080p band has too few chunks to share).
constexpr int kMostThreads = 16;
// A band of decoded or encoded rows, as float: what the threads share out, per band.
constexpr std::size_t kBandBytes = std::size_t(32) << 20;
// The inflated chunks a file's readers share (RecentChunks): the strips between the filtered
// channels' reader and the layers' at most, as a band's bytes bound a reader's own rows.
constexpr std::size_t kRecentBytes = std::size_t(32) << 20;

int default_threads() {
  return std::clamp(int(std::thread::hardware_concurrency()), 1, kMostThreads);
}

// A band's rows on huge pages where the kernel gives them for the asking (core/host_memory.hpp):
// a reader and a writer each hold one of up to 32 MiB for a file, and with -j 16 over 1080p
// frames on 4 KiB pages their faults were a large part of the run's system time. Left unset:
// decoding or the rows written fill every sample before it is read.
using BandSamples = std::vector<float, HostAllocator<float>>;
BandSamples band_samples() {
  return BandSamples(HostAllocator<float>(large_page_resource()));
}

// One set of threads for every EXR reader and writer of the process: with -j 16 and the layers
// read beside the filtered channels, a pool each would put 32 readers' threads on 16 cores.
// Never destroyed: readers kept for multi-part files may outlive static destruction.
Workers& codec_workers() {
  static Workers* workers = new Workers(default_threads());
  return *workers;
}

// What OpenEXRCore's callbacks reach: the file read or written, and the first error it reported
// (chunks decode on several threads; the first message is the cause).
struct Stream {
  std::string path;
  std::shared_ptr<const CheckedFile> input;
  int output = -1;
  std::mutex mutex;
  std::string error;

  void report(const char* text) {
    std::lock_guard lock(mutex);
    if (error.empty() && text) error = text;
  }
  std::string why(exr_result_t code) {
    std::lock_guard lock(mutex);
    return error.empty() ? exr_get_default_error_message(code) : error;
  }
};

// The stream of the OpenEXRCore call this thread is in: OpenEXRCore reports errors on the
// calling thread, and asking the context for its user data from the handler waits on the lock
// a writing context holds while it reports (a deadlock).
thread_local Stream* reporting = nullptr;

void on_error(exr_const_context_t, exr_result_t code, const char* message) {
  if (reporting) reporting->report(message ? message : exr_get_default_error_message(code));
}

int64_t read_at(exr_const_context_t context, void* user, void* buffer, uint64_t size,
                uint64_t offset, exr_stream_error_func_ptr_t error) {
  const long long got = static_cast<Stream*>(user)->input->pread_at(buffer, size, offset);
  if (got < 0)
    error(context, EXR_ERR_READ_IO, "cannot read %" PRIu64 " bytes at %" PRIu64 ": %s", size,
          offset, std::strerror(errno));
  return got;
}

int64_t size_of(exr_const_context_t, void* user) {
  return int64_t(static_cast<Stream*>(user)->input->size());
}

int64_t write_at(exr_const_context_t context, void* user, const void* buffer, uint64_t size,
                 uint64_t offset, exr_stream_error_func_ptr_t error) {
  const int fd = static_cast<Stream*>(user)->output;
  uint64_t done = 0;
  while (done < size) {
    const ssize_t n =
        ::pwrite(fd, static_cast<const char*>(buffer) + done, size - done, off_t(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error(context, EXR_ERR_WRITE_IO, "%s", std::strerror(n < 0 ? errno : ENOSPC));
      return -1;
    }
    done += uint64_t(n);
  }
  return int64_t(done);
}

// An OpenEXRCore context with its stream; the stream outlives it.
class Context {
 public:
  Context(std::unique_ptr<Stream> stream) : stream_(std::move(stream)) {}
  ~Context() {
    if (context_) exr_finish(&context_);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  exr_context_t get() const { return context_; }
  exr_context_t* put() { return &context_; }
  Stream& stream() const { return *stream_; }
  const std::string& path() const { return stream_->path; }

  // Calls OpenEXRCore (`call` returns its result): BadData (or `kind`) naming the file, what
  // failed and OpenEXR's reason, unless it succeeds.
  template <class Call>
  void call(Call&& call, const std::string& what, ErrorKind kind = ErrorKind::BadData) const {
    Stream* const outer = reporting;
    reporting = stream_.get();
    const exr_result_t rv = call();
    reporting = outer;
    if (rv != EXR_ERR_SUCCESS)
      throw Error(kind, path() + ": " + what + ": " + one_line(stream_->why(rv)));
  }
  // Finishes the context (an output's offset table is written here).
  void finish() {
    call([&] { return exr_finish(&context_); }, "write failed", ErrorKind::Io);
  }

 private:
  static std::string one_line(std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
  }
  std::unique_ptr<Stream> stream_;
  exr_context_t context_ = nullptr;
};

// An OpenEXRCore decode or encode pipeline's buffers, freed however the scope is left.
template <class Pipeline, exr_result_t (*destroy)(exr_const_context_t, Pipeline*)>
struct Released {
  exr_const_context_t context;
  Pipeline* pipeline;
  ~Released() { destroy(context, pipeline); }
};

// Points each channel of a chunk's decode or encode pipeline at its samples in `data`, laid
// out as an uncompressed chunk holds them (each row, each channel's samples in turn, as
// stored): OpenEXRCore 3.1 unpacks and packs without converting, and halo's unpack() and
// pack() convert for every compression alike.
void lay_out(exr_coding_channel_info_t* channels, int16_t count, uint8_t* data, std::size_t width) {
  std::size_t row_bytes = 0;
  for (int16_t i = 0; i < count; ++i)
    row_bytes += width * std::size_t(channels[i].bytes_per_element);
  std::size_t offset = 0;
  for (int16_t i = 0; i < count; ++i) {
    exr_coding_channel_info_t& ch = channels[i];
    ch.decode_to_ptr = data + offset;
    ch.user_pixel_stride = ch.bytes_per_element;
    ch.user_line_stride = int32_t(row_bytes);
    ch.user_bytes_per_element = ch.bytes_per_element;
    ch.user_data_type = ch.data_type;
    offset += width * std::size_t(ch.bytes_per_element);
  }
}

exr_context_initializer_t initializer(Stream& stream) {
  exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
  init.error_handler_fn = on_error;
  init.user_data = &stream;
  if (stream.input) {
    init.read_fn = read_at;
    init.size_fn = size_of;
  } else {
    init.write_fn = write_at;
  }
  return init;
}

// ---- Channels and attributes as OpenImageIO presents them ----

struct ExrChannel {
  std::string name;
  exr_pixel_type_t type;
  std::string layer, suffix;  // "ViewLayer.Combined", "R"
  int rank = 10000;           // place among the layer's well-known suffixes
};

// OpenImageIO's order within a layer: its well-known suffixes first, in this order; a layer
// with X and Y or Z (a position or normal) puts X, Y, Z after the colours instead of Y among
// them and Z after alpha.
int suffix_rank(const std::string& suffix, bool xyz) {
  static const std::vector<std::string> plain = {
      "r",     "red", "g",  "green", "b",  "blue", "y",  "real", "imag",  "a",
      "alpha", "ar",  "ra", "ag",    "ga", "ab",   "ba", "z",    "depth", "zback"};
  static const std::vector<std::string> spatial = {
      "r", "red",   "g",  "green", "b",  "blue", "x",  "y",  "z",     "real", "imag",
      "a", "alpha", "ar", "ra",    "ag", "ga",   "ab", "ba", "depth", "zback"};
  const auto& order = xyz ? spatial : plain;
  const auto at = std::find(order.begin(), order.end(), lower(suffix));
  return at == order.end() ? 10000 : int(at - order.begin());
}

std::vector<ExrChannel> ordered_channels(const exr_attr_chlist_t& list) {
  std::vector<ExrChannel> channels;
  for (int i = 0; i < list.num_channels; ++i) {
    ExrChannel c{list.entries[i].name.str, list.entries[i].pixel_type};
    const auto dot = c.name.rfind('.');
    c.layer = dot == std::string::npos ? "" : c.name.substr(0, dot);
    c.suffix = dot == std::string::npos ? c.name : c.name.substr(dot + 1);
    channels.push_back(std::move(c));
  }
  std::stable_sort(channels.begin(), channels.end(),
                   [](const ExrChannel& a, const ExrChannel& b) { return a.layer < b.layer; });
  for (auto begin = channels.begin(); begin != channels.end();) {
    auto end = std::find_if(begin, channels.end(),
                            [&](const ExrChannel& c) { return c.layer != begin->layer; });
    const auto has = [&](const char* s) {
      return std::any_of(begin, end, [&](const ExrChannel& c) { return lower(c.suffix) == s; });
    };
    const bool xyz = has("x") && (has("y") || has("z"));
    for (auto it = begin; it != end; ++it) it->rank = suffix_rank(it->suffix, xyz);
    std::sort(begin, end, [](const ExrChannel& a, const ExrChannel& b) {
      return a.rank != b.rank ? a.rank < b.rank : a.suffix < b.suffix;
    });
    begin = end;
  }
  return channels;
}

SampleType sample_type(exr_pixel_type_t type) {
  return type == EXR_PIXEL_HALF ? SampleType::half : SampleType::f32;  // UINT: read by value
}

// EXR's names for what OpenImageIO names its own way, both directions.
const std::vector<std::pair<std::string, std::string>>& renamed() {
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"owner", "Copyright"},
      {"comments", "ImageDescription"},
      {"capDate", "DateTime"},
      {"pixelAspectRatio", "PixelAspectRatio"},
      {"expTime", "ExposureTime"},
      {"aperture", "FNumber"},
      {"timeCode", "smpte:TimeCode"},
      {"keyCode", "smpte:KeyCode"},
      {"worldToCamera", "worldtocamera"},
      {"worldToScreen", "worldtoscreen"},
      {"worldToNDC", "worldtoNDC"}};
  return names;
}

// The header's layout and what OpenImageIO keeps as its own attributes (window, tiles,
// compression, line order, part type, resolution): not metadata. The part's name is, as
// OpenImageIO reads it, but a single-part output does not store it.
bool is_layout(const std::string& name) {
  static const std::vector<std::string> layout = {"channels",
                                                  "compression",
                                                  "dataWindow",
                                                  "displayWindow",
                                                  "lineOrder",
                                                  "type",
                                                  "chunkCount",
                                                  "tiles",
                                                  "version",
                                                  "xDensity",
                                                  "envmap",
                                                  "preview",
                                                  "idManifest",
                                                  "dwaCompressionLevel",
                                                  "maxSamplesPerPixel"};
  return std::find(layout.begin(), layout.end(), name) != layout.end();
}

// One attribute as OpenImageIO names and types it, or nothing for a type it leaves out.
std::optional<Attribute> attribute_of(const exr_attribute_t& a) {
  std::string name = a.name;
  for (const auto& [exr, oiio] : renamed())
    if (name == exr) name = oiio;
  const auto raw = [&](const char* type, const void* data, std::size_t n) {
    return Attribute{name, type, std::string(static_cast<const char*>(data), n)};
  };
  switch (a.type) {
    case EXR_ATTR_STRING:
      if (!a.string || a.string->length <= 0) return std::nullopt;
      return Attribute{name, "string", std::string(a.string->str, std::size_t(a.string->length))};
    case EXR_ATTR_INT:
      return raw("int", &a.i, sizeof a.i);
    case EXR_ATTR_FLOAT:
      return raw("float", &a.f, sizeof a.f);
    case EXR_ATTR_DOUBLE:
      return raw("double", &a.d, sizeof a.d);
    case EXR_ATTR_CHROMATICITIES:
      return raw("float[8]", a.chromaticities, 8 * sizeof(float));
    case EXR_ATTR_M33F:
      return raw("matrix33", a.m33f, 9 * sizeof(float));
    case EXR_ATTR_M33D:
      return raw("matrix33d", a.m33d, 9 * sizeof(double));
    case EXR_ATTR_M44F:
      return raw("matrix", a.m44f, 16 * sizeof(float));
    case EXR_ATTR_M44D:
      return raw("matrixd", a.m44d, 16 * sizeof(double));
    case EXR_ATTR_V2I:
      return raw("float2i", a.v2i, 2 * sizeof(int32_t));
    case EXR_ATTR_V2F:
      return raw("float2", a.v2f, 2 * sizeof(float));
    case EXR_ATTR_V2D:
      return raw("float2d", a.v2d, 2 * sizeof(double));
    case EXR_ATTR_V3I:
      return raw("vectori", a.v3i, 3 * sizeof(int32_t));
    case EXR_ATTR_V3F:
      return raw("vector", a.v3f, 3 * sizeof(float));
    case EXR_ATTR_V3D:
      return raw("vectord", a.v3d, 3 * sizeof(double));
    case EXR_ATTR_BOX2I:
      return raw("float2i[2]", a.box2i, 4 * sizeof(int32_t));
    case EXR_ATTR_BOX2F:
      return raw("float2[2]", a.box2f, 4 * sizeof(float));
    case EXR_ATTR_TIMECODE:
      return raw("timecode", a.timecode, 2 * sizeof(uint32_t));
    case EXR_ATTR_KEYCODE:
      return raw("keycode", a.keycode, 7 * sizeof(int32_t));
    case EXR_ATTR_RATIONAL:
      if (a.rational->denom >= (1u << 31)) return std::nullopt;
      {
        const int32_t r[2] = {a.rational->num, int32_t(a.rational->denom)};
        return raw("rational2i", r, sizeof r);
      }
    case EXR_ATTR_FLOAT_VECTOR:
      if (a.floatvector->length <= 0) return std::nullopt;
      return raw(fmt::format("float[{}]", a.floatvector->length).c_str(), a.floatvector->arr,
                 std::size_t(a.floatvector->length) * sizeof(float));
    default:  // string vectors, previews, opaque blobs: OpenImageIO's metadata leaves them out
      return std::nullopt;
  }
}

// OpenEXR's compressions by the names --compression and OpenImageIO give them.
const std::vector<std::pair<std::string, exr_compression_t>>& compressions() {
  static const std::vector<std::pair<std::string, exr_compression_t>> methods = {
      {"none", EXR_COMPRESSION_NONE}, {"rle", EXR_COMPRESSION_RLE},
      {"zips", EXR_COMPRESSION_ZIPS}, {"zip", EXR_COMPRESSION_ZIP},
      {"piz", EXR_COMPRESSION_PIZ},   {"pxr24", EXR_COMPRESSION_PXR24},
      {"b44", EXR_COMPRESSION_B44},   {"b44a", EXR_COMPRESSION_B44A},
      {"dwaa", EXR_COMPRESSION_DWAA}, {"dwab", EXR_COMPRESSION_DWAB}};
  return methods;
}

std::string compression_name(exr_compression_t c) {
  for (const auto& [name, method] : compressions())
    if (method == c) return name;
  return "";
}

// ---- Reading ----

// An open file, kept for the next part of a multi-part file: `compare -a` reads each part in
// turn, and opening it anew for each read every header again. The last few are kept; each
// holds its file, so no other file can come to have its address meanwhile.
class KeptFiles {
 public:
  static KeptFiles& instance() {
    static KeptFiles* kept = new KeptFiles;
    return *kept;
  }
  std::shared_ptr<Context> take(const CheckedFile* file) {
    std::lock_guard lock(mutex_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it)
      if ((*it)->stream().input.get() == file) {
        auto found = std::move(*it);
        kept_.erase(it);
        return found;
      }
    return nullptr;
  }
  void give_back(std::shared_ptr<Context> context) {
    std::lock_guard lock(mutex_);
    kept_.push_back(std::move(context));
    if (kept_.size() > 4) kept_.pop_front();
  }

 private:
  std::mutex mutex_;
  std::deque<std::shared_ptr<Context>> kept_;
};

// Chunks a file's readers inflated lately (their raw bytes): the layers carried beside the
// filtered channels read the same chunks a few strips behind the filtered channels' reader,
// and inflating them again was a sixth of a copy's time. Kept only while a file has two
// readers, the oldest let go past kRecentBytes (a 1080p 11-channel copy: every chunk found
// with 32 MiB, a third with 16, none with 8; 0.57 -> 0.47 s, 96 -> 118 MB).
class RecentChunks {
 public:
  struct Key {
    int part, level, x, y;
    auto operator<=>(const Key&) const = default;
  };
  using Raw = std::shared_ptr<const std::vector<uint8_t>>;

  // The file's, shared with its other readers (made for the first; with `make` false, null
  // when no reader of halo's has the file open).
  static std::shared_ptr<RecentChunks> of(const CheckedFile* file, bool make = true) {
    static std::mutex mutex;
    static std::map<const CheckedFile*, std::weak_ptr<RecentChunks>> files;
    std::lock_guard lock(mutex);
    std::erase_if(files, [](const auto& f) { return f.second.expired(); });
    if (!make) {
      const auto at = files.find(file);
      return at == files.end() ? nullptr : at->second.lock();
    }
    auto& weak = files[file];
    auto chunks = weak.lock();
    if (!chunks) weak = chunks = std::make_shared<RecentChunks>();
    return chunks;
  }
  Raw find(const Key& key) {
    std::lock_guard lock(mutex_);
    for (const auto& [k, raw] : kept_)
      if (k == key) return raw;
    return nullptr;
  }
  // What the run lets the readers keep besides (share_decoded).
  void share(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    shared_ = bytes;
  }
  void keep(const Key& key, Raw raw, std::size_t limit) {
    std::lock_guard lock(mutex_);
    bytes_ += raw->size();
    kept_.emplace_back(key, std::move(raw));
    while (bytes_ > std::max(limit, shared_) && !kept_.empty()) {
      bytes_ -= kept_.front().second->size();
      kept_.pop_front();
    }
  }

 private:
  std::mutex mutex_;
  std::deque<std::pair<Key, Raw>> kept_;
  std::size_t bytes_ = 0;
  std::size_t shared_ = 0;  // share(): past the readers' own limit
};

std::shared_ptr<Context> open_context(const std::shared_ptr<const CheckedFile>& file) {
  if (auto kept = KeptFiles::instance().take(file.get())) return kept;
  auto stream = std::make_unique<Stream>();
  stream->path = file->path();
  stream->input = file;
  auto context = std::make_shared<Context>(std::move(stream));
  const exr_context_initializer_t init = initializer(context->stream());
  context->call([&] { return exr_start_read(context->put(), file->path().c_str(), &init); },
                "cannot read");
  return context;
}

class ExrReader : public ImageReader {
 public:
  ExrReader(std::shared_ptr<Context> context, int part, int level, int parts,
            std::vector<ExrChannel> channels)
      : context_(std::move(context)), part_(part), level_(level), channels_(std::move(channels)) {
    exr_context_t c = context_->get();
    exr_attr_box2i_t data, display;
    context_->call([&] { return exr_get_data_window(c, part_, &data); }, "no data window");
    context_->call([&] { return exr_get_display_window(c, part_, &display); }, "no display window");
    exr_storage_t storage;
    context_->call([&] { return exr_get_storage(c, part_, &storage); }, "no storage type");
    tiled_ = storage == EXR_STORAGE_TILED;
    y0_ = data.min.y;
    int32_t w = data.max.x - data.min.x + 1, h = data.max.y - data.min.y + 1;
    if (tiled_) {
      context_->call([&] { return exr_get_level_sizes(c, part_, level_, level_, &w, &h); },
                     "no level size");
      context_->call(
          [&] { return exr_get_tile_sizes(c, part_, level_, level_, &tile_w_, &tile_h_); },
          "no tile size");
      chunk_rows_ = tile_h_;
    } else {
      context_->call([&] { return exr_get_scanlines_per_chunk(c, part_, &chunk_rows_); },
                     "no chunk size");
    }
    if (w <= 0 || h <= 0 || chunk_rows_ <= 0)
      throw Error(ErrorKind::BadData, context_->path() + ": image has no pixels");
    header_.width = w, header_.height = h;
    header_.format = "openexr";
    header_.subimages = parts;
    for (const ExrChannel& ch : channels_) {
      header_.channels.push_back(ch.name);
      header_.channel_types.push_back(sample_type(ch.type));
    }
    const bool all_half = std::all_of(channels_.begin(), channels_.end(), [](const ExrChannel& ch) {
      return ch.type == EXR_PIXEL_HALF;
    });
    header_.stored = all_half ? SampleType::half : SampleType::f32;
    header_.alpha = alpha_last();
    exr_compression_t compression;
    context_->call([&] { return exr_get_compression(c, part_, &compression); }, "no compression");
    header_.compression = compression_name(compression);
    compression_ = compression;
    recent_ = RecentChunks::of(context_->stream().input.get());
    const exr_attr_chlist_t* list = nullptr;
    context_->call([&] { return exr_get_channels(c, part_, &list); }, "no channels");
    for (int i = 0; i < list->num_channels; ++i) {
      const exr_attr_chlist_entry_t& e = list->entries[i];
      const auto at = std::find_if(channels_.begin(), channels_.end(),
                                   [&](const ExrChannel& ch) { return ch.name == e.name.str; });
      file_order_.push_back({std::size_t(at - channels_.begin()),
                             e.pixel_type == EXR_PIXEL_HALF ? std::size_t(2) : std::size_t(4),
                             e.pixel_type});
      piz_words_.push_back(int(file_order_.back().bytes / 2));
    }
    if (level_ == 0)
      header_.placement = {data.min.x,
                           data.min.y,
                           display.min.x,
                           display.min.y,
                           display.max.x - display.min.x + 1,
                           display.max.y - display.min.y + 1};
    else  // OpenImageIO: a smaller level is its own frame, at the data window's origin
      header_.placement = {data.min.x, data.min.y, data.min.x, data.min.y, w, h};
    if (tiled_) {
      header_.tile_width = tile_w_, header_.tile_height = tile_h_;
      tiles_x_ = int((int64_t(w) + tile_w_ - 1) / tile_w_);
    }
    header_.metadata = metadata(tiled_ && levels() > 1);
    band_chunks_ = band_chunks();
    // The band is float, whatever the file stores: its rows in stored samples for the check.
    header_.decode_rows =
        band_chunks_ * chunk_rows_ * int(sizeof(float) / stored_size(header_.stored));
  }

  ~ExrReader() override {
    if (header_.subimages > 1) KeptFiles::instance().give_back(std::move(context_));
  }

  void read_rows(int count, int first, int n, PixelType type, std::byte* out) override {
    const std::size_t row_samples = std::size_t(header_.width) * n;
    for (int i = 0; i < count; ++i) {
      const int y = next_ + i;
      if (first != band_first_ || n != band_n_ || y < band_y_ || y >= band_y_ + band_rows_)
        load_band(y - y % chunk_rows_, first, n);
      const float* row = band_.data() + std::size_t(y - band_y_) * row_samples;
      std::byte* dst = out + std::size_t(i) * row_samples * sample_size(type);
      if (type == PixelType::f32) {
        std::memcpy(dst, row, row_samples * sizeof(float));
        continue;
      }
      // 8 or 16-bit codes asked of float data: clamped, rounded, as OpenImageIO converts.
      const float top = type == PixelType::u8 ? 255.0f : 65535.0f;
      for (std::size_t s = 0; s < row_samples; ++s) {
        const float v = std::isnan(row[s]) ? 0.0f : std::clamp(row[s], 0.0f, 1.0f) * top + 0.5f;
        put_sample(dst, s, type, int(v), 1.0f);
      }
    }
    next_ += count;
  }

 private:
  int levels() const {
    int32_t lx = 1, ly = 1;
    exr_get_tile_levels(context_->get(), part_, &lx, &ly);
    return std::max(lx, ly);
  }

  // OpenImageIO marks the first channel named A or Alpha (in any layer) as alpha; halo's alpha
  // is a last channel so marked.
  bool alpha_last() const {
    for (std::size_t i = 0; i < channels_.size(); ++i) {
      const std::string s = lower(channels_[i].suffix);
      if (s == "a" || s == "alpha") return i + 1 == channels_.size();
    }
    return false;
  }

  Metadata metadata(bool mipmapped) const {
    Metadata m;
    int32_t count = 0;
    context_->call([&] { return exr_get_attribute_count(context_->get(), part_, &count); },
                   "no attributes");
    for (int32_t i = 0; i < count; ++i) {
      const exr_attribute_t* a = nullptr;
      context_->call(
          [&] {
            return exr_get_attribute_by_index(context_->get(), part_, EXR_ATTR_LIST_SORTED_ORDER, i,
                                              &a);
          },
          "cannot read an attribute");
      if (is_layout(a->name)) continue;
      if (auto attribute = attribute_of(*a)) m.attributes.push_back(std::move(*attribute));
    }
    if (mipmapped) m.set_text("textureformat", "Plain Texture");
    return m;
  }

  // Chunks per band: two for each thread, within kBandBytes (one at least).
  int band_chunks() const {
    const std::size_t chunk_bytes =
        std::size_t(header_.width) * channels_.size() * sizeof(float) * std::size_t(chunk_rows_);
    const int fit =
        int(std::max<std::size_t>(1, kBandBytes / std::max<std::size_t>(1, chunk_bytes)));
    const int chunk_count = int((int64_t(header_.height) + chunk_rows_ - 1) / chunk_rows_);
    return std::max(1, std::min({2 * default_threads(), fit, chunk_count}));
  }

  // Decodes the rows from `y` (a chunk's first row), channels [first, first + n), into the band:
  // its chunks (a scanline file's row blocks, or each row of tiles' tiles) on the workers.
  void load_band(int y, int first, int n) {
    band_y_ = y, band_first_ = first, band_n_ = n;
    band_rows_ = std::min(band_chunks_ * chunk_rows_, header_.height - y);
    band_.resize(std::size_t(band_rows_) * header_.width * n);
    struct Piece {
      int row, column;  // in the band: the chunk's first row and pixel
      int tile_x, tile_y;
    };
    std::vector<Piece> pieces;
    for (int r = 0; r < band_rows_; r += chunk_rows_) {
      if (!tiled_) {
        pieces.push_back({r, 0, 0, 0});
        continue;
      }
      for (int tx = 0; tx < tiles_x_; ++tx)
        pieces.push_back({r, tx * tile_w_, tx, (y + r) / tile_h_});
    }
    const auto decode_piece = [&](const Piece& p) {
      exr_chunk_info_t info;
      context_->call(
          [&] {
            return tiled_ ? exr_read_tile_chunk_info(context_->get(), part_, p.tile_x, p.tile_y,
                                                     level_, level_, &info)
                          : exr_read_scanline_chunk_info(context_->get(), part_, y0_ + y + p.row,
                                                         &info);
          },
          "cannot read pixels");
      decode(info, band_.data() + (std::size_t(p.row) * header_.width + p.column) * n, first, n);
    };
    if (pieces.size() == 1) return decode_piece(pieces[0]);
    const std::size_t tasks = std::min<std::size_t>(pieces.size(), std::size_t(default_threads()));
    codec_workers().run(tasks, [&](std::size_t t) {
      for (std::size_t i = t; i < pieces.size(); i += tasks) decode_piece(pieces[i]);
    });
  }

  // One chunk's channels [first, first + n) as float, into `to` (its first pixel in the band):
  // uncompressed, ZIP and PIZ chunks by halo (libdeflate inflates 2-3x faster than zlib;
  // io/exr_piz.hpp says why PIZ), the others through OpenEXRCore's pipeline.
  void decode(const exr_chunk_info_t& info, float* to, int first, int n) const {
    if (compression_ == EXR_COMPRESSION_NONE || compression_ == EXR_COMPRESSION_ZIP ||
        compression_ == EXR_COMPRESSION_ZIPS || compression_ == EXR_COMPRESSION_PIZ)
      return decode_own(info, to, first, n);
    decode_by_core(info, to, first, n);
  }

  // A chunk's bytes uncompressed, as its width, height and the channels make them; BadData
  // when the chunk says otherwise.
  std::size_t chunk_bytes(const exr_chunk_info_t& info) const {
    std::size_t pixel_bytes = 0;
    for (const auto& ch : file_order_) pixel_bytes += ch.bytes;
    const std::size_t bytes = std::size_t(info.width) * std::size_t(info.height) * pixel_bytes;
    if (info.unpacked_size != bytes) corrupt(info, "its size does not fit its rows");
    return bytes;
  }

  [[noreturn]] void corrupt(const exr_chunk_info_t& info, const std::string& why) const {
    throw Error(ErrorKind::BadData, fmt::format("{}: cannot read pixels: the chunk at row {}: {}",
                                                context_->path(), info.start_y, why));
  }

  void decode_own(const exr_chunk_info_t& info, float* to, int first, int n) const {
    const std::size_t unpacked = chunk_bytes(info);
    const RecentChunks::Key key{part_, level_, info.start_x, info.start_y};
    if (const RecentChunks::Raw kept = recent_.use_count() > 1 ? recent_->find(key) : nullptr) {
      if (kept->size() != unpacked) corrupt(info, "its size does not fit its rows");
      return unpack(kept->data(), info, to, first, n);
    }
    thread_local std::vector<uint8_t> packed, split;
    packed.resize(std::size_t(info.packed_size));
    context_->call([&] { return exr_read_chunk(context_->get(), part_, &info, packed.data()); },
                   "cannot read pixels");
    const uint8_t* data = packed.data();
    // A chunk whose compressed form did not shrink is stored as it is.
    if (info.packed_size != info.unpacked_size) {
      if (compression_ == EXR_COMPRESSION_NONE) corrupt(info, "its size does not fit its rows");
      auto raw = std::make_shared<std::vector<uint8_t>>(unpacked);
      if (compression_ == EXR_COMPRESSION_PIZ) {
        if (const std::string why = undo_piz(packed.data(), packed.size(), raw->data(), unpacked,
                                             piz_words_, int(info.width), int(info.height));
            !why.empty())
          corrupt(info, why);
        return use_raw(info, key, std::move(raw), to, first, n);
      }
      struct Decompressor {
        libdeflate_decompressor* d = libdeflate_alloc_decompressor();
        ~Decompressor() { libdeflate_free_decompressor(d); }
      };
      thread_local Decompressor inflater;
      split.resize(unpacked);
      std::size_t got = 0;
      if (!inflater.d ||
          libdeflate_zlib_decompress(inflater.d, packed.data(), packed.size(), split.data(),
                                     unpacked, &got) != LIBDEFLATE_SUCCESS ||
          got != unpacked)
        corrupt(info, "its ZIP data is damaged");
      // The running sum in a register: through memory it was three quarters of a decode.
      uint8_t sum = split[0];
      for (std::size_t i = 1; i < unpacked; ++i) split[i] = sum = uint8_t(sum + split[i] - 128);
      const std::size_t half = (unpacked + 1) / 2;
      for (std::size_t i = 0; i < half; ++i) (*raw)[2 * i] = split[i];
      for (std::size_t i = half; i < unpacked; ++i) (*raw)[2 * (i - half) + 1] = split[i];
      return use_raw(info, key, std::move(raw), to, first, n);
    }
    unpack(data, info, to, first, n);
  }

  // A chunk decoded: its channels into `to`, and its bytes kept for the file's other reader.
  void use_raw(const exr_chunk_info_t& info, const RecentChunks::Key& key,
               std::shared_ptr<std::vector<uint8_t>> raw, float* to, int first, int n) const {
    unpack(raw->data(), info, to, first, n);
    // Within an eighth of --max-memory, which the strip planning does not count it in.
    const std::size_t limit = std::min(kRecentBytes, resource_limits().max_memory / 8);
    if (recent_.use_count() > 1) recent_->keep(key, std::move(raw), limit);
  }

  // A chunk's raw bytes (each row, each channel in the file's (name) order, its samples
  // little-endian), channels [first, first + n) as float into `to`.
  void unpack(const uint8_t* data, const exr_chunk_info_t& info, float* to, int first,
              int n) const {
    const std::size_t w = std::size_t(info.width), h = std::size_t(info.height);
    static_assert(std::endian::native == std::endian::little, "EXR data is little-endian");
    const std::size_t row_stride = std::size_t(header_.width) * std::size_t(n);
    for (std::size_t y = 0; y < h; ++y)
      for (const auto& ch : file_order_) {
        const int k = int(ch.index);
        if (k >= first && k < first + n) {
          float* dst = to + y * row_stride + std::size_t(k - first);
          for (std::size_t x = 0; x < w; ++x, data += ch.bytes, dst += n) {
            if (ch.type == EXR_PIXEL_FLOAT) {
              std::memcpy(dst, data, 4);
            } else if (ch.type == EXR_PIXEL_HALF) {
              uint16_t v;
              std::memcpy(&v, data, 2);
              *dst = imath_half_to_float(v);
            } else {
              uint32_t v;
              std::memcpy(&v, data, 4);
              *dst = float(v);
            }
          }
        } else {
          data += w * ch.bytes;
        }
      }
  }

  void decode_by_core(const exr_chunk_info_t& info, float* to, int first, int n) const {
    exr_context_t c = context_->get();
    exr_decode_pipeline_t decoder = EXR_DECODE_PIPELINE_INITIALIZER;
    const Released<exr_decode_pipeline_t, exr_decoding_destroy> release{c, &decoder};
    // OpenEXR's message names the scanline and chunk (the first failure of any thread).
    const std::string where = "cannot read pixels";
    context_->call([&] { return exr_decoding_initialize(c, part_, &info, &decoder); }, where);
    // Every channel as stored, laid out as an uncompressed chunk holds it (OpenEXRCore 3.1
    // unpacks without converting); unpack() converts as it does for halo's own chunks.
    thread_local std::vector<uint8_t> raw;
    raw.resize(chunk_bytes(info));
    lay_out(decoder.channels, decoder.channel_count, raw.data(), std::size_t(info.width));
    context_->call([&] { return exr_decoding_choose_default_routines(c, part_, &decoder); }, where);
    context_->call([&] { return exr_decoding_run(c, part_, &decoder); }, where);
    unpack(raw.data(), info, to, first, n);
  }

  std::shared_ptr<Context> context_;
  int part_, level_;
  exr_compression_t compression_ = EXR_COMPRESSION_NONE;
  struct FileChannel {
    std::size_t index;  // in channels_ (OpenImageIO's order)
    std::size_t bytes;
    exr_pixel_type_t type;
  };
  std::vector<FileChannel> file_order_;  // the header's (name) order, as chunks hold them
  std::vector<int> piz_words_;           // file_order_'s 16-bit words a sample, for undo_piz
  std::shared_ptr<RecentChunks> recent_;
  std::vector<ExrChannel> channels_;
  bool tiled_ = false;
  int y0_ = 0;  // the data window's first row
  int32_t chunk_rows_ = 1, tile_w_ = 0, tile_h_ = 0;
  int tiles_x_ = 0;
  int band_chunks_ = 1;
  BandSamples band_ = band_samples();
  int band_y_ = 0, band_rows_ = 0, band_first_ = -1, band_n_ = 0;
  int next_ = 0;
};

// ---- Writing ----

// --compression for EXR: method[:level]; DWAA/DWAB leave the file to OpenImageIO's writer.
struct Compression {
  exr_compression_t method = EXR_COMPRESSION_ZIP;
  int level = -1;  // zip's deflate level; -1: OpenEXR's default
  bool native = true;
};

Compression parse_compression(const std::string& text) {
  Compression c;
  if (text.empty()) return c;
  const std::string method = text.substr(0, text.find(':'));
  const std::string level =
      text.find(':') == std::string::npos ? "" : text.substr(text.find(':') + 1);
  const auto& methods = compressions();
  const auto it = std::find_if(methods.begin(), methods.end(),
                               [&](const auto& m) { return m.first == method; });
  if (it == methods.end())
    throw Error(ErrorKind::Usage, "--compression '" + text +
                                      "' does not apply to .exr (have none, rle, zips, zip, "
                                      "piz, pxr24, b44, b44a, dwaa, dwab, with :level for zip "
                                      "and dwa)");
  c.method = it->second;
  c.native = c.method != EXR_COMPRESSION_DWAA && c.method != EXR_COMPRESSION_DWAB;
  if (!level.empty()) {
    const bool zip = c.method == EXR_COMPRESSION_ZIP || c.method == EXR_COMPRESSION_ZIPS;
    char* end = nullptr;
    const long v = std::strtol(level.c_str(), &end, 10);
    if (c.native && (!zip || *end || v < 0 || v > 9))
      throw Error(ErrorKind::Usage, "--compression '" + text +
                                        "': a level is zip's or zips' 0..9, or dwaa's and "
                                        "dwab's quality");
    c.level = int(v);
  }
  return c;
}

// The attribute stored under OpenEXR's name and type; false for a type EXR has no form of.
bool set_attribute(exr_context_t c, int part, const Attribute& a) {
  std::string name = a.name;
  for (const auto& [exr, oiio] : renamed())
    if (name == oiio) name = exr;
  const char* n = name.c_str();
  const std::string& v = a.value;
  const auto fits = [&](std::size_t bytes) { return v.size() == bytes; };
  const std::string& t = a.type;
  // The values are copied out of the string first: its bytes need not be aligned.
  const auto load = [&](auto& into) { std::memcpy(&into, v.data(), sizeof into); };
  if (t == "string") return exr_attr_set_string(c, part, n, v.c_str()) == EXR_ERR_SUCCESS;
  if (t == "int" && fits(4)) {
    int32_t x;
    load(x);
    return exr_attr_set_int(c, part, n, x) == EXR_ERR_SUCCESS;
  }
  if (t == "float" && fits(4)) {
    float x;
    load(x);
    return exr_attr_set_float(c, part, n, x) == EXR_ERR_SUCCESS;
  }
  if (t == "double" && fits(8)) {
    double x;
    load(x);
    return exr_attr_set_double(c, part, n, x) == EXR_ERR_SUCCESS;
  }
  if (t == "float[8]" && name == "chromaticities" && fits(32)) {
    exr_attr_chromaticities_t x;
    load(x);
    return exr_attr_set_chromaticities(c, part, n, &x) == EXR_ERR_SUCCESS;
  }
  if (t.starts_with("float[") && v.size() % 4 == 0 && !v.empty()) {
    std::vector<float> x(v.size() / 4);
    std::memcpy(x.data(), v.data(), v.size());
    return exr_attr_set_float_vector(c, part, n, int32_t(x.size()), x.data()) == EXR_ERR_SUCCESS;
  }
#define HALO_EXR_SET(type_name, exr_type, setter)     \
  if (t == type_name && fits(sizeof(exr_type))) {     \
    exr_type x;                                       \
    load(x);                                          \
    return setter(c, part, n, &x) == EXR_ERR_SUCCESS; \
  }
  HALO_EXR_SET("matrix33", exr_attr_m33f_t, exr_attr_set_m33f)
  HALO_EXR_SET("matrix33d", exr_attr_m33d_t, exr_attr_set_m33d)
  HALO_EXR_SET("matrix", exr_attr_m44f_t, exr_attr_set_m44f)
  HALO_EXR_SET("matrixd", exr_attr_m44d_t, exr_attr_set_m44d)
  HALO_EXR_SET("float2i", exr_attr_v2i_t, exr_attr_set_v2i)
  HALO_EXR_SET("float2", exr_attr_v2f_t, exr_attr_set_v2f)
  HALO_EXR_SET("float2d", exr_attr_v2d_t, exr_attr_set_v2d)
  HALO_EXR_SET("vectori", exr_attr_v3i_t, exr_attr_set_v3i)
  HALO_EXR_SET("vector", exr_attr_v3f_t, exr_attr_set_v3f)
  HALO_EXR_SET("vectord", exr_attr_v3d_t, exr_attr_set_v3d)
  HALO_EXR_SET("float2i[2]", exr_attr_box2i_t, exr_attr_set_box2i)
  HALO_EXR_SET("float2[2]", exr_attr_box2f_t, exr_attr_set_box2f)
  HALO_EXR_SET("timecode", exr_attr_timecode_t, exr_attr_set_timecode)
  HALO_EXR_SET("keycode", exr_attr_keycode_t, exr_attr_set_keycode)
#undef HALO_EXR_SET
  if (t == "rational2i" && fits(8)) {
    int32_t r[2];
    load(r);
    if (r[1] < 0) return false;
    const exr_attr_rational_t x = {r[0], uint32_t(r[1])};
    return exr_attr_set_rational(c, part, n, &x) == EXR_ERR_SUCCESS;
  }
  return false;
}

class ExrWriter : public ImageWriter {
 public:
  ExrWriter(const std::string& target, const std::string& file, const OutputHeader& h,
            const Compression& compression, int threads)
      : target_(target), header_(h), threads_(threads) {
    auto stream = std::make_unique<Stream>();
    stream->path = target;
    stream->output = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (stream->output < 0)
      throw Error(ErrorKind::CantCreate, target + ": cannot create: " + std::strerror(errno));
    context_ = std::make_unique<Context>(std::move(stream));
    const exr_context_initializer_t init = initializer(context_->stream());
    create(file, init, compression);
  }

  ~ExrWriter() override {
    context_.reset();
    if (fd() >= 0) ::close(fd());
  }

  void write_rows(int count, const std::byte* rows) override {
    const std::size_t row_bytes = std::size_t(header_.width) * header_.channels * sizeof(float);
    for (int r = 0; r < count; ++r) {
      std::memcpy(band_.data() + std::size_t(band_rows_) * row_bytes / sizeof(float),
                  rows + std::size_t(r) * row_bytes, row_bytes);
      if (++band_rows_ == band_capacity_) flush();
    }
  }

  void finish() override {
    if (band_rows_ > 0) flush();
    if (written_ != header_.height)
      throw Error(ErrorKind::Internal,
                  fmt::format("{}: {} of {} rows written", target_, written_, header_.height));
    context_->finish();
    const int output = fd();
    context_->stream().output = -1;
    if (::close(output) != 0)
      throw Error(ErrorKind::Io, target_ + ": write failed: " + std::strerror(errno));
  }

 private:
  int fd() const { return context_ ? context_->stream().output : -1; }

  void create(const std::string& file, const exr_context_initializer_t& init,
              const Compression& compression) {
    Context& ctx = *context_;
    const auto call = [&](auto&& f, const char* what) { ctx.call(f, what, ErrorKind::CantCreate); };
    call([&] { return exr_start_write(ctx.put(), file.c_str(), EXR_WRITE_FILE_DIRECTLY, &init); },
         "cannot create");
    exr_context_t c = ctx.get();
    // Names over 31 characters (Blender's cycles.ViewLayer.synchronization_time), as OpenEXR's
    // C++ writer allows them (the file's header says so).
    call([&] { return exr_set_longname_support(c, 1); }, "cannot allow long names");
    call([&] { return exr_add_part(c, nullptr, EXR_STORAGE_SCANLINE, &part_); },
         "cannot add its image");
    const Placement& p = header_.placement;
    const bool placed = p.placed(header_.width, header_.height);
    const auto box = [](int x, int y, int w, int h) {
      exr_attr_box2i_t b;  // its corners are unions: set by name
      b.min.x = x, b.min.y = y, b.max.x = x + w - 1, b.max.y = y + h - 1;
      return b;
    };
    const exr_attr_box2i_t data = box(p.x, p.y, header_.width, header_.height);
    const exr_attr_box2i_t display = placed && p.full_width > 0 && p.full_height > 0
                                         ? box(p.full_x, p.full_y, p.full_width, p.full_height)
                                         : data;
    exr_attr_v2f_t centre;
    centre.x = 0, centre.y = 0;
    call(
        [&] {
          return exr_initialize_required_attr(c, part_, &display, &data, 1.0f, &centre, 1.0f,
                                              EXR_LINEORDER_INCREASING_Y, compression.method);
        },
        "cannot set its header");
    if (compression.level >= 0)
      call([&] { return exr_set_zip_compression_level(c, part_, compression.level); },
           "cannot set zip's level");
    const std::vector<std::string> names = int(header_.channel_names.size()) == header_.channels
                                               ? header_.channel_names
                                               : standard_names(header_.channels, header_.alpha);
    for (int i = 0; i < header_.channels; ++i) {
      const SampleType type = header_.channel_types.size() == std::size_t(header_.channels)
                                  ? header_.channel_types[std::size_t(i)]
                                  : header_.type;
      const exr_pixel_type_t stored = type == SampleType::f32 ? EXR_PIXEL_FLOAT : EXR_PIXEL_HALF;
      if (exr_add_channel(c, part_, names[std::size_t(i)].c_str(), stored,
                          EXR_PERCEPTUALLY_LOGARITHMIC, 1, 1) != EXR_ERR_SUCCESS)
        throw Error(ErrorKind::Usage, target_ + ": cannot store channel '" + names[std::size_t(i)] +
                                          "' (a name used twice?)");
    }
    names_ = names;
    std::vector<std::string> dropped;
    for (const Attribute& a : header_.metadata.attributes)
      if (!is_layout(a.name) && a.name != "name" && !set_attribute(c, part_, a))
        dropped.push_back(a.name);
    if (!dropped.empty())
      spdlog::warn("{}: attributes {} have no form in an EXR header and are left out", target_,
                   fmt::join(dropped, ", "));
    call([&] { return exr_write_header(c); }, "cannot write its header");
    call([&] { return exr_get_scanlines_per_chunk(c, part_, &chunk_rows_); }, "no chunk size");
    method_ = compression.method;
    call([&] { return exr_get_zip_compression_level(c, part_, &zip_level_); }, "no zip level");
    if (zip_level_ < 0) exr_get_default_zip_compression_level(&zip_level_);
    if (zip_level_ < 0) zip_level_ = 6;  // zlib's default, which OpenEXR's -1 stands for
    zip_level_ = std::min(zip_level_, 9);
    const exr_attr_chlist_t* list = nullptr;
    call([&] { return exr_get_channels(c, part_, &list); }, "no channels");
    for (int i = 0; i < list->num_channels; ++i) {
      const auto at = std::find(names_.begin(), names_.end(), list->entries[i].name.str);
      const std::size_t k = std::size_t(at - names_.begin());
      stored_order_.push_back({k, list->entries[i].pixel_type == EXR_PIXEL_HALF});
    }
    const std::size_t chunk_bytes =
        std::size_t(header_.width) * header_.channels * sizeof(float) * std::size_t(chunk_rows_);
    const int fit =
        int(std::max<std::size_t>(1, kBandBytes / std::max<std::size_t>(1, chunk_bytes)));
    band_capacity_ = std::min(std::max(1, std::min(2 * threads_, fit)) * chunk_rows_,
                              std::max(chunk_rows_, header_.height));
    band_.resize(std::size_t(band_capacity_) * header_.width * header_.channels);
  }

  // Encodes the band's chunks on the workers, then writes them in order.
  void flush() {
    const int chunks = (band_rows_ + chunk_rows_ - 1) / chunk_rows_;
    std::vector<std::vector<uint8_t>> encoded(static_cast<std::size_t>(chunks));
    const auto encode_chunk = [&](int k) {
      encoded[std::size_t(k)] =
          encode(written_ + k * chunk_rows_,
                 band_.data() + std::size_t(k) * chunk_rows_ * header_.width * header_.channels);
    };
    if (chunks == 1 || threads_ == 1) {
      for (int k = 0; k < chunks; ++k) encode_chunk(k);
    } else {
      codec_workers().run(std::size_t(chunks), [&](std::size_t k) { encode_chunk(int(k)); });
    }
    for (int k = 0; k < chunks; ++k) {
      const auto& bytes = encoded[std::size_t(k)];
      context_->call(
          [&] {
            return exr_write_scanline_chunk(context_->get(), part_,
                                            header_.placement.y + written_ + k * chunk_rows_,
                                            bytes.data(), bytes.size());
          },
          "write failed", ErrorKind::Io);
    }
    written_ += band_rows_;
    band_rows_ = 0;
  }

  // One chunk from row `y` of the image (rows from `rows`), compressed as the file says:
  // uncompressed and ZIP chunks by halo (libdeflate compresses 2-3x faster than zlib, and
  // OpenEXRCore packs under its context's lock, one chunk at a time), the others by OpenEXRCore.
  std::vector<uint8_t> encode(int y, const float* rows) const {
    const int count = std::min(chunk_rows_, header_.height - y);
    switch (method_) {
      case EXR_COMPRESSION_NONE:
        return pack(rows, count);
      case EXR_COMPRESSION_ZIP:
      case EXR_COMPRESSION_ZIPS:
        return zip(pack(rows, count));
      default:
        return encode_by_core(y, rows);
    }
  }

  // The chunk's data as the format lays it out: each row, each channel in the header's (name)
  // order, its samples little-endian in the channel's type (half rounded to nearest even, as
  // Imath rounds).
  std::vector<uint8_t> pack(const float* rows, int count) const {
    static_assert(std::endian::native == std::endian::little, "EXR data is little-endian");
    const std::size_t w = std::size_t(header_.width), channels = std::size_t(header_.channels);
    std::size_t pixel_bytes = 0;
    for (const auto& ch : stored_order_) pixel_bytes += ch.half ? 2 : 4;
    std::vector<uint8_t> out(std::size_t(count) * w * pixel_bytes);
    uint8_t* to = out.data();
    for (int r = 0; r < count; ++r) {
      const float* row = rows + std::size_t(r) * w * channels;
      for (const auto& ch : stored_order_) {
        const float* v = row + ch.index;
        if (ch.half) {
          for (std::size_t x = 0; x < w; ++x, to += 2) {
            const uint16_t h = imath_float_to_half(v[x * channels]);
            std::memcpy(to, &h, 2);
          }
        } else {
          for (std::size_t x = 0; x < w; ++x, to += 4) std::memcpy(to, &v[x * channels], 4);
        }
      }
    }
    return out;
  }

  // EXR's ZIP: the bytes split into even and odd halves, each byte then stored as its
  // difference from the one before (+128), then zlib's format; stored as they are when that
  // is no smaller (the format's rule; readers tell by the size).
  std::vector<uint8_t> zip(std::vector<uint8_t> packed) const {
    const std::size_t n = packed.size();
    thread_local std::vector<uint8_t> interleaved, split;
    interleaved.resize(n);
    split.resize(n);
    const std::size_t half = (n + 1) / 2;
    for (std::size_t i = 0; i < half; ++i) interleaved[i] = packed[2 * i];
    for (std::size_t i = half; i < n; ++i) interleaved[i] = packed[2 * (i - half) + 1];
    const uint8_t* from = interleaved.data();
    uint8_t* to = split.data();
    to[0] = from[0];
    for (std::size_t i = 1; i < n; ++i) to[i] = uint8_t(from[i] - from[i - 1] + 128);
    struct Compressor {
      libdeflate_compressor* c = nullptr;
      int level = -1;
      ~Compressor() { libdeflate_free_compressor(c); }
    };
    thread_local Compressor compressor;
    if (compressor.level != zip_level_) {
      libdeflate_free_compressor(compressor.c);
      compressor.c = libdeflate_alloc_compressor(zip_level_);
      compressor.level = zip_level_;
    }
    if (!compressor.c) throw Error(ErrorKind::Internal, "libdeflate: no compressor");
    std::vector<uint8_t> out(libdeflate_zlib_compress_bound(compressor.c, n));
    const std::size_t m =
        libdeflate_zlib_compress(compressor.c, split.data(), n, out.data(), out.size());
    if (m == 0 || m >= n) return packed;
    out.resize(m);
    return out;
  }

  std::vector<uint8_t> encode_by_core(int y, const float* rows) const {
    exr_context_t c = context_->get();
    exr_chunk_info_t info;
    const std::string where = fmt::format("cannot encode the rows from {}", y);
    context_->call(
        [&] { return exr_write_scanline_chunk_info(c, part_, header_.placement.y + y, &info); },
        where, ErrorKind::Io);
    exr_encode_pipeline_t encoder = EXR_ENCODE_PIPELINE_INITIALIZER;
    const Released<exr_encode_pipeline_t, exr_encoding_destroy> release{c, &encoder};
    context_->call([&] { return exr_encoding_initialize(c, part_, &info, &encoder); }, where,
                   ErrorKind::Io);
    // The chunk packed by halo (OpenEXRCore 3.1 packs without converting), each channel's
    // rows read from it as an uncompressed chunk lays them out.
    const std::vector<uint8_t> packed = pack(rows, info.height);
    // Read only: the pipeline's pointer is a union of decode_to_ptr and encode_from_ptr.
    lay_out(encoder.channels, encoder.channel_count, const_cast<uint8_t*>(packed.data()),
            std::size_t(header_.width));
    context_->call([&] { return exr_encoding_choose_default_routines(c, part_, &encoder); }, where,
                   ErrorKind::Io);
    // The chunk is kept, not written: chunks are encoded on several threads and written in order.
    std::vector<uint8_t> bytes;
    encoder.encoding_user_data = &bytes;
    encoder.yield_until_ready_fn = [](exr_encode_pipeline_t*) -> exr_result_t {
      return EXR_ERR_SUCCESS;
    };
    encoder.write_fn = [](exr_encode_pipeline_t* e) -> exr_result_t {
      auto* out = static_cast<std::vector<uint8_t>*>(e->encoding_user_data);
      const auto* data = static_cast<const uint8_t*>(e->compressed_buffer);
      out->assign(data, data + e->compressed_bytes);
      return EXR_ERR_SUCCESS;
    };
    context_->call([&] { return exr_encoding_run(c, part_, &encoder); }, where, ErrorKind::Io);
    return bytes;
  }

  std::string target_;
  OutputHeader header_;
  int threads_;
  std::unique_ptr<Context> context_;
  int part_ = 0;
  int32_t chunk_rows_ = 1;
  std::vector<std::string> names_;
  struct StoredChannel {
    std::size_t index;  // in the interleaved rows
    bool half;
  };
  std::vector<StoredChannel> stored_order_;  // the header's (sorted) order
  exr_compression_t method_ = EXR_COMPRESSION_ZIP;
  int zip_level_ = 4;
  BandSamples band_ = band_samples();
  int band_rows_ = 0, band_capacity_ = 1, written_ = 0;
};
// Whether the native reader reads part p (see the top of this file); its MIP levels if so
// (ripmaps and environment maps are the module's, as are the others).
std::optional<int> native_levels(const Context& context, int p) {
  exr_context_t c = context.get();
  exr_storage_t storage;
  context.call([&] { return exr_get_storage(c, p, &storage); }, "no storage type");
  if (storage != EXR_STORAGE_SCANLINE && storage != EXR_STORAGE_TILED) return std::nullopt;
  exr_compression_t compression;
  context.call([&] { return exr_get_compression(c, p, &compression); }, "no compression");
  if (compression == EXR_COMPRESSION_DWAA || compression == EXR_COMPRESSION_DWAB)
    return std::nullopt;
  const exr_attr_chlist_t* list = nullptr;
  context.call([&] { return exr_get_channels(c, p, &list); }, "no channels");
  if (!list || list->num_channels <= 0)
    throw Error(ErrorKind::BadData, context.path() + ": has no channels");
  for (int i = 0; i < list->num_channels; ++i) {
    const exr_attr_chlist_entry_t& e = list->entries[i];
    if (e.x_sampling != 1 || e.y_sampling != 1) return std::nullopt;
    // OpenEXRCore 3.1 decodes B44's float and uint channels (stored as they are) wrongly.
    if ((compression == EXR_COMPRESSION_B44 || compression == EXR_COMPRESSION_B44A) &&
        e.pixel_type != EXR_PIXEL_HALF)
      return std::nullopt;
  }
  const exr_attribute_t* envmap = nullptr;
  if (exr_get_attribute_by_name(c, p, "envmap", &envmap) == EXR_ERR_SUCCESS) return std::nullopt;
  if (storage == EXR_STORAGE_SCANLINE) return 1;
  uint32_t tile_w, tile_h;
  exr_tile_level_mode_t mode;
  exr_tile_round_mode_t round;
  context.call([&] { return exr_get_tile_descriptor(c, p, &tile_w, &tile_h, &mode, &round); },
               "no tile description");
  if (mode == EXR_TILE_RIPMAP_LEVELS) return std::nullopt;
  int32_t levels_x = 1, levels_y = 1;
  context.call([&] { return exr_get_tile_levels(c, p, &levels_x, &levels_y); }, "no levels");
  return std::max(1, levels_x);
}

}  // namespace

std::vector<int> exr_mip_levels(const std::shared_ptr<const CheckedFile>& file) {
  std::shared_ptr<Context> context = open_context(file);
  int parts = 0;
  context->call([&] { return exr_get_count(context->get(), &parts); }, "no parts");
  std::vector<int> levels;
  for (int p = 0; p < parts; ++p) {
    const std::optional<int> n = native_levels(*context, p);
    if (!n) {  // the module counts them all, as it reads that part
      levels.clear();
      break;
    }
    levels.push_back(*n);
  }
  if (parts > 1) KeptFiles::instance().give_back(std::move(context));
  return levels;
}

std::unique_ptr<ImageReader> open_exr(std::shared_ptr<const CheckedFile> file, ImagePart part) {
  std::shared_ptr<Context> context = open_context(file);
  exr_context_t c = context->get();
  int parts = 0;
  context->call([&] { return exr_get_count(c, &parts); }, "no parts");
  const auto no_such_part = [&] {
    return Error(ErrorKind::BadData,
                 fmt::format("{}: has no subimage {} MIP level {} (it has {} subimages)",
                             file->path(), part.subimage, part.miplevel, parts));
  };
  if (part.subimage < 0 || part.subimage >= parts || part.miplevel < 0) throw no_such_part();
  const std::optional<int> levels = native_levels(*context, part.subimage);
  if (!levels) {  // the OpenImageIO module's
    if (parts > 1) KeptFiles::instance().give_back(std::move(context));
    return nullptr;
  }
  if (part.miplevel >= *levels) throw no_such_part();
  const exr_attr_chlist_t* list = nullptr;
  context->call([&] { return exr_get_channels(c, part.subimage, &list); }, "no channels");
  std::vector<ExrChannel> channels = ordered_channels(*list);
  return std::make_unique<ExrReader>(std::move(context), part.subimage, part.miplevel, parts,
                                     std::move(channels));
}

bool share_decoded(const CheckedFile& file, std::size_t bytes) {
  const auto chunks = RecentChunks::of(&file, false);
  if (chunks) chunks->share(bytes);
  return chunks != nullptr;
}

bool is_exr_compression(const std::string& text) {
  const std::string method = text.substr(0, text.find(':'));
  const auto& methods = compressions();
  return std::any_of(methods.begin(), methods.end(),
                     [&](const auto& m) { return m.first == method; });
}

std::unique_ptr<ImageWriter> create_exr(const std::string& target, const std::string& file,
                                        const OutputHeader& header, const WriteOptions& options) {
  if (options.quality > 0) throw Error(ErrorKind::Usage, "--quality applies to JPEG, not .exr");
  const Compression compression = parse_compression(options.compression);
  const Metadata& m = header.metadata;
  if (!compression.native || !m.exif.empty() || !m.xmp.empty() || !m.iptc.empty() || !m.icc.empty())
    return nullptr;
  // OpenEXRCore 3.1 mishandles B44's float channels (stored as they are): OpenEXR's C++ writer.
  const bool b44 =
      compression.method == EXR_COMPRESSION_B44 || compression.method == EXR_COMPRESSION_B44A;
  const auto& types = header.channel_types;
  const bool floats = types.size() == std::size_t(header.channels)
                          ? std::find(types.begin(), types.end(), SampleType::f32) != types.end()
                          : header.type == SampleType::f32;
  if (b44 && floats) return nullptr;
  const int threads = options.threads > 0 ? options.threads : default_threads();
  return std::make_unique<ExrWriter>(target, file, header, compression, threads);
}

}  // namespace halo
