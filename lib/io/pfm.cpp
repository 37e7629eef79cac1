// PFM reading and writing.
#include "io/pfm.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>

#include "core/error.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

constexpr long kMaxSide = 1 << 20;

// Reads one whitespace-delimited header token; PFM headers are short, so a bound stops garbage.
std::string token(std::istream& in, const fs::path& path) {
  std::string t;
  char c = 0;
  while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
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

}  // namespace

PixelBuffer read_pfm(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ErrorKind::NoInput, path.string() + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::NoInput, path.string() + ": cannot open for reading");
  const auto magic = token(in, path);
  if (magic != "PF" && magic != "Pf")
    throw Error(ErrorKind::BadData, path.string() + ": not a PFM file (magic '" + magic + "')");
  const int channels = magic == "PF" ? 3 : 1;
  const long width = header_number(in, path, "width");
  const long height = header_number(in, path, "height");
  const auto scale_text = token(in, path);
  char* end = nullptr;
  const double scale = std::strtod(scale_text.c_str(), &end);
  if (*end != '\0' || scale == 0 || !std::isfinite(scale))
    throw Error(ErrorKind::BadData, path.string() + ": bad PFM scale '" + scale_text + "'");
  // token() consumed exactly the one whitespace byte that ends the header.
  const auto data_start = static_cast<std::uintmax_t>(in.tellg());
  const std::uintmax_t need = std::uintmax_t(width) * height * channels * 4;
  const std::uintmax_t have = fs::file_size(path) - data_start;
  if (have < need)
    throw Error(ErrorKind::BadData, path.string() + ": truncated PFM: " + std::to_string(width) +
                                        "x" + std::to_string(height) + " needs " +
                                        std::to_string(need) + " bytes of pixels, file has " +
                                        std::to_string(have));

  PixelBuffer pixels(int(width), int(height), channels, PixelType::f32);
  const std::size_t row_bytes = std::size_t(width) * channels * 4;
  for (long y = height - 1; y >= 0; --y)
    in.read(reinterpret_cast<char*>(pixels.bytes.data() + y * row_bytes),
            std::streamsize(row_bytes));
  if (!in) throw Error(ErrorKind::Io, path.string() + ": read error");
  const bool little = scale < 0;
  if (little != (std::endian::native == std::endian::little)) {
    auto* words = pixels.samples<std::uint32_t>();
    for (std::size_t i = 0; i < pixels.sample_count(); ++i) words[i] = byteswap(words[i]);
  }
  return pixels;
}

void write_pfm(const fs::path& path, const PixelBuffer& pixels) {
  if (pixels.channels != 1 && pixels.channels != 3)
    throw Error(ErrorKind::Usage, path.string() + ": PFM holds 1 or 3 channels, the image has " +
                                      std::to_string(pixels.channels) +
                                      " (write EXR or TIFF to keep them all)");
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
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(ErrorKind::CantCreate, path.string() + ": cannot open for writing");
  const bool little = std::endian::native == std::endian::little;
  out << (pixels.channels == 3 ? "PF" : "Pf") << "\n"
      << pixels.width << " " << pixels.height << "\n"
      << (little ? "-1.0" : "1.0") << "\n";
  const std::size_t row = std::size_t(pixels.width) * pixels.channels;
  for (int y = pixels.height - 1; y >= 0; --y)
    out.write(reinterpret_cast<const char*>(values.data() + y * row), std::streamsize(row * 4));
  if (!out.flush()) throw Error(ErrorKind::Io, path.string() + ": write error");
}

}  // namespace halo
