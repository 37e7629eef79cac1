// What an image file says about its pixels besides the pixels: text (description, artist,
// copyright, custom keys), EXIF, XMP, IPTC, the ICC profile, and typed header attributes (an
// EXR's camera matrices, render settings, ...). Readers fill it, `halo run` carries it from
// input to output (translated where the formats differ), and writers store what their format
// can hold.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace halo {

// One header attribute. Names follow OpenImageIO's ("ImageDescription", "Artist",
// "Copyright", "Software", "DateTime", "Exif:FNumber", "worldToCamera", ...). `type` is
// OpenImageIO's TypeDesc spelling ("string", "int", "float", "matrix", "float[2]", ...);
// `value` holds the text of a "string" attribute, else the raw bytes of its values.
struct Attribute {
  std::string name;
  std::string type;
  std::string value;

  bool is_text() const { return type == "string"; }
  bool operator==(const Attribute&) const = default;

  // A number as a typed attribute ("int", "float", ...): its bytes as the machine holds them.
  template <typename T>
  static Attribute typed(std::string name, std::string type, T value) {
    return {std::move(name), std::move(type),
            std::string(reinterpret_cast<const char*>(&value), sizeof value)};
  }
};

// PNG's colour chunks, which say how its samples encode light when it has no ICC profile:
// gAMA (the encoding's exponent, 1/2.2 = 0.45455 for most), cHRM (white point and red, green,
// blue primaries as CIE x, y) and sRGB (the file is sRGB; its rendering intent 0..3).
struct PngColour {
  double gamma = 0;              // 0: no gAMA
  std::array<double, 8> chrm{};  // white x, y, red x, y, green x, y, blue x, y
  bool has_chrm = false;
  int srgb_intent = -1;  // -1: no sRGB chunk

  bool empty() const { return gamma == 0 && !has_chrm && srgb_intent < 0; }
  bool operator==(const PngColour&) const = default;
};

struct Metadata {
  std::vector<Attribute> attributes;
  std::string exif;      // EXIF as a TIFF structure ("II*\0..." or "MM\0*..."), without "Exif\0\0"
  std::string icc;       // ICC colour profile
  std::string xmp;       // XMP packet (XML)
  std::string iptc;      // IPTC-IIM records (JPEG's APP13 Photoshop block, as stored)
  PngColour png_colour;  // kept into PNG outputs

  bool empty() const {
    return attributes.empty() && exif.empty() && icc.empty() && xmp.empty() && iptc.empty() &&
           png_colour.empty();
  }
  // The text of attribute `name`, or nullptr.
  const std::string* text(const std::string& name) const;
  // Sets a text attribute, replacing one of the same name.
  void set_text(const std::string& name, const std::string& value);
  void set(Attribute attribute);
  void erase(const std::string& name);
  // One line for -v: "3 text attributes, EXIF 1.2 KiB, ICC profile 3.1 KiB".
  std::string summary() const;
};

// What one file's metadata may hold: 16 MiB in all (text, EXIF, XMP, IPTC, the ICC profile,
// typed attributes) and 1000 attributes. Metadata is held for the whole run and written into
// every output, so a file past these keeps what fits, in order (attributes first, then the
// largest blocks go), and a warning names the file and what was dropped.
constexpr std::size_t kMaxMetadataBytes = std::size_t(16) << 20;
constexpr std::size_t kMaxMetadataAttributes = 1000;
void cap_metadata(Metadata& metadata, const std::string& path);

// PNG's text keywords and OpenImageIO's names for the same things (Description <->
// ImageDescription, Author <-> Artist, Creation Time <-> DateTime); others stay as they are.
std::string name_from_png_keyword(const std::string& keyword);
std::string png_keyword_from_name(const std::string& name);

// A minimal EXIF block (little-endian TIFF, IFD0 only) holding the ASCII tags of `metadata`
// that EXIF has: ImageDescription, Make, Model, Software, DateTime, Artist, Copyright, and the
// Orientation when it is not 1 (a TIFF's own tag). Empty when there are none. For outputs that
// keep text or orientation in EXIF (JPEG, PNG) when the input had no EXIF block.
std::string exif_from_text(const Metadata& metadata);

// EXIF's Orientation (tag 0x0112 of IFD0, 1..8) in a TIFF-structured EXIF block; 1 when it
// has none or the block cannot be read.
int exif_orientation(const std::string& exif);
// How the file's image is stored turned: its EXIF block's Orientation, else the attribute
// "Orientation" (a TIFF's own tag 274, as OpenImageIO reads it); 1 when neither says.
int orientation(const Metadata& metadata);
// For an image put upright: Orientation 1 in the EXIF block (set in place) and in the
// attribute TIFF and OpenImageIO name so.
void mark_upright(Metadata& metadata);

// Whether an ICC profile describes images of `channels` colour-and-alpha channels: its colour
// space (header bytes 16..19) is 'RGB ' for 3 or 4, 'GRAY' for 1 or 2; unknown spaces fit.
bool icc_fits(const std::string& icc, int channels);

// A grey ICC profile with the same tone curve (the green one) and white as the RGB
// matrix-shaper profile `rgb`, for a grey image encoded as that profile's R = G = B; "" when
// `rgb` is not such a profile.
std::string grey_icc(const std::string& rgb);

// --attrib NAME=VALUE: a text attribute; Usage error without '=' or with an empty name.
Attribute parse_attrib(const std::string& text);

}  // namespace halo
