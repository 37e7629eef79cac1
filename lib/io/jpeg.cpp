// JPEG through libjpeg-turbo, row by row: jpeg_read_scanlines and jpeg_write_scanlines. The
// library reports errors through a callback that must not return: it longjmps back to the
// call that failed, which turns the message into halo's one-line error.
#include <cstddef>
#include <cstdio>

#include <jerror.h>
#include <jpeglib.h>
#include <spdlog/spdlog.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include <sys/mman.h>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"
#include "io/codec.hpp"

namespace halo {

namespace {

struct ErrorManager {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
};

void on_error(j_common_ptr info) {
  auto* errors = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, errors->message);
  std::longjmp(errors->jump, 1);
}

// A file that ends early is an error (libjpeg would fill the rest with grey and go on); other
// warnings (damage it recovers from) are logged once, not printed raw.
void on_message(j_common_ptr info, int level) {
  if (level >= 0) return;  // trace messages
  if (info->err->msg_code == JWRN_JPEG_EOF) on_error(info);
  if (info->err->num_warnings++ == 0) {
    char text[JMSG_LENGTH_MAX];
    (*info->err->format_message)(info, text);
    spdlog::warn("libjpeg: {}", text);
  }
}

void install(jpeg_error_mgr& mgr) {
  jpeg_std_error(&mgr);
  mgr.error_exit = on_error;
  mgr.emit_message = on_message;
}

struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, CloseFile>;

// The libjpeg objects, destroyed with their owner even when its constructor throws.
struct Decompress {
  jpeg_decompress_struct info{};
  bool created = false;
  ~Decompress() {
    if (created) jpeg_destroy_decompress(&info);
  }
};
struct Compress {
  jpeg_compress_struct info{};
  bool created = false;
  ~Compress() {
    if (created) jpeg_destroy_compress(&info);
  }
};

// Adobe's CMYK JPEGs store inverted values: RGB = (255 - C, M, Y inverted) * K.
void cmyk_to_rgb(const std::uint8_t* cmyk, std::uint8_t* rgb, int width) {
  for (int x = 0; x < width; ++x) {
    const int k = cmyk[4 * x + 3];
    for (int c = 0; c < 3; ++c) rgb[3 * x + c] = std::uint8_t((cmyk[4 * x + c] * k + 127) / 255);
  }
}

// A progressive file's coefficients, held whole for the image (libjpeg's virtual block
// arrays), in memory mapped with transparent huge pages where the kernel offers them.
class WholeBlockArrays {
 public:
  // Takes over info's block arrays from now on (before jpeg_start_decompress).
  void install(jpeg_decompress_struct& info) {
    saved_ = *info.mem;
    info.client_data = this;
    info.mem->request_virt_barray = request;
    info.mem->realize_virt_arrays = realize;
    info.mem->access_virt_barray = access;
  }

 private:
  struct Mapping {
    void* address = MAP_FAILED;
    std::size_t size = 0;
    ~Mapping() {
      if (address != MAP_FAILED) munmap(address, size);
    }
  };
  struct Array {
    JDIMENSION blocks_per_row = 0, rows = 0;
    Mapping memory;
    std::vector<JBLOCKROW> row_pointers;
  };

  static WholeBlockArrays& of(j_common_ptr info) {
    return *static_cast<WholeBlockArrays*>(info->client_data);
  }

  static jvirt_barray_ptr request(j_common_ptr info, int pool, boolean pre_zero,
                                  JDIMENSION blocks_per_row, JDIMENSION rows,
                                  JDIMENSION max_access) {
    WholeBlockArrays& self = of(info);
    if (pool != JPOOL_IMAGE)
      return self.saved_.request_virt_barray(info, pool, pre_zero, blocks_per_row, rows,
                                             max_access);
    auto array = std::make_unique<Array>();
    array->blocks_per_row = blocks_per_row, array->rows = rows;
    self.arrays_.push_back(std::move(array));
    return reinterpret_cast<jvirt_barray_ptr>(self.arrays_.back().get());
  }

