// PNG: decoding row by row through libpng, and halo's own encoder, which filters and
// compresses blocks of rows on all cores (pigz's method) with libdeflate. Each block is a raw
// deflate stream of its own; all but the last are rewritten to end as a sync flush does
// (io/deflate_join.hpp), so the blocks concatenate into one zlib stream, byte for byte as
// valid as a single-threaded one; the Adler-32 checksum is combined from the blocks'.
#include <libdeflate.h>
#include <png.h>
#include <spdlog/spdlog.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "core/concurrency.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"
#include "io/codec.hpp"
#include "io/deflate_join.hpp"

namespace halo {

namespace {

// ---------------------------------------------------------------------------------------------
// Reading

struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, CloseFile>;

// libpng reports errors through a callback that must not return: it longjmps back to the call
// that failed with the message kept here. Warnings (a known-bad sRGB profile, ...) go to the
// debug log, never raw to stderr. Its memory is counted here too (png_counted_malloc).
struct PngErrors {
  std::string message;
  std::size_t live = 0;     // bytes libpng holds
  std::size_t refused = 0;  // allocations refused by the bound
};

// Compressed text and profile chunks (zTXt, iTXt, iCCP) inflate to many times their size in
// the file (a 159 KB PNG held 140 MB of text), so what libpng holds is bounded: past the bound
// an allocation fails, libpng skips that chunk (a benign error) and reading goes on. Rows and
// zlib's window take well under 1 MiB.
constexpr std::size_t kPngMemory = std::size_t(32) << 20;
constexpr std::size_t kBlockHeader = 16;  // keeps the block's size, and malloc's alignment

png_voidp png_counted_malloc(png_structp png, png_alloc_size_t size) {
  auto* errors = static_cast<PngErrors*>(png_get_mem_ptr(png));
  if (size > kPngMemory - errors->live) {
    ++errors->refused;
    return nullptr;
  }
  auto* block = static_cast<char*>(std::malloc(size + kBlockHeader));
  if (!block) return nullptr;
  std::memcpy(block, &size, sizeof size);
  errors->live += size;
  return block + kBlockHeader;
}

void png_counted_free(png_structp png, png_voidp memory) {
  if (!memory) return;
  char* block = static_cast<char*>(memory) - kBlockHeader;
  png_alloc_size_t size = 0;
  std::memcpy(&size, block, sizeof size);
  static_cast<PngErrors*>(png_get_mem_ptr(png))->live -= size;
  std::free(block);
}

void on_png_error(png_structp png, png_const_charp text) {
  static_cast<PngErrors*>(png_get_error_ptr(png))->message = text;
  png_longjmp(png, 1);
}

void on_png_warning(png_structp png, png_const_charp text) {
  spdlog::debug("libpng: {}", text);
  // libpng keeps at most 1000 ancillary chunks (its chunk cache) and skips the rest.
  if (std::strstr(text, "chunk cache")) ++static_cast<PngErrors*>(png_get_error_ptr(png))->refused;
}

// libpng's own reader says "Read Error" for a file that ends early.
void read_png_bytes(png_structp png, png_bytep data, png_size_t length) {
  auto* file = static_cast<std::FILE*>(png_get_io_ptr(png));
  if (std::fread(data, 1, length, file) != length)
    png_error(png, std::ferror(file) ? "read error" : "the file ends early (truncated)");
}

// The libpng objects, destroyed with their owner even when its constructor throws.
struct PngRead {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngRead() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

// Rows as libpng decodes them, one at a time (png_read_row): palettes become RGB, grey below
// 8 bits 8-bit, tRNS an alpha channel, 16-bit samples host order. Interlaced files, whose rows
// come in seven passes, are decoded whole first.
class PngReader : public ImageReader {
 public:
  explicit PngReader(std::shared_ptr<const CheckedFile> file)
      : path_(file->path()), file_(open_stream(file)) {
    const std::string& path = path_;
    read_.png =
        png_create_read_struct_2(PNG_LIBPNG_VER_STRING, &errors_, on_png_error, on_png_warning,
                                 &errors_, png_counted_malloc, png_counted_free);
    if (!read_.png || !(read_.info = png_create_info_struct(read_.png)))
      throw Error(ErrorKind::Internal, path + ": out of memory");
    png_structp png = read_.png;
    png_infop info = read_.info;
    if (setjmp(png_jmpbuf(png))) fail("cannot read");
    png_set_read_fn(png, file_.get(), read_png_bytes);
    // zlib's Adler-32 over the inflated rows took a fifth of decoding (a 16384x16384 RGB8
    // PNG: 1.31 -> 1.02 s); every chunk's CRC-32 still catches damaged data.
    png_set_option(png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
    png_read_info(png, info);
    if (errors_.refused > 0 && resource_limits().strict)
      throw Error(ErrorKind::BadData,
                  fmt::format("{}: text or profile chunks past the limits for PNG metadata ({} "
                              "MiB, 1000 chunks) (--strict refuses to drop them)",
                              path, kPngMemory >> 20));
    if (errors_.refused > 0)
      warn_once(
          fmt::format("{}: text or profile chunks past the limits for PNG metadata ({} MiB, "
                      "1000 chunks) dropped",
                      path, kPngMemory >> 20));
    const int colour = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    if (colour == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (colour == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (depth == 16 && std::endian::native == std::endian::little) png_set_swap(png);
    const int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    const int channels = png_get_channels(png, info);
    depth_ = png_get_bit_depth(png, info) == 16 ? 16 : 8;
    header_.format = "png";
    header_.width = int(png_get_image_width(png, info));
    header_.height = int(png_get_image_height(png, info));
    header_.channels = channels == 1   ? std::vector<std::string>{"Y"}
                       : channels == 2 ? std::vector<std::string>{"Y", "A"}
                       : channels == 3 ? std::vector<std::string>{"R", "G", "B"}
                                       : std::vector<std::string>{"R", "G", "B", "A"};
    header_.alpha = channels == 2 || channels == 4;
    header_.stored = depth_ == 16 ? SampleType::u16 : SampleType::u8;
    header_.metadata = read_metadata(png, info);
    check_image_size(path, header_.width, header_.height);
    row_.resize(row_bytes());
    if (passes > 1) {
      check_memory(path, row_bytes() * header_.height, "an interlaced PNG, decoded whole,");
      whole_.resize(row_bytes() * header_.height);
      // A member, not a local: libpng's errors longjmp back to the setjmp above, past the
      // destructors of locals (fuzz_image found the leak).
      pass_rows_.resize(header_.height);
      for (int y = 0; y < header_.height; ++y)
        pass_rows_[y] = reinterpret_cast<png_bytep>(whole_.data()) + row_bytes() * y;
      png_read_image(png, pass_rows_.data());
      header_.whole_image = true;
    }
  }

  // Text, EXIF, XMP and the ICC profile of the chunks before the image data (text after it
  // is not seen by a reader that streams rows).
  static Metadata read_metadata(png_structp png, png_infop info) {
    Metadata m;
    png_textp text = nullptr;
    const int count = png_get_text(png, info, &text, nullptr);
    for (int i = 0; i < count; ++i) {
      const std::size_t length = text[i].compression == PNG_ITXT_COMPRESSION_NONE ||
                                         text[i].compression == PNG_ITXT_COMPRESSION_zTXt
                                     ? text[i].itxt_length
                                     : text[i].text_length;
      std::string value(text[i].text ? text[i].text : "", text[i].text ? length : 0);
      if (std::string(text[i].key) == "XML:com.adobe.xmp")
        m.xmp = std::move(value);
      else
        m.set_text(name_from_png_keyword(text[i].key), value);
    }
    png_uint_32 exif_size = 0;
    png_bytep exif = nullptr;
    if (png_get_eXIf_1(png, info, &exif_size, &exif) && exif)
      m.exif.assign(reinterpret_cast<const char*>(exif), exif_size);
    png_charp name = nullptr;
    int compression = 0;
    png_bytep profile = nullptr;
    png_uint_32 profile_size = 0;
    if (png_get_iCCP(png, info, &name, &compression, &profile, &profile_size) && profile)
      m.icc.assign(reinterpret_cast<const char*>(profile), profile_size);
    m.png_colour = read_colour_chunks(png, info);
    return m;
  }

  // gAMA, cHRM and sRGB as libpng validated them (it drops values out of range, with a warning).
  static PngColour read_colour_chunks(png_structp png, png_infop info) {
    PngColour c;
    png_fixed_point gamma = 0;
    if (png_get_gAMA_fixed(png, info, &gamma) && gamma > 0) c.gamma = gamma / 100000.0;
    png_fixed_point x[8];
    if (png_get_cHRM_fixed(png, info, &x[0], &x[1], &x[2], &x[3], &x[4], &x[5], &x[6], &x[7])) {
      for (int i = 0; i < 8; ++i) c.chrm[i] = x[i] / 100000.0;
      c.has_chrm = true;
    }
    int intent = 0;
    if (png_get_sRGB(png, info, &intent)) c.srgb_intent = intent;
    return c;
  }

  void read_rows(int count, int first, int n, PixelType type, std::byte* out) override {
    if (setjmp(png_jmpbuf(read_.png))) fail("cannot read pixels");
    const int channels = int(header_.channels.size());
    // Rows as decoded, straight into `out`, when that is what is asked for.
    const bool direct = whole_.empty() && first == 0 && n == channels &&
                        type == (depth_ == 8 ? PixelType::u8 : PixelType::u16);
    for (int r = 0; r < count; ++r, ++next_) {
      if (next_ >= header_.height) throw Error(ErrorKind::Internal, path_ + ": read past the end");
      std::byte* dst = out + std::size_t(r) * header_.width * n * sample_size(type);
      if (direct) {
        png_read_row(read_.png, reinterpret_cast<png_bytep>(dst), nullptr);
        continue;
      }
      const std::byte* row = row_.data();
      if (whole_.empty())
        png_read_row(read_.png, reinterpret_cast<png_bytep>(row_.data()), nullptr);
      else
        row = whole_.data() + next_ * row_bytes();
      if (depth_ == 8)
        pick_samples(reinterpret_cast<const std::uint8_t*>(row), header_.width, channels, first, n,
                     type, dst, 255.0f);
      else
        pick_samples(reinterpret_cast<const std::uint16_t*>(row), header_.width, channels, first, n,
                     type, dst, 65535.0f);
    }
  }

 private:
  [[noreturn]] void fail(const char* what) {
    throw Error(ErrorKind::BadData, path_ + ": " + what + ": " + errors_.message);
  }

  std::size_t row_bytes() const {
    return std::size_t(header_.width) * header_.channels.size() * (depth_ / 8);
  }

  std::string path_;
  File file_;
  PngErrors errors_;
  PngRead read_;
  int depth_ = 8, next_ = 0;
  std::vector<std::byte> row_, whole_;
  std::vector<png_bytep> pass_rows_;  // rows of whole_, for png_read_image
};

// ---------------------------------------------------------------------------------------------
// Writing

// Raw bytes per block: each is compressed on its own, without the blocks before it as a
// dictionary (libdeflate takes none), so larger blocks lose less; 512 KiB made files 2.5-3%
// smaller than 256 KiB at the same speed, for 1.3 MB more peak memory (IceCold and Altai,
// 5120x2880, gaussian:sigma=4, 2026-11-28).
constexpr std::size_t kBlockBytes = 1 << 19;

enum class Filter { none = 0, sub = 1, up = 2, average = 3, paeth = 4, adaptive = 5 };

Filter parse_filter(const std::string& name) {
  if (name.empty() || name == "none") return Filter::none;
  if (name == "sub") return Filter::sub;
  if (name == "up") return Filter::up;
  if (name == "average") return Filter::average;
  if (name == "paeth") return Filter::paeth;
  if (name == "adaptive") return Filter::adaptive;
  throw Error(ErrorKind::Usage,
              "--png-filter '" + name + "': expected none, sub, up, average, paeth or adaptive");
}

int parse_level(const std::string& compression) {
  if (compression.empty()) return 6;
  std::string level = compression;
  if (level.starts_with("zip")) level = level.size() > 3 && level[3] == ':' ? level.substr(4) : "6";
  if (level.size() == 1 && level[0] >= '0' && level[0] <= '9') return level[0] - '0';
  throw Error(ErrorKind::Usage, "--compression '" + compression +
                                    "' for PNG: expected zip, zip:0 .. zip:9 or a level 0 .. 9");
}

std::uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return std::uint8_t(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

// One filtered row: the filter type byte, then the row's bytes filtered against `previous`
// (the row above, zeros for the first), bpp bytes a pixel.
void filter_row(Filter f, const std::uint8_t* row, const std::uint8_t* previous, std::size_t n,
                std::size_t bpp, std::uint8_t* out) {
  out[0] = std::uint8_t(f);
  std::uint8_t* o = out + 1;
  if (f == Filter::none) {
    std::memcpy(o, row, n);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const int a = i >= bpp ? row[i - bpp] : 0, b = previous[i],
              c = i >= bpp ? previous[i - bpp] : 0;
    switch (f) {
      case Filter::sub:
        o[i] = std::uint8_t(row[i] - a);
        break;
      case Filter::up:
        o[i] = std::uint8_t(row[i] - b);
        break;
      case Filter::average:
        o[i] = std::uint8_t(row[i] - (a + b) / 2);
        break;
      case Filter::paeth:
        o[i] = std::uint8_t(row[i] - paeth(a, b, c));
        break;
      default:
        o[i] = row[i];
    }
  }
}

// The libpng heuristic: the filter whose output has the smallest sum of |signed bytes|.
void filter_adaptive(const std::uint8_t* row, const std::uint8_t* previous, std::size_t n,
                     std::size_t bpp, std::uint8_t* out, std::vector<std::uint8_t>& scratch) {
  scratch.resize(n + 1);
  std::uint64_t best = ~std::uint64_t(0);
  for (const Filter f : {Filter::none, Filter::sub, Filter::up, Filter::average, Filter::paeth}) {
    filter_row(f, row, previous, n, bpp, scratch.data());
    std::uint64_t sum = 0;
    for (std::size_t i = 1; i <= n; ++i) sum += std::abs(int(std::int8_t(scratch[i])));
    if (sum < best) best = sum, std::copy(scratch.begin(), scratch.end(), out);
  }
}

// A block of rows to filter and compress: its raw rows (PNG byte order; `used` bytes of
// `rows`) and the row before it.
// The writer recycles the buffers from block to block: fresh memory for every block cost page
// faults.
struct Block {
  // Once a worker has filtered the rows into a buffer of its own, `rows` holds their deflated
  // form (deflated_size bytes) instead: one buffer a block in flight, not two.
  std::vector<std::uint8_t> rows, previous;
  std::size_t used = 0, deflated_size = 0;
  bool last = false;
  uLong adler = 1;  // of the filtered bytes
};

class PngWriter : public ImageWriter {
 public:
  PngWriter(const std::string& file, const OutputHeader& h, const WriteOptions& options)
      : file_name_(file),
        header_(h),
        level_(parse_level(options.compression)),
        filter_(parse_filter(options.png_filter)),
        depth_(h.type == SampleType::u16 ? 16 : 8),
        bpp_(std::size_t(h.channels) * depth_ / 8),
        row_bytes_(std::size_t(h.width) * bpp_),
        workers_(options.threads > 0 ? options.threads
                                     : int(std::max(1u, std::thread::hardware_concurrency()))),
        threads_(options.threads > 0 ? options.threads
                                     : int(std::max(1u, std::thread::hardware_concurrency()))) {
    if (h.type != SampleType::u8 && h.type != SampleType::u16)
      throw Error(ErrorKind::Internal, "PNG holds 8 or 16-bit samples");
    if (h.channels < 1 || h.channels > 4)
      throw Error(ErrorKind::Usage,
                  file + ": PNG holds 1 to 4 channels, not " + std::to_string(h.channels));
    file_.reset(std::fopen(file.c_str(), "wb"));
    if (!file_) throw Error(ErrorKind::CantCreate, file + ": cannot create");
    write_header();
    previous_.assign(row_bytes_, 0);
  }

  ~PngWriter() override {
    pending_.clear();  // the workers finish what they hold before they stop
  }

  void write_rows(int count, const std::byte* rows) override {
    const std::size_t sample = depth_ / 8;
    for (int r = 0; r < count; ++r) {
      if (!block_) block_ = fresh_block();
      std::uint8_t* at = block_->rows.data() + block_->used;
      const std::byte* row = rows + std::size_t(r) * row_bytes_;
      if (sample == 2)  // PNG samples are big-endian
        for (std::size_t i = 0; i < row_bytes_; i += 2) {
          at[i] = std::uint8_t(row[i + 1]);
          at[i + 1] = std::uint8_t(row[i]);
        }
      else
        std::memcpy(at, row, row_bytes_);
      block_->used += row_bytes_;
      if (block_->used >= kBlockBytes) submit(false);
    }
  }

  void finish() override {
    submit(true);
    while (!pending_.empty()) write_next();
    const std::uint8_t trailer[4] = {std::uint8_t(adler_ >> 24), std::uint8_t(adler_ >> 16),
                                     std::uint8_t(adler_ >> 8), std::uint8_t(adler_)};
    chunk("IDAT", trailer, 4);
    chunk("IEND", nullptr, 0);
    if (std::fflush(file_.get()) != 0 || std::ferror(file_.get()) ||
        std::fclose(file_.release()) != 0)
      throw Error(ErrorKind::Io, file_name_ + ": write failed");
  }

 private:
  void write_header() {
    static const std::uint8_t signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    put(signature, 8);
    const int colour = header_.channels == 1   ? 0   // grey
                       : header_.channels == 2 ? 4   // grey + alpha
                       : header_.channels == 3 ? 2   // RGB
                                               : 6;  // RGBA
    std::uint8_t ihdr[13] = {};
    store32(ihdr, std::uint32_t(header_.width));
    store32(ihdr + 4, std::uint32_t(header_.height));
    ihdr[8] = std::uint8_t(depth_);
    ihdr[9] = std::uint8_t(colour);
    chunk("IHDR", ihdr, 13);
    write_metadata(header_.metadata);
    // The zlib header: deflate, 32 KiB window, the level's hint; a multiple of 31.
    const std::uint8_t flag = level_ < 2 ? 0x01 : level_ < 6 ? 0x5e : level_ == 6 ? 0x9c : 0xda;
    const std::uint8_t zlib_header[2] = {0x78, flag};
    chunk("IDAT", zlib_header, 2);
  }

  // Before the image data: the ICC profile (iCCP), EXIF (eXIf), XMP and text: tEXt when the
  // keyword and value are Latin-1 (ASCII here), else iTXt in UTF-8. Typed attributes have no
  // place in PNG.
  void write_metadata(const Metadata& m) {
    if (!m.icc.empty()) {
      std::string data = std::string("ICC profile") + '\0' + '\0';  // name, deflate
      data += deflated(m.icc);
      chunk("iCCP", data);
    }
    write_colour_chunks(m.png_colour, !m.icc.empty());

    if (!m.exif.empty())
      chunk("eXIf", m.exif);
    else if (orientation(m) != 1)  // a TIFF's own Orientation tag, which PNG keeps in EXIF only
      chunk("eXIf", exif_from_text(m));
    if (!m.xmp.empty()) chunk("iTXt", itxt("XML:com.adobe.xmp", m.xmp));
    for (const auto& a : m.attributes) {
      if (!a.is_text()) continue;
      const std::string keyword = png_keyword_from_name(a.name).substr(0, 79);
      if (keyword.empty()) continue;
      const bool ascii = std::all_of(a.value.begin(), a.value.end(),
                                     [](char c) { return (c >= 32 && c < 127) || c == '\n'; });
      if (ascii)
        chunk("tEXt", keyword + '\0' + a.value);
      else
        chunk("iTXt", itxt(keyword, a.value));
    }
  }

  // gAMA, cHRM and sRGB as the input had them; PNG forbids sRGB beside an ICC profile (iCCP).
  void write_colour_chunks(const PngColour& c, bool has_icc) {
    const auto fixed = [](double v) { return std::uint32_t(std::lround(v * 100000.0)); };
    if (c.srgb_intent >= 0 && !has_icc) {
      const std::uint8_t intent = std::uint8_t(c.srgb_intent);
      chunk("sRGB", &intent, 1);
    }
    if (c.gamma > 0) {
      std::uint8_t data[4];
      store32(data, fixed(c.gamma));
      chunk("gAMA", data, 4);
    }
    if (c.has_chrm) {
      std::uint8_t data[32];
      for (int i = 0; i < 8; ++i) store32(data + 4 * i, fixed(c.chrm[i]));
      chunk("cHRM", data, 32);
    }
  }

  // An uncompressed iTXt: keyword, no compression, no language or translated keyword.
  static std::string itxt(const std::string& keyword, const std::string& value) {
    return keyword + std::string("\0\0\0\0\0", 5) + value;
  }

  static std::string deflated(const std::string& data) {
    uLongf size = compressBound(uLong(data.size()));
    std::string out(size, '\0');
    if (compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                  reinterpret_cast<const Bytef*>(data.data()), uLong(data.size()), 9) != Z_OK)
      throw Error(ErrorKind::Internal, "zlib failed on an ICC profile");
    out.resize(size);
    return out;
  }

  void chunk(const char* type, const std::string& data) {
    chunk(type, reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
  }

  // A block with room for kBlockBytes and one more row: a recycled one if there is one.
  std::shared_ptr<Block> fresh_block() {
    if (!spares_.empty()) {
      auto block = std::move(spares_.back());
      spares_.pop_back();
      block->used = 0;
      return block;
    }
    auto block = std::make_shared<Block>();
    block->rows.resize(kBlockBytes + row_bytes_);
    return block;
  }

  // Hands the rows gathered so far to a worker, with what it needs from before them.
  void submit(bool last) {
    if (!block_) block_ = fresh_block();
    Block& b = *block_;
    b.last = last;
    b.previous = previous_;
    if (b.used) std::copy_n(b.rows.data() + b.used - row_bytes_, row_bytes_, previous_.begin());
    pending_.push_back({block_, workers_.submit([this, block = block_] { compress(*block); })});
    block_.reset();
    // A block for every worker: more only held memory (512 KiB each; one more ready for the
    // next free worker was not faster, the rows come as fast as a block is written out).
    while (pending_.size() > std::size_t(threads_)) write_next();
  }

  // Filters rows [from, to) of the block into `out`.
  void filter_rows(const Block& b, std::size_t from, std::size_t to, std::uint8_t* out) const {
    std::vector<std::uint8_t> scratch;
    for (std::size_t r = from; r < to; ++r) {
      const std::uint8_t* row = b.rows.data() + r * row_bytes_;
      const std::uint8_t* above = r ? row - row_bytes_ : b.previous.data();
      std::uint8_t* dst = out + (r - from) * (row_bytes_ + 1);
      if (filter_ == Filter::adaptive)
        filter_adaptive(row, above, row_bytes_, bpp_, dst, scratch);
      else
        filter_row(filter_, row, above, row_bytes_, bpp_, dst);
    }
  }

  // On a worker: filters the block's rows and deflates them into b.rows, whose raw bytes the
  // filtered copy replaces. Every block but the last ends as a sync flush, for the next.
  void compress(Block& b) const {
    thread_local std::vector<std::uint8_t> filtered;  // each worker's own, kept
    const std::size_t rows = b.used / row_bytes_, n = rows * (row_bytes_ + 1);
    if (filtered.size() < n) filtered.resize(n);
    filter_rows(b, 0, rows, filtered.data());
    b.adler = libdeflate_adler32(1, filtered.data(), n);
    libdeflate_compressor* c = compressor();
    const std::size_t bound = libdeflate_deflate_compress_bound(c, n) + kSyncFlushBytes;
    if (b.rows.size() < bound) b.rows.resize(bound);
    // The sync flush's bytes stay free after the stream.
    b.deflated_size =
        libdeflate_deflate_compress(c, filtered.data(), n, b.rows.data(), bound - kSyncFlushBytes);
    if (b.deflated_size == 0) throw Error(ErrorKind::Internal, "libdeflate: no room for a block");
    if (b.last) return;
    const std::optional<DeflateLayout> layout = deflate_layout(b.rows.data(), b.deflated_size);
    if (!layout) throw Error(ErrorKind::Internal, "libdeflate wrote a block halo cannot parse");
    b.deflated_size = open_final_block(b.rows.data(), *layout);
  }

  // The worker's libdeflate compressor at the writer's level, made once (its match finder's
  // tables are hundreds of KiB).
  libdeflate_compressor* compressor() const {
    struct Owned {
      libdeflate_compressor* compressor = nullptr;
      int level = -1;
      ~Owned() { libdeflate_free_compressor(compressor); }
    };
    thread_local Owned owned;
    if (owned.level != level_) {
      libdeflate_free_compressor(owned.compressor);
      owned.level = -1;  // until the new one is made
      owned.compressor = libdeflate_alloc_compressor(level_);
      if (!owned.compressor)
        throw Error(ErrorKind::Internal, "libdeflate: no compressor at level " +
                                             std::to_string(level_) + " (out of memory?)");
      owned.level = level_;
    }
    return owned.compressor;
  }

  // Writes the oldest block once its worker is done, and keeps its buffers for another.
  void write_next() {
    auto [block, done] = std::move(pending_.front());
    pending_.pop_front();
    done.get();
    adler_ =
        adler32_combine(adler_, block->adler, z_off_t(block->used / row_bytes_ * (row_bytes_ + 1)));
    if (block->deflated_size) chunk("IDAT", block->rows.data(), block->deflated_size);
    spares_.push_back(std::move(block));
  }

  void chunk(const char* type, const std::uint8_t* data, std::size_t n) {
    std::uint8_t head[8];
    store32(head, std::uint32_t(n));
    std::memcpy(head + 4, type, 4);
    put(head, 8);
    if (n) put(data, n);
    uLong crc = crc32(0, head + 4, 4);
    if (n) crc = crc32(crc, data, uInt(n));
    std::uint8_t tail[4];
    store32(tail, std::uint32_t(crc));
    put(tail, 4);
  }

  void put(const std::uint8_t* data, std::size_t n) {
    if (std::fwrite(data, 1, n, file_.get()) != n)
      throw Error(ErrorKind::Io, file_name_ + ": write failed: " + std::strerror(errno));
  }

  static void store32(std::uint8_t* p, std::uint32_t v) {
    p[0] = std::uint8_t(v >> 24), p[1] = std::uint8_t(v >> 16), p[2] = std::uint8_t(v >> 8),
    p[3] = std::uint8_t(v);
  }

  const std::string file_name_;
  const OutputHeader header_;
  const int level_;
  const Filter filter_;
  const int depth_;
  const std::size_t bpp_, row_bytes_;
  File file_;
  std::shared_ptr<Block> block_;  // the rows gathered for the next block
  std::vector<std::shared_ptr<Block>> spares_;
  std::vector<std::uint8_t> previous_;
  uLong adler_ = 1;
  Workers workers_;
  const int threads_;
  std::deque<std::pair<std::shared_ptr<Block>, std::future<void>>> pending_;
};

}  // namespace

bool is_png(const std::string& path) {
  return extension(path) == ".png";
}

std::unique_ptr<ImageReader> open_png(std::shared_ptr<const CheckedFile> file) {
  return std::make_unique<PngReader>(std::move(file));
}

std::unique_ptr<ImageWriter> create_png(const std::string& file, const OutputHeader& header,
                                        const WriteOptions& options) {
  return std::make_unique<PngWriter>(file, header, options);
}

}  // namespace halo
