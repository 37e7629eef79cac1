// PFM reading and writing.
#include "io/pfm.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"
#include "io/codec.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

constexpr long kMaxSide = 1 << 20;

constexpr int kMaxComment = 4096;

// Reads one whitespace-delimited header token; PFM headers are short, so a bound stops garbage.
// A `#` before a token starts a comment to the end of its line, as in Netpbm headers: vips
// writes one ("#vips2ppm - date") after the magic.
std::string token(std::istream& in, const fs::path& path) {
  std::string t;
  char c = 0;
  while (in.get(c)) {
    if (c == '#') {
      int length = 0;
      while (in.get(c) && c != '\n' && c != '\r')
        if (++length > kMaxComment)
          throw Error(ErrorKind::BadData, path.string() + ": not a PFM file (a header comment " +
                                              "over " + std::to_string(kMaxComment) + " bytes)");
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(c))) break;
  }
  while (in && !std::isspace(static_cast<unsigned char>(c)) && t.size() < 32) {
    t.push_back(c);
    if (!in.get(c)) break;
  }
  if (t.empty() || t.size() >= 32)
    throw Error(ErrorKind::BadData, path.string() + ": not a PFM file (malformed header)");
  return t;
}

long header_number(std::istream& in, const fs::path& path, const char* what) {
  const auto t = token(in, path);
  char* end = nullptr;
  const long v = std::strtol(t.c_str(), &end, 10);
  if (*end != '\0' || v <= 0 || v > kMaxSide)
    throw Error(ErrorKind::BadData, path.string() + ": bad PFM " + what + " '" + t + "' (1.." +
                                        std::to_string(kMaxSide) + ")");
  return v;
}

std::uint32_t byteswap(std::uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

// The header, checked against the file size before any pixel is read.
struct PfmHeader {
  int width = 0, height = 0, channels = 0;
  bool little = true;
  double scale = -1;
  std::uintmax_t data_start = 0;
  std::uintmax_t trailing = 0;  // bytes after the pixels
};

PfmHeader read_header(std::shared_ptr<const CheckedFile> file) {
  const fs::path path = file->path();
  CheckedFileStream in(file);
  const auto magic = token(in, path);
  if (magic != "PF" && magic != "Pf")
    throw Error(ErrorKind::BadData, path.string() + ": not a PFM file (magic '" + magic + "')");
  PfmHeader h;
  h.channels = magic == "PF" ? 3 : 1;
  h.width = int(header_number(in, path, "width"));
  h.height = int(header_number(in, path, "height"));
  const auto scale_text = token(in, path);
  char* end = nullptr;
  const double scale = std::strtod(scale_text.c_str(), &end);
  if (*end != '\0' || scale == 0 || !std::isfinite(scale))
    throw Error(ErrorKind::BadData, path.string() + ": bad PFM scale '" + scale_text + "'");
  h.little = scale < 0;
  h.scale = scale;
  // token() consumed exactly the one whitespace byte that ends the header.
  if (!in)
    throw Error(
        ErrorKind::BadData,
        path.string() + ": truncated PFM header (no byte after the scale '" + scale_text + "')");
  h.data_start = static_cast<std::uintmax_t>(in.tellg());
  const std::uintmax_t need = std::uintmax_t(h.width) * h.height * h.channels * 4;
  const std::uintmax_t size = file->size();
  // A header written with CRLF line ends: the LF after the scale's CR is header too. Only when
  // the file is one byte longer than the pixels, since a pixel's first byte may be 0x0A.
  in.seekg(std::streamoff(h.data_start) - 1);
  char last = 0, next = 0;
  in.get(last);
  in.get(next);
  if (in && last == '\r' && next == '\n' && size - h.data_start == need + 1) ++h.data_start;
  const std::uintmax_t have = size - h.data_start;
  h.trailing = have > need ? have - need : 0;
  if (have < need)
    throw Error(ErrorKind::BadData, path.string() + ": truncated PFM: " + std::to_string(h.width) +
                                        "x" + std::to_string(h.height) + " needs " +
                                        std::to_string(need) + " bytes of pixels, file has " +
                                        std::to_string(have));
  return h;
}

// Rows are stored bottom to top: rows [y, y + n) of the image are one contiguous run of the
// file, in reverse order.
// What the format allows but a writer probably did not mean, said once per file.
void warn_odd_header(const std::string& path, const PfmHeader& h) {
  if (h.trailing > 0)
    warn_once(fmt::format("{}: {} bytes after the PFM's pixels, ignored", path, h.trailing));
  if (std::abs(h.scale) != 1)
    warn_once(
        fmt::format("{}: PFM scale {:g}: its sign gives the byte order; its magnitude is "
                    "ignored (samples are read as stored, as other readers do)",
                    path, h.scale));
}

class PfmReader : public ImageReader {
 public:
  explicit PfmReader(std::shared_ptr<const CheckedFile> file)
      : path_(file->path()), file_(file), pfm_(read_header(file)) {
    const std::string& path = path_;
    check_image_size(path, pfm_.width, pfm_.height);
    header_.width = pfm_.width;
    header_.height = pfm_.height;
    header_.channels = pfm_.channels == 3 ? std::vector<std::string>{"R", "G", "B"}
                                          : std::vector<std::string>{"Y"};
    header_.stored = SampleType::f32;
    header_.format = "pfm";
    warn_odd_header(path, pfm_);
  }

  void read_rows(int count, int first, int n, PixelType type, std::byte* out) override {
    if (type != PixelType::f32) throw Error(ErrorKind::Internal, "PFM holds float samples");
    const std::size_t row = std::size_t(pfm_.width) * pfm_.channels;
    std::vector<float> rows(row * count);
    const std::uintmax_t file_row = std::uintmax_t(pfm_.height - next_ - count);
    const std::size_t bytes = rows.size() * 4;
    if (file_->read_at(rows.data(), bytes, pfm_.data_start + file_row * row * 4) != bytes)
      throw Error(ErrorKind::Io, path_ + ": read error (the file shrank while read)");
    if (pfm_.little != (std::endian::native == std::endian::little)) {
      auto* words = reinterpret_cast<std::uint32_t*>(rows.data());
      for (std::size_t i = 0; i < rows.size(); ++i) words[i] = byteswap(words[i]);
    }
    float* dst = reinterpret_cast<float*>(out);
    for (int r = 0; r < count; ++r) {
      const float* src = rows.data() + std::size_t(count - 1 - r) * row;
      for (int x = 0; x < pfm_.width; ++x)
        for (int c = 0; c < n; ++c)
          dst[(std::size_t(r) * pfm_.width + x) * n + c] =
              src[std::size_t(x) * pfm_.channels + first + c];
    }
    next_ += count;
  }

 private:
  std::string path_;
  std::shared_ptr<const CheckedFile> file_;
  PfmHeader pfm_;
  int next_ = 0;
};

// The file is laid out in full when opened; each strip of rows goes to its place (bottom to
// top), so rows arrive top first and memory holds one strip.
class PfmWriter : public ImageWriter {
 public:
  PfmWriter(const std::string& file, const OutputHeader& h) : file_(file), header_(h) {
    if (h.channels != 1 && h.channels != 3)
      throw Error(ErrorKind::Usage, file + ": PFM holds 1 or 3 channels, the image has " +
                                        std::to_string(h.channels) +
                                        " (write EXR or TIFF to keep them all)");
    out_.open(file, std::ios::binary);
    if (!out_) throw Error(ErrorKind::CantCreate, file + ": cannot open for writing");
    const bool little = std::endian::native == std::endian::little;
    out_ << (h.channels == 3 ? "PF" : "Pf") << "\n"
         << h.width << " " << h.height << "\n"
         << (little ? "-1.0" : "1.0") << "\n";
    data_start_ = std::uintmax_t(out_.tellp());
  }

  void write_rows(int count, const std::byte* rows) override {
    const std::size_t row = std::size_t(header_.width) * header_.channels;
    std::vector<float> reversed(row * count);
    const float* src = reinterpret_cast<const float*>(rows);
    for (int r = 0; r < count; ++r)
      std::copy_n(src + std::size_t(r) * row, row,
                  reversed.data() + std::size_t(count - 1 - r) * row);
    const std::uintmax_t file_row = std::uintmax_t(header_.height - next_ - count);
    out_.seekp(std::streamoff(data_start_ + file_row * row * 4));
    out_.write(reinterpret_cast<const char*>(reversed.data()),
               std::streamsize(reversed.size() * 4));
    if (!out_) throw Error(ErrorKind::Io, file_ + ": write error");
    next_ += count;
  }

  void finish() override {
    if (!out_.flush()) throw Error(ErrorKind::Io, file_ + ": write error");
    out_.close();
  }

 private:
  std::string file_;
  OutputHeader header_;
  std::ofstream out_;
  std::uintmax_t data_start_ = 0;
  int next_ = 0;
};

}  // namespace