  static void realize(j_common_ptr info) {
    WholeBlockArrays& self = of(info);
    self.saved_.realize_virt_arrays(info);
    for (auto& array : self.arrays_) {
      if (array->memory.address != MAP_FAILED) continue;
      const std::size_t per_row = array->blocks_per_row;
      array->memory.size = per_row * array->rows * sizeof(JBLOCK);
      array->memory.address = mmap(nullptr, array->memory.size, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (array->memory.address == MAP_FAILED) ERREXIT(info, JERR_OUT_OF_MEMORY);
      madvise(array->memory.address, array->memory.size, MADV_HUGEPAGE);
      auto* blocks = static_cast<JBLOCK*>(array->memory.address);
      array->row_pointers.resize(array->rows);
      for (JDIMENSION y = 0; y < array->rows; ++y) array->row_pointers[y] = blocks + y * per_row;
    }
  }

  static JBLOCKARRAY access(j_common_ptr info, jvirt_barray_ptr ptr, JDIMENSION start,
                            JDIMENSION rows, boolean writable) {
    WholeBlockArrays& self = of(info);
    for (auto& array : self.arrays_)
      if (reinterpret_cast<jvirt_barray_ptr>(array.get()) == ptr) {
        if (array->memory.address == MAP_FAILED || start + rows > array->rows)
          ERREXIT(info, JERR_BAD_VIRTUAL_ACCESS);
        return array->row_pointers.data() + start;
      }
    return self.saved_.access_virt_barray(info, ptr, start, rows, writable);
  }

  jpeg_memory_mgr saved_{};
  std::vector<std::unique_ptr<Array>> arrays_;
};

// APP1 identifiers.
constexpr std::string_view kExif{"Exif\0\0", 6};
constexpr std::string_view kXmp{"http://ns.adobe.com/xap/1.0/\0", 29};

class JpegReader : public ImageReader {
 public:
  JpegReader(std::shared_ptr<const CheckedFile> file, int shrink)
      : path_(file->path()), file_(open_stream(file)) {
    const std::string& path = path_;
    install(errors_.mgr);
    info_.err = &errors_.mgr;
    jpeg_create_decompress(&info_);
    jpeg_.created = true;
    if (setjmp(errors_.jump)) fail("cannot read");
    jpeg_stdio_src(&info_, file_.get());
    for (const int marker : {JPEG_COM, JPEG_APP0 + 1, JPEG_APP0 + 2, JPEG_APP0 + 13})
      jpeg_save_markers(&info_, marker, 0xffff);
    jpeg_read_header(&info_, TRUE);
    header_.metadata = read_metadata();
    // Before jpeg_start_decompress: it allocates rows, and a progressive file's coefficients
    // for the whole image.
    check_image_size(path, info_.image_width, info_.image_height);
    if (info_.progressive_mode)
      check_memory(path,
                   std::size_t(info_.image_width) * info_.image_height * info_.num_components * 2,
                   "a progressive JPEG's coefficients");
    cmyk_ = info_.jpeg_color_space == JCS_CMYK || info_.jpeg_color_space == JCS_YCCK;
    info_.out_color_space = cmyk_                                     ? JCS_CMYK
                            : info_.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE
                                                                      : JCS_RGB;
    header_.can_shrink = true;
    if (shrink == 2 || shrink == 4 || shrink == 8) {  // DCT scaling: an 8x8 block to 4, 2 or 1
      info_.scale_num = 1;
      info_.scale_denom = unsigned(shrink);
      header_.shrink = shrink;
    }
    // The sizes only: jpeg_start_decompress decodes a progressive file's every scan, which a
    // caller that reads the header alone (halo run's probe of each file) must not pay for.
    jpeg_calc_output_dimensions(&info_);
    header_.format = "jpeg";
    header_.width = int(info_.output_width);
    header_.height = int(info_.output_height);
    header_.channels = info_.out_color_space == JCS_GRAYSCALE
                           ? std::vector<std::string>{"Y"}
                           : std::vector<std::string>{"R", "G", "B"};
    header_.stored = SampleType::u8;
    row_.resize(std::size_t(header_.width) * info_.output_components);
    rgb_.resize(std::size_t(header_.width) * header_.channels.size());
  }

