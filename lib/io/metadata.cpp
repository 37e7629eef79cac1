// Metadata carried from input to output: lookups, PNG's keywords, a minimal EXIF writer.
#include "io/metadata.hpp"

#include <fmt/format.h>
#include <lcms2.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"

namespace halo {

namespace {

// PNG keyword <-> OpenImageIO name, for the keywords whose names differ.
const std::vector<std::pair<std::string, std::string>>& png_names() {
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"Description", "ImageDescription"},
      {"Author", "Artist"},
      {"Creation Time", "DateTime"},
      {"Title", "DocumentName"},
  };
  return names;
}

void put16(std::string& out, std::uint16_t v) {
  out.push_back(char(v & 0xff));
  out.push_back(char(v >> 8));
}

void put32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

}  // namespace

const std::string* Metadata::text(const std::string& name) const {
  for (const auto& a : attributes)
    if (a.name == name && a.is_text()) return &a.value;
  return nullptr;
}

void Metadata::set(Attribute attribute) {
  for (auto& a : attributes)
    if (a.name == attribute.name) {
      a = std::move(attribute);
      return;
    }
  attributes.push_back(std::move(attribute));
}

void Metadata::set_text(const std::string& name, const std::string& value) {
  set({name, "string", value});
}

void Metadata::erase(const std::string& name) {
  std::erase_if(attributes, [&](const Attribute& a) { return a.name == name; });
}

std::string Metadata::summary() const {
  std::size_t texts = 0;
  for (const auto& a : attributes) texts += a.is_text();
  std::string text;
  const auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  if (texts) add(std::to_string(texts) + " text attribute" + (texts == 1 ? "" : "s"));
  if (attributes.size() > texts)
    add(std::to_string(attributes.size() - texts) + " typed attribute" +
        (attributes.size() - texts == 1 ? "" : "s"));
  if (!exif.empty()) add("EXIF " + size_text(exif.size()));
  if (!xmp.empty()) add("XMP " + size_text(xmp.size()));
  if (!iptc.empty()) add("IPTC " + size_text(iptc.size()));
  if (!icc.empty()) add("ICC profile " + size_text(icc.size()));
  if (png_colour.srgb_intent >= 0) add("PNG sRGB chunk");
  if (png_colour.gamma > 0) add(fmt::format("PNG gamma {:g}", png_colour.gamma));
  if (png_colour.has_chrm) add("PNG chromaticities");
  return text.empty() ? "none" : text;
}

std::string name_from_png_keyword(const std::string& keyword) {
  for (const auto& [png, name] : png_names())
    if (png == keyword) return name;
  return keyword;
}

std::string png_keyword_from_name(const std::string& name) {
  for (const auto& [png, oiio] : png_names())
    if (oiio == name) return png;
  return name;
}

namespace {

// The byte offset of IFD0's Orientation value (a SHORT held in its entry), or npos.
std::size_t orientation_at(const std::string& tiff) {
  if (tiff.size() < 8 || (tiff.compare(0, 2, "II") != 0 && tiff.compare(0, 2, "MM") != 0))
    return std::string::npos;
  const bool little = tiff[0] == 'I';
  const auto u16 = [&](std::size_t at) {
    const auto b0 = std::uint8_t(tiff[at]), b1 = std::uint8_t(tiff[at + 1]);
    return std::uint16_t(little ? b0 | b1 << 8 : b1 | b0 << 8);
  };
  const auto u32 = [&](std::size_t at) {
    return little ? std::uint32_t(u16(at)) | std::uint32_t(u16(at + 2)) << 16
                  : std::uint32_t(u16(at)) << 16 | std::uint32_t(u16(at + 2));
  };
  const std::size_t ifd = u32(4);
  if (ifd + 2 > tiff.size()) return std::string::npos;
  const std::size_t entries = u16(ifd);
  for (std::size_t e = 0; e < entries; ++e) {
    const std::size_t at = ifd + 2 + 12 * e;
    if (at + 12 > tiff.size()) break;
    if (u16(at) == 0x0112 && u16(at + 2) == 3 && u32(at + 4) == 1) return at + 8;  // SHORT x1
  }
  return std::string::npos;
}

}  // namespace

