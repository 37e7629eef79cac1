// Hostile input and special outputs through the real binary: files declaring more than the
// limits are refused on their header (exit 65, the size and the limit named) before their
// pixels take memory; a file is read as what its content is; reports go to standard output
// for "-" and are written in place on devices, never renamed over them.
#include <doctest/doctest.h>
#include <zlib.h>

#include <OpenImageIO/imageio.h>

#include <cstring>

#include "cli/sandbox.hpp"
#include "io/image_io.hpp"

using namespace halo;
using namespace halo::test;

namespace {

void put32(std::string& s, std::uint32_t v) {
  for (int shift : {24, 16, 8, 0}) s += char((v >> shift) & 0xff);
}

std::string chunk(const std::string& type, const std::string& data) {
  std::string c;
  put32(c, std::uint32_t(data.size()));
  const std::string body = type + data;
  c += body;
  put32(c, std::uint32_t(crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
  return c;
}

// A 1-bit grey PNG declaring width x height, all zero: a few hundred KB that decode to
// width x height samples (450 MB of 8-bit grey at 60000x60000).
void write_bomb(const std::string& path, std::uint32_t width, std::uint32_t height) {
  std::string ihdr;
  put32(ihdr, width);
  put32(ihdr, height);
  ihdr += std::string("\x01\x00\x00\x00\x00", 5);
  const std::string row(1 + (width + 7) / 8, '\0');
  z_stream z{};
  deflateInit(&z, 9);
  std::string idat;
  std::vector<unsigned char> out(1 << 16);
  for (std::uint32_t y = 0; y <= height; ++y) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(row.data()));
    z.avail_in = y < height ? uInt(row.size()) : 0;
    do {
      z.next_out = out.data();
      z.avail_out = uInt(out.size());
      deflate(&z, y < height ? Z_NO_FLUSH : Z_FINISH);
      idat.append(reinterpret_cast<char*>(out.data()), out.size() - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  std::ofstream(path, std::ios::binary)
      << std::string("\x89PNG\r\n\x1a\n", 8) << chunk("IHDR", ihdr) << chunk("IDAT", idat)
      << chunk("IEND", "");
}

// A 32-bit value as OpenEXR stores it (little-endian).
std::string le32(std::uint32_t v) {
  std::string s;
  for (int i = 0; i < 4; ++i) s += char((v >> (8 * i)) & 0xff);
  return s;
}

// A scanline OpenEXR of one float channel declaring width x height: a valid header and offset
// table, every offset at the one chunk the file holds (720 KB at 60000x60000; 43 GB as
// pixels).
void write_exr_bomb(const std::string& path, int width, int height) {
  std::string h = std::string("\x76\x2f\x31\x01\x02\x00\x00\x00", 8);
  const auto attr = [&](const std::string& name, const std::string& type, const std::string& v) {
    h += name + '\0' + type + '\0';
    h += le32(std::uint32_t(v.size()));
    h += v;
  };
  std::string channels = std::string("R\0", 2);
  channels += le32(2);               // FLOAT
  channels += std::string(4, '\0');  // pLinear, reserved
  channels += le32(1) + le32(1);     // sampling
  channels += '\0';
  std::string window;
  for (std::uint32_t v : {0u, 0u, std::uint32_t(width - 1), std::uint32_t(height - 1)})
    window += le32(v);
  std::string one, centre(8, '\0');
  one += le32(0x3f800000);  // 1.0f
  attr("channels", "chlist", channels);
  attr("compression", "compression", std::string(1, '\0'));
  attr("dataWindow", "box2i", window);
  attr("displayWindow", "box2i", window);
  attr("lineOrder", "lineOrder", std::string(1, '\0'));
  attr("pixelAspectRatio", "float", one);
  attr("screenWindowCenter", "v2f", centre);
  attr("screenWindowWidth", "float", one);
  h += '\0';
  const std::uint64_t chunk_at = h.size() + 8 * std::uint64_t(height);
  std::string table;
  for (int y = 0; y < height; ++y)
    for (int i = 0; i < 8; ++i) table += char((chunk_at >> (8 * i)) & 0xff);
  std::string chunk;
  chunk += le32(0) + le32(std::uint32_t(4 * width));
  chunk += std::string(4 * std::size_t(width), '\0');
  std::ofstream(path, std::ios::binary) << h << table << chunk;
}

// A progressive JPEG (written by OpenImageIO) whose frame header (SOF2) then declares
// width x height: libjpeg would hold every coefficient of the declared image at once.
void write_progressive_jpeg_bomb(const std::string& path, int width, int height) {
  OIIO::ImageSpec spec(16, 16, 3, OIIO::TypeDesc::UINT8);
  spec.attribute("jpeg:progressive", 1);
  auto out = OIIO::ImageOutput::create(path);
  REQUIRE(out);
  REQUIRE(out->open(path, spec));
  const std::vector<std::uint8_t> pixels(16 * 16 * 3, 128);
  REQUIRE(out->write_image(OIIO::TypeDesc::UINT8, pixels.data()));
  REQUIRE(out->close());
  std::string bytes = Sandbox::read(path);
  const std::size_t sof2 = bytes.find("\xff\xc2");
  REQUIRE(sof2 != std::string::npos);  // progressive indeed
  bytes[sof2 + 5] = char(height >> 8), bytes[sof2 + 6] = char(height & 0xff);
  bytes[sof2 + 7] = char(width >> 8), bytes[sof2 + 8] = char(width & 0xff);
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

TEST_CASE("a progressive JPEG declaring 30000x30000 is refused before its coefficients") {
  Sandbox box;
  write_progressive_jpeg_bomb(box / "bomb.jpg", 30000, 30000);
  CHECK(fs::file_size(box / "bomb.jpg") < 10000);
  // 0.9 gigapixels pass --max-pixels; 5.4 GB of coefficients do not fit in --max-memory 1G.
  const Measured m =
      run_measured(box, {"--max-memory", "1G", "run", box / "bomb.jpg", "-o", box / "o.png"});
  CHECK(m.code == 65);
  CHECK_MESSAGE(has(m.err, "a progressive JPEG's coefficients"), m.err);
  CHECK(m.peak_kib < rss_bound_kib(150 * 1024));
  CHECK_FALSE(fs::exists(box / "o.png"));
}

TEST_CASE("an OpenEXR whose data window declares 60000x60000 is refused on its header") {
  Sandbox box;
  write_exr_bomb(box / "bomb.exr", 60000, 60000);
  CHECK(fs::file_size(box / "bomb.exr") < 1000000);
  const Measured m = run_measured(box, {"run", box / "bomb.exr", "-o", box / "o.exr"});
  CHECK(m.code == 65);
  CHECK(has(m.err, "bomb.exr: declares 60000x60000 = 3.60 gigapixels, over the limit"));
  CHECK(m.peak_kib < rss_bound_kib(300 * 1024));  // OpenImageIO's libraries alone are about 135 MiB
  CHECK_FALSE(fs::exists(box / "o.exr"));
  // Under the limit the same layout passes the check and fails on its pixels (every offset
  // points at row 0's chunk): the check judged the header alone.
  write_exr_bomb(box / "small.exr", 40, 30);
  const Result r = box.halo("run " + box / "small.exr" + " -o " + box / "small.pfm");
  CHECK(r.code == 65);
  CHECK(has(r.err, "small.exr: cannot read pixels"));
}

TEST_CASE("an OpenEXR header is walked before OpenEXR reads it: declared sizes, parts, ends") {
  Sandbox box;
  write_exr_bomb(box / "small.exr", 40, 30);
  const std::string valid = Sandbox::read(box / "small.exr");
  const std::size_t attributes = 8;  // after the magic number and the version field
  // A string attribute declaring 1.8 GB in a 1 KB file: OpenEXR would allocate all of it.
  std::string bomb = valid;
  bomb.insert(attributes, std::string("capDate\0string\0", 15) + le32(0x6c000000) + "2026");
  std::ofstream(box / "string.exr", std::ios::binary) << bomb;
  const Measured m = run_measured(box, {"run", box / "string.exr", "-o", box / "o.exr"});
  CHECK(m.code == 65);
  CHECK_MESSAGE(has(m.err,
                    "string.exr: not a valid OpenEXR header: attribute 'capDate' declares "
                    "1811939328 bytes where the file has"),
                m.err);
  CHECK(m.peak_kib < rss_bound_kib(100 * 1024));
  CHECK_FALSE(fs::exists(box / "o.exr"));

  // Cut inside the data window, and inside its type's name; a name that never ends.
  const std::size_t window = valid.find("dataWindow");
  REQUIRE(window != std::string::npos);
  std::ofstream(box / "cut.exr", std::ios::binary) << valid.substr(0, window + 24);
  Result r = box.halo("run " + box / "cut.exr" + " -o " + box / "o.exr");
  CHECK(r.code == 65);
  CHECK(has(r.err,
            "cut.exr: not a valid OpenEXR header: attribute 'dataWindow' declares 16 "
            "bytes where the file has 3 left"));
  std::ofstream(box / "cut.exr", std::ios::binary) << valid.substr(0, window + 13);
  r = box.halo("run " + box / "cut.exr" + " -o " + box / "o.exr");
  CHECK(r.code == 65);
  CHECK(has(r.err,
            "cut.exr: not a valid OpenEXR header: the file ends in the type of attribute "
            "'dataWindow'"));
  std::ofstream(box / "name.exr", std::ios::binary)
      << valid.substr(0, attributes) << std::string(300, 'n') << valid.substr(attributes);
  r = box.halo("run " + box / "name.exr" + " -o " + box / "o.exr");
  CHECK(r.code == 65);
  CHECK(has(r.err, "is longer than 255 characters"));

  // Values OpenEXR reads by their content, not their declared size: a preview declaring
  // 30000x30000 pixels (3.6 GB) in 8 bytes; a channel list shorter than it says.
  std::string preview = valid;
  preview.insert(attributes,
                 std::string("preview\0preview\0", 16) + le32(8) + le32(30000) + le32(30000));
  std::ofstream(box / "preview.exr", std::ios::binary) << preview;
  const Measured p = run_measured(box, {"run", box / "preview.exr", "-o", box / "o.exr"});
  CHECK(p.code == 65);
  CHECK(has(p.err, "attribute 'preview' (preview) declares 30000x30000 pixels in 8 bytes"));
  CHECK(p.peak_kib < rss_bound_kib(100 * 1024));
  std::string list = valid;
  const std::size_t list_size = list.find("chlist") + 7;
  REQUIRE(list[list_size] == 19);  // "R\0", 16 bytes, the null that ends the list
  list[list_size] = 31;
  list.insert(list_size + 4 + 19, std::string(12, 'x'));
  std::ofstream(box / "list.exr", std::ios::binary) << list;
  r = box.halo("run " + box / "list.exr" + " -o " + box / "o.exr");
  CHECK(r.code == 65);
  CHECK(
      has(r.err, "attribute 'channels' (chlist) holds 19 bytes of channels where it declares 31"));
  // A float attribute declaring 5 bytes: OpenEXR reads 4 and goes on from the 5th.
  std::string sized = valid;
  sized.insert(attributes, std::string("gain\0float\0", 11) + le32(5) + "12345");
  std::ofstream(box / "sized.exr", std::ios::binary) << sized;
  r = box.halo("run " + box / "sized.exr" + " -o " + box / "o.exr");
  CHECK(r.code == 65);
  CHECK(has(r.err, "attribute 'gain' of type float declares 5 bytes, not the type's 4"));

  // A channel of pixel type 3: OpenImageIO's reader aborts the program on it (exit 134).
  std::string typed = valid;
  const std::size_t r_type = typed.find("chlist") + 7 + 4 + 2;  // type, size, "R\0"
  REQUIRE(typed[r_type] == 2);
  typed[r_type] = 3;
  std::ofstream(box / "type.exr", std::ios::binary) << typed;
  r = box.halo("run " + box / "type.exr" + " -o " + box / "o.exr");
  CHECK(r.code == 65);
  CHECK(has(r.err, "type.exr: not a valid OpenEXR header: channel 'R' has pixel type 3"));

  // Two parts (the multi-part flag), the second declaring 60000x60000.
  const std::size_t last = valid.find("screenWindowWidth");  // name, type, size, a float
  const std::string header = valid.substr(attributes, last + 18 + 6 + 4 + 4 - attributes);
  std::string head = valid.substr(0, attributes), second = header;
  head[5] = char(0x10);
  write_exr_bomb(box / "big.exr", 60000, 60000);
  const std::string big = Sandbox::read(box / "big.exr");
  const std::size_t window_bytes = 11 + 6 + 4 + 16;  // dataWindow box2i, its size, 4 ints
  second.replace(window - attributes, window_bytes,
                 big.substr(big.find("dataWindow"), window_bytes));
  std::ofstream(box / "parts.exr", std::ios::binary)
      << head << header << '\0' << second << '\0' << '\0' << std::string(64, 'x');
  r = box.halo("run " + box / "parts.exr" + " -o " + box / "o.exr");
  CHECK(r.code == 65);
  CHECK_MESSAGE(has(r.err, "parts.exr (part 2): declares 60000x60000"), r.err);
}

TEST_CASE("a TIFF declaring 65504 rows per strip for 5 rows: read in little memory, or refused") {
  Sandbox box;
  // OpenImageIO 2.4 allocates a whole strip as declared (4.3 GB here) before it reads one;
  // halo's own reader decodes the rows there are. A file the module reads (an ICC profile
  // takes it there) is refused on its header instead.
  const auto make = [&](const std::string& name, bool module) {
    OIIO::ImageSpec spec(32775, 5, 1, OIIO::TypeDesc::UINT16);
    spec.attribute("compression", "lzw");
    const std::string icc(128, '\0');
    if (module)
      spec.attribute("ICCProfile", OIIO::TypeDesc(OIIO::TypeDesc::UINT8, int(icc.size())),
                     icc.data());
    auto out = OIIO::ImageOutput::create(box / name);
    REQUIRE(out->open(box / name, spec));
    const std::vector<std::uint16_t> zeros(32775 * 5);
    REQUIRE(out->write_image(OIIO::TypeDesc::UINT16, zeros.data()));
    REQUIRE(out->close());
    std::string bytes = Sandbox::read(box / name);
    REQUIRE(bytes.compare(0, 2, "II") == 0);
    const std::size_t ifd = std::uint8_t(bytes[4]) | std::uint8_t(bytes[5]) << 8 |
                            std::uint8_t(bytes[6]) << 16 |
                            std::size_t(std::uint8_t(bytes[7])) << 24;
    const int entries = std::uint8_t(bytes[ifd]) | std::uint8_t(bytes[ifd + 1]) << 8;
    bool patched = false;
    for (int e = 0; e < entries; ++e) {
      const std::size_t at = ifd + 2 + 12 * std::size_t(e);
      if (std::uint8_t(bytes[at]) == 0x16 && std::uint8_t(bytes[at + 1]) == 0x01) {  // RowsPerStrip
        bytes[at + 8] = char(0xe0), bytes[at + 9] = char(0xff);                      // 65504
        bytes[at + 10] = bytes[at + 11] = 0;
        patched = true;
      }
    }
    REQUIRE(patched);
    std::ofstream(box / name, std::ios::binary) << bytes;
  };
  make("rps.tif", true);
  const Measured m =
      run_measured(box, {"--max-memory", "1G", "run", box / "rps.tif", "-o", box / "o.pfm"});
  CHECK(m.code == 65);
  CHECK_MESSAGE(has(m.err,
                    "rps.tif: decoding 65504 rows needs 4.0 GiB of memory, over the "
                    "limit of 1.0 GiB"),
                m.err);
  CHECK(m.peak_kib < rss_bound_kib(400 * 1024));
  CHECK_FALSE(fs::exists(box / "o.pfm"));
  make("plain.tif", false);
  const Measured plain =
      run_measured(box, {"--max-memory", "1G", "run", box / "plain.tif", "-o", box / "p.pfm"});
  CHECK_MESSAGE(plain.code == 0, plain.err);
  CHECK(plain.peak_kib < rss_bound_kib(400 * 1024));
  CHECK(fs::exists(box / "p.pfm"));
}

TEST_CASE("a small PNG declaring 60000x60000 is refused on its header, in little memory") {
  Sandbox box;
  write_bomb(box / "bomb.png", 60000, 60000);
  CHECK(fs::file_size(box / "bomb.png") < 1000000);
  const Measured m =
      run_measured(box, {"run", box / "bomb.png", "-f", "box:r=1", "-o", box / "o.png"});
  CHECK(m.code == 65);
  CHECK(has(m.err,
            "bomb.png: declares 60000x60000 = 3.60 gigapixels, over the limit of 1.00 "
            "gigapixels (--max-pixels or HALO_MAX_PIXELS raise it)"));
  CHECK(m.peak_kib <
        rss_bound_kib(200 * 1024));  // PoCL alone is about 80 MiB; the image would be 13 GiB
  CHECK_FALSE(fs::exists(box / "o.png"));
  // hist and compare read the same way.
  Result r = box.halo("hist " + box / "bomb.png");
  CHECK(r.code == 65);
  CHECK(has(r.err, "60000x60000"));
}

TEST_CASE("--max-pixels and HALO_MAX_PIXELS: the flag wins, bad values are usage errors") {
  Sandbox box;
  write_image(box / "in.png", photo(400, 300, 3), SampleType::u8);
  const std::string run = "run " + box / "in.png" + " -o " + box / "o.png";
  Result r = box.halo(run + " --max-pixels 100K");
  CHECK(r.code == 65);
  CHECK(has(r.err, "in.png: declares 400x300 = 0.1 megapixels, over the limit of 0.1 megapixels"));
  r = box.halo(run, "HALO_MAX_PIXELS=119999");
  CHECK(r.code == 65);
  CHECK(box.halo(run, "HALO_MAX_PIXELS=120000").code == 0);
  CHECK(box.halo(run + " --max-pixels 1M", "HALO_MAX_PIXELS=1000").code == 0);
  r = box.halo(run + " --max-pixels 0");
  CHECK(r.code == 64);
  CHECK(has(r.err, "--max-pixels '0': expected a pixel count"));
  r = box.halo(run, "HALO_MAX_MEMORY=lots");
  CHECK(r.code == 64);
  CHECK(has(r.err, "HALO_MAX_MEMORY 'lots'"));
}

TEST_CASE("images held whole are checked against --max-memory before they are read") {
  Sandbox box;
  write_image(box / "in.png", photo(400, 300, 3), SampleType::u8);
  Result r = box.halo("run " + box / "in.png" + " -f box:r=1:border=wrap -o " + box / "o.png" +
                      " --max-memory 1M");
  CHECK(r.code == 65);
  CHECK(has(r.err, "in.png: the whole image ('box:r=1:border=wrap': border=wrap"));
  CHECK(has(r.err, "over the limit of 1.0 MiB; --max-memory or HALO_MAX_MEMORY raise it"));
  CHECK_FALSE(fs::exists(box / "o.png"));
  // hist streams the image; with --stops it reads it whole.
  CHECK(box.halo("hist " + box / "in.png" + " --max-memory 100K").code == 0);
  r = box.halo("hist " + box / "in.png" + " --stops --max-memory 100K");
  CHECK(r.code == 65);
  CHECK(has(r.err, "in.png: the whole image needs 1.7 MiB of memory, over the limit of 100 KiB"));
}

TEST_CASE("the format comes from the content; a known extension with other content is refused") {
  Sandbox box;
  write_image(box / "real.png", photo(31, 17, 3), SampleType::u8);
  write_image(box / "real.pfm", photo(31, 17, 3, PixelType::f32), SampleType::f32);
  fs::copy_file(box / "real.png", box / "png-named.exr");
  fs::copy_file(box / "real.pfm", box / "pfm-named.png");
  Result r = box.halo("run " + box / "png-named.exr" + " -o " + box / "a.png");
  CHECK(r.code == 0);
  CHECK(has(r.err, "png-named.exr: the content is PNG, not OpenEXR; reading it as PNG"));
  CHECK(box.halo("compare " + box / "a.png " + box / "real.png").code == 0);
  r = box.halo("run " + box / "pfm-named.png" + " -o " + box / "b.pfm");
  CHECK(r.code == 0);
  CHECK(has(r.err, "the content is PFM, not PNG"));
  CHECK(box.halo("compare " + box / "b.pfm " + box / "real.pfm --fail 0").code == 0);

  std::ofstream(box / "text.png") << "this is not an image at all\n";
  std::ofstream(box / "text.exr") << "this is not an image at all\n";
  r = box.halo("run " + box / "text.png" + " -o " + box / "c.png");
  CHECK(r.code == 65);
  CHECK(has(r.err, "text.png: not PNG data (the file's first bytes are not PNG's"));
  r = box.halo("run " + box / "text.exr" + " -o " + box / "c.png");
  CHECK(r.code == 65);
  CHECK(has(r.err, "text.exr: not OpenEXR data"));
  // A 34-byte PFM named .png declaring a 357913942-pixel row: refused on its header.
  std::ofstream(box / "wide.png", std::ios::binary) << "PF\n357913942 1\n-1.0\n"
                                                    << std::string(12, '\0');
  const Measured m = run_measured(box, {"run", box / "wide.png", "-o", box / "d.png"});
  CHECK(m.code == 65);
  CHECK(has(m.err, "wide.png: bad PFM width '357913942'"));
  CHECK(m.peak_kib < rss_bound_kib(200 * 1024));
}

TEST_CASE("reports: - is standard output; /dev/stdout, /dev/null and symlinks stay what they are") {
  Sandbox box;
  write_image(box / "in.png", photo(20, 10, 3), SampleType::u8);
  const std::string here = "cd " + box.dir.string() + " &&";
  Result r = box.halo("hist in.png --json -", here);
  CHECK(r.code == 0);
  CHECK(has(r.out, "\"schema\": \"halo.histogram/1\""));
  CHECK(r.out.front() == '{');  // the text report went to stderr
  CHECK(has(r.err, "histogram luma"));
  CHECK_FALSE(fs::exists(box / "-"));
  r = box.halo("hist in.png --csv /dev/stdout", here);
  CHECK(r.code == 0);
  CHECK(has(r.out, "bin,lower,upper,count"));
  CHECK(fs::is_symlink("/dev/stdout"));  // as root, a rename would have replaced it
  CHECK(box.halo("hist in.png --json /dev/null", here).code == 0);
  CHECK(fs::is_character_file("/dev/null"));
  r = box.halo("compare in.png in.png --json -", here);
  CHECK(r.code == 0);
  CHECK(has(r.out, "\"schema\": \"halo-compare/1\""));
  CHECK(has(r.err, "in.png vs in.png"));
  r = box.halo("run in.png -f box:r=1 -o out.png --summary -", here);
  CHECK(r.code == 0);
  CHECK(has(r.out, "\"schema\": \"halo-batch-summary/1\""));
  // A link at the output's name is replaced, never followed: the file it named stays (in a
  // shared folder, a planted link would have had halo write into another user's file).
  std::ofstream(box / "real.json") << "old";
  fs::create_symlink(box / "real.json", box / "link.json");
  CHECK(box.halo("hist in.png --json link.json", here).code == 0);
  CHECK_FALSE(fs::is_symlink(box / "link.json"));
  CHECK(has(Sandbox::read(box / "link.json"), "halo.histogram/1"));
  CHECK(Sandbox::read(box / "real.json") == "old");
}

TEST_CASE("a write past the file size limit: exit 74, the old output intact, no temporary left") {
  Sandbox box;
  write_image(box / "in.png", photo(300, 200, 3), SampleType::u8);  // noise: about 180 KB
  std::ofstream(box / "out.png") << "old";
  // ulimit -f: writes past 20 blocks fail (halo ignores SIGXFSZ, which would kill it).
  const Result r =
      box.halo("run " + box / "in.png" + " -f box:r=1 -o " + box / "out.png", "ulimit -f 20 &&");
  CHECK(r.code == 74);
  CHECK(has(r.err, box / "out.png: write failed"));
  CHECK_FALSE(has(r.err, ".halo-"));  // the output's name, not its temporary's
  CHECK(Sandbox::read(box / "out.png") == "old");
  for (const auto& entry : fs::directory_iterator(box.dir))
    CHECK_FALSE(entry.path().filename().string().starts_with(".halo-"));
}

TEST_CASE("names longer than the file system allows are plain errors, not internal ones") {
  Sandbox box;
  write_image(box / "in.png", photo(8, 6, 3), SampleType::u8);
  const std::string long_name(300, 'a');  // over NAME_MAX: the file system says ENAMETOOLONG
  Result r = box.halo("run " + box / (long_name + ".png[R]") + " -o " + box / "o.png");
  CHECK(r.code == 66);  // fuzz_names: std::filesystem::exists threw here (exit 70)
  r = box.halo("run " + box / "in.png" + " -o " + box / (long_name + ".png"));
  CHECK(r.code == 73);
  r = box.halo("run " + box / "in.png" + " --preset " + long_name + " -o " + box / "o.png");
  CHECK(r.code == 64);
}