  // EXIF and XMP (APP1), the ICC profile (APP2, possibly in pieces), IPTC (APP13, kept as
  // stored) and the comment (COM, as "Comment").
  Metadata read_metadata() {
    Metadata m;
    for (jpeg_saved_marker_ptr marker = info_.marker_list; marker; marker = marker->next) {
      const std::string data(reinterpret_cast<const char*>(marker->data), marker->data_length);
      if (marker->marker == JPEG_APP0 + 1 && data.starts_with(kExif))
        m.exif = data.substr(kExif.size());
      else if (marker->marker == JPEG_APP0 + 1 && data.starts_with(kXmp))
        m.xmp = data.substr(kXmp.size());
      else if (marker->marker == JPEG_APP0 + 13 && data.starts_with("Photoshop 3.0"))
        m.iptc = data;
      else if (marker->marker == JPEG_COM)
        m.set_text("Comment", data.substr(0, data.find_last_not_of('\0') + 1));
    }
    JOCTET* icc = nullptr;
    unsigned int icc_size = 0;
    if (jpeg_read_icc_profile(&info_, &icc, &icc_size) && icc) {
      m.icc.assign(reinterpret_cast<const char*>(icc), icc_size);
      std::free(icc);
    }
    return m;
  }

  void read_rows(int count, int first, int n, PixelType type, std::byte* out) override {
    if (setjmp(errors_.jump)) fail("cannot read pixels");
    if (!started_) {
      if (info_.progressive_mode) blocks_.install(info_);
      jpeg_start_decompress(&info_);
      started_ = true;
    }
    const int channels = int(header_.channels.size());
    if (!cmyk_ && type == PixelType::u8 && first == 0 && n == channels) {
      // The common case: rows go straight into `out`; the copy below took half the time of
      // decoding the 5120x2880 Altai JPEG (0.084 -> 0.046 s).
      for (int r = 0; r < count; ++r) {
        JSAMPROW row = reinterpret_cast<JSAMPROW>(out + std::size_t(r) * header_.width * n);
        if (jpeg_read_scanlines(&info_, &row, 1) != 1) fail("cannot read pixels");
      }
      return;
    }
    for (int r = 0; r < count; ++r) {
      JSAMPROW row = row_.data();
      if (jpeg_read_scanlines(&info_, &row, 1) != 1) fail("cannot read pixels");
      const std::uint8_t* samples = row_.data();
      if (cmyk_) {
        cmyk_to_rgb(row_.data(), rgb_.data(), header_.width);
        samples = rgb_.data();
      }
      std::byte* dst = out + std::size_t(r) * header_.width * n * sample_size(type);
      copy_u8_row(samples, header_.width, channels, first, n, type, dst);
    }
  }

 private:
  [[noreturn]] void fail(const char* what) {
    throw Error(ErrorKind::BadData, path_ + ": " + what + ": " + errors_.message);
  }

  std::string path_;
  File file_;
  ErrorManager errors_;
  WholeBlockArrays blocks_;  // outlives jpeg_, which may use it until destroyed
  Decompress jpeg_;
  jpeg_decompress_struct& info_ = jpeg_.info;
  bool cmyk_ = false;
  bool started_ = false;  // jpeg_start_decompress called (on the first rows read)
  std::vector<std::uint8_t> row_, rgb_;
};

int parse_quality(int quality) {
  if (quality < 0 || quality > 100)
    throw Error(ErrorKind::Usage, "--quality " + std::to_string(quality) + ": expected 1 to 100");
  return quality ? quality : 95;
}

class JpegWriter : public ImageWriter {
 public:
  JpegWriter(const std::string& target, const std::string& file, const OutputHeader& h,
             const WriteOptions& options)
      : file_name_(file), target_(target) {
    if (h.alpha) throw Error(ErrorKind::Usage, file + ": JPEG cannot store alpha");
    if (h.channels != 1 && h.channels != 3)
      throw Error(ErrorKind::Usage, file + ": JPEG holds 1 or 3 channels, the image has " +
                                        std::to_string(h.channels));
    if (!options.compression.empty())
      throw Error(ErrorKind::Usage, "--compression does not apply to JPEG (use --quality)");
    file_.reset(std::fopen(file.c_str(), "wb"));
    if (!file_) throw Error(ErrorKind::CantCreate, file + ": cannot create");
    install(errors_.mgr);
    info_.err = &errors_.mgr;
    jpeg_create_compress(&info_);
    jpeg_.created = true;
    if (setjmp(errors_.jump)) fail();
    jpeg_stdio_dest(&info_, file_.get());
    info_.image_width = JDIMENSION(h.width);
    info_.image_height = JDIMENSION(h.height);
    info_.input_components = h.channels;
    info_.in_color_space = h.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&info_);
    const int quality = parse_quality(options.quality);
    jpeg_set_quality(&info_, quality, TRUE);
    // As vips: no chroma subsampling from quality 90 up (4:4:4), 4:2:0 below.
    if (quality >= 90)
      for (int c = 0; c < info_.num_components; ++c)
        info_.comp_info[c].h_samp_factor = info_.comp_info[c].v_samp_factor = 1;
    jpeg_start_compress(&info_, TRUE);
    write_metadata(h.metadata);
    row_bytes_ = std::size_t(h.width) * h.channels;
  }