int exif_orientation(const std::string& exif) {
  const std::size_t at = orientation_at(exif);
  if (at == std::string::npos) return 1;
  const auto b0 = std::uint8_t(exif[at]), b1 = std::uint8_t(exif[at + 1]);
  const int value = exif[0] == 'I' ? b0 | b1 << 8 : b1 | b0 << 8;
  return value >= 1 && value <= 8 ? value : 1;
}

int orientation(const Metadata& metadata) {
  if (orientation_at(metadata.exif) != std::string::npos) return exif_orientation(metadata.exif);
  for (const Attribute& a : metadata.attributes) {
    if (a.name != "Orientation") continue;
    int value = 0;
    if (a.type == "int" && a.value.size() == sizeof(int))
      std::memcpy(&value, a.value.data(), sizeof(int));
    else if (a.is_text())
      value = std::atoi(a.value.c_str());
    return value >= 1 && value <= 8 ? value : 1;
  }
  return 1;
}

void mark_upright(Metadata& metadata) {
  std::string& exif = metadata.exif;
  if (const std::size_t at = orientation_at(exif); at != std::string::npos) {
    exif[at] = char(exif[0] == 'I' ? 1 : 0);  // the SHORT 1 in the block's byte order
    exif[at + 1] = char(exif[0] == 'I' ? 0 : 1);
  }
  for (Attribute& a : metadata.attributes) {
    if (a.name != "Orientation") continue;
    if (a.type == "int") {
      const int one = 1;
      a.value.assign(reinterpret_cast<const char*>(&one), sizeof one);
    } else {
      a.value.assign(1, '1');  // not = "1": GCC 12 -Wrestrict misfires
    }
  }
}

std::string exif_from_text(const Metadata& metadata) {
  static const std::vector<std::pair<std::uint16_t, std::string>> tags = {
      {0x010e, "ImageDescription"}, {0x010f, "Make"},   {0x0110, "Model"},    {0x0131, "Software"},
      {0x0132, "DateTime"},         {0x013b, "Artist"}, {0x8298, "Copyright"}};
  constexpr std::uint16_t kOrientation = 0x0112;
  std::vector<std::pair<std::uint16_t, std::string>> present;
  for (const auto& [tag, name] : tags)
    if (const std::string* value = metadata.text(name)) present.emplace_back(tag, *value);
  // A TIFF's own Orientation tag: JPEG and PNG hold orientation only in EXIF.
  const int turned = orientation(metadata);
  if (turned != 1) present.emplace_back(kOrientation, std::string());
  std::sort(present.begin(), present.end());  // tags ascend, as TIFF requires
  if (present.empty()) return {};
  // Header (8) + entry count (2) + 12 per entry + next-IFD offset (4), then the strings.
  std::string out = "II*";
  out.push_back('\0');
  put32(out, 8);
  put16(out, std::uint16_t(present.size()));
  std::uint32_t data = 8 + 2 + 12 * std::uint32_t(present.size()) + 4;
  std::string strings;
  for (const auto& [tag, value] : present) {
    put16(out, tag);
    if (tag == kOrientation) {
      put16(out, 3);  // SHORT
      put32(out, 1);
      put16(out, std::uint16_t(turned));
      put16(out, 0);
      continue;
    }
    const auto count = std::uint32_t(value.size() + 1);
    put16(out, 2);  // ASCII
    put32(out, count);
    if (count <= 4) {
      std::string inline_value = value;
      inline_value.resize(4, '\0');
      out += inline_value;
    } else {
      put32(out, data + std::uint32_t(strings.size()));
      strings += value;
      strings.push_back('\0');
      if (strings.size() % 2) strings.push_back('\0');  // word-aligned offsets
    }
  }
  put32(out, 0);
  return out + strings;
}

bool icc_fits(const std::string& icc, int channels) {
  if (icc.size() < 20) return false;
  const std::string space = icc.substr(16, 4);
  if (space == "RGB ") return channels == 3 || channels == 4;
  if (space == "GRAY") return channels == 1 || channels == 2;
  return true;
}