bool is_pfm(const std::string& path) {
  return extension(path) == ".pfm";
}

std::unique_ptr<ImageReader> open_pfm(std::shared_ptr<const CheckedFile> file) {
  return std::make_unique<PfmReader>(std::move(file));
}

std::unique_ptr<ImageWriter> create_pfm(const std::string& file, const OutputHeader& header) {
  if (header.type != SampleType::f32) throw Error(ErrorKind::Internal, "PFM holds float samples");
  return std::make_unique<PfmWriter>(file, header);
}

PixelBuffer read_pfm(const fs::path& path) {
  PfmReader reader(CheckedFile::open(path.string()));
  const auto& h = reader.header();
  PixelBuffer pixels(h.width, h.height, int(h.channels.size()), PixelType::f32);
  reader.read_rows(h.height, 0, int(h.channels.size()), PixelType::f32, pixels.bytes.data());
  return pixels;
}

void write_pfm(const fs::path& path, const PixelBuffer& pixels) {
  OutputHeader h{pixels.width, pixels.height, pixels.channels, false, SampleType::f32};
  PfmWriter writer(path.string(), h);
  std::vector<float> values(pixels.sample_count());
  const float scale = unit_scale(pixels.type);
  for (std::size_t i = 0; i < values.size(); ++i) {
    switch (pixels.type) {
      case PixelType::u8:
        values[i] = float(pixels.samples<std::uint8_t>()[i]) * scale;
        break;
      case PixelType::u16:
        values[i] = float(pixels.samples<std::uint16_t>()[i]) * scale;
        break;
      case PixelType::f32:
        values[i] = pixels.samples<float>()[i];
        break;
    }
  }
  writer.write_rows(pixels.height, reinterpret_cast<const std::byte*>(values.data()));
  writer.finish();
}

}  // namespace halo