  // EXIF as it came, or one made from the text attributes EXIF has (description, artist,
  // copyright, software, ...); XMP; the ICC profile; IPTC as stored; the comment. A block
  // over a marker's 64 KiB (the ICC profile excepted, which is split) is left out.
  void write_metadata(const Metadata& m) {
    const std::string exif = m.exif.empty() ? exif_from_text(m) : m.exif;
    marker(JPEG_APP0 + 1, exif.empty() ? "" : std::string(kExif) + exif, "EXIF");
    marker(JPEG_APP0 + 1, m.xmp.empty() ? "" : std::string(kXmp) + m.xmp, "XMP");
    if (!m.icc.empty())
      jpeg_write_icc_profile(&info_, reinterpret_cast<const JOCTET*>(m.icc.data()),
                             unsigned(m.icc.size()));
    marker(JPEG_APP0 + 13, m.iptc, "IPTC");
    if (const std::string* comment = m.text("Comment")) marker(JPEG_COM, *comment, "comment");
  }

  void marker(int code, const std::string& data, const char* what) {
    if (data.empty()) return;
    if (data.size() > 65533) {
      spdlog::warn("{}: {} of {} does not fit in a JPEG marker; left out", target_, what,
                   size_text(data.size()));
      return;
    }
    jpeg_write_marker(&info_, code, reinterpret_cast<const JOCTET*>(data.data()),
                      unsigned(data.size()));
  }

  void write_rows(int count, const std::byte* rows) override {
    if (setjmp(errors_.jump)) fail();
    for (int r = 0; r < count; ++r) {
      JSAMPROW row = reinterpret_cast<JSAMPROW>(const_cast<std::byte*>(rows)) + r * row_bytes_;
      jpeg_write_scanlines(&info_, &row, 1);
    }
  }

  void finish() override {
    if (setjmp(errors_.jump)) fail();
    jpeg_finish_compress(&info_);
    if (std::fflush(file_.get()) != 0 || std::ferror(file_.get()) ||
        std::fclose(file_.release()) != 0)
      throw Error(ErrorKind::Io, file_name_ + ": write failed");
  }

 private:
  [[noreturn]] void fail() {
    throw Error(ErrorKind::Io, file_name_ + ": write failed: " + errors_.message);
  }

  std::string file_name_;
  std::string target_;  // the output's name, for warnings
  File file_;
  ErrorManager errors_;
  Compress jpeg_;
  jpeg_compress_struct& info_ = jpeg_.info;
  std::size_t row_bytes_ = 0;
};

}  // namespace

bool is_jpeg(const std::string& path) {
  const auto ext = extension(path);
  return ext == ".jpg" || ext == ".jpeg";
}

std::unique_ptr<ImageReader> open_jpeg(std::shared_ptr<const CheckedFile> file, int shrink) {
  return std::make_unique<JpegReader>(std::move(file), shrink);
}

std::unique_ptr<ImageWriter> create_jpeg(const std::string& target, const std::string& file,
                                         const OutputHeader& header, const WriteOptions& options) {
  if (header.type != SampleType::u8) throw Error(ErrorKind::Internal, "JPEG holds 8-bit samples");
  return std::make_unique<JpegWriter>(target, file, header, options);
}

}  // namespace halo