std::string grey_icc(const std::string& rgb) {
  using Handle = std::unique_ptr<void, decltype(&cmsCloseProfile)>;
  const Handle in(cmsOpenProfileFromMem(rgb.data(), cmsUInt32Number(rgb.size())), cmsCloseProfile);
  if (!in || cmsGetColorSpace(in.get()) != cmsSigRgbData || !cmsIsMatrixShaper(in.get())) return "";
  // Grey is R = G = B: each channel's curve is the same in the profiles worth converting, and
  // the green one weighs most in luminance.
  const auto* curve = static_cast<const cmsToneCurve*>(cmsReadTag(in.get(), cmsSigGreenTRCTag));
  const auto* white = static_cast<const cmsCIEXYZ*>(cmsReadTag(in.get(), cmsSigMediaWhitePointTag));
  if (!curve) return "";
  cmsCIExyY white_xyY;
  cmsXYZ2xyY(&white_xyY, white ? white : cmsD50_XYZ());
  const Handle grey(cmsCreateGrayProfile(&white_xyY, curve), cmsCloseProfile);
  if (!grey) return "";
  char name[256] = {};
  cmsGetProfileInfoASCII(in.get(), cmsInfoDescription, "en", "US", name, sizeof name);
  using Text = std::unique_ptr<cmsMLU, decltype(&cmsMLUfree)>;
  const Text description(cmsMLUalloc(nullptr, 1), cmsMLUfree);
  const std::string text = std::string("grey of ") + (name[0] ? name : "an RGB profile");
  if (description && cmsMLUsetASCII(description.get(), "en", "US", text.c_str()))
    cmsWriteTag(grey.get(), cmsSigProfileDescriptionTag, description.get());
  cmsUInt32Number size = 0;
  if (!cmsSaveProfileToMem(grey.get(), nullptr, &size)) return "";
  std::string bytes(size, '\0');
  if (!cmsSaveProfileToMem(grey.get(), bytes.data(), &size)) return "";
  return bytes;
}

Attribute parse_attrib(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error(ErrorKind::Usage,
                "--attrib '" + text + "': expected NAME=VALUE, e.g. --attrib Artist='A. Name'");
  return {text.substr(0, eq), "string", text.substr(eq + 1)};
}

void cap_metadata(Metadata& m, const std::string& path) {
  std::vector<std::string> dropped;
  std::size_t total = m.exif.size() + m.icc.size() + m.xmp.size() + m.iptc.size();
  std::size_t kept = 0, attributes_dropped = 0;
  std::vector<Attribute> attributes;
  for (auto& a : m.attributes) {
    const std::size_t size = a.name.size() + a.value.size();
    if (kept < kMaxMetadataAttributes && total + size <= kMaxMetadataBytes) {
      total += size;
      ++kept;
      attributes.push_back(std::move(a));
    } else {
      ++attributes_dropped;
    }
  }
  m.attributes = std::move(attributes);
  if (attributes_dropped > 0)
    dropped.push_back(std::to_string(attributes_dropped) +
                      (attributes_dropped == 1 ? " attribute" : " attributes"));
  // Blocks past the budget go, the largest first.
  std::vector<std::pair<std::string*, const char*>> blocks = {
      {&m.xmp, "XMP"}, {&m.iptc, "IPTC"}, {&m.exif, "EXIF"}, {&m.icc, "the ICC profile"}};
  std::sort(blocks.begin(), blocks.end(),
            [](const auto& a, const auto& b) { return a.first->size() > b.first->size(); });
  for (auto& [block, name] : blocks) {
    if (total <= kMaxMetadataBytes) break;
    if (block->empty()) continue;
    total -= block->size();
    block->clear();
    dropped.push_back(name);
  }
  if (dropped.empty()) return;
  std::string list;
  for (const auto& d : dropped) list += (list.empty() ? "" : ", ") + d;
  const std::string what = fmt::format("{}: metadata past halo's limits ({} MiB, {} attributes)",
                                       path, kMaxMetadataBytes >> 20, kMaxMetadataAttributes);
  if (resource_limits().strict)
    throw Error(ErrorKind::BadData, what + ": " + list + " (--strict refuses to drop it)");
  warn_once(what + " dropped: " + list);
}

}  // namespace halo
