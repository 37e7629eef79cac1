// Pairing for `halo compare` (lib/compare/pairs.cpp): files, folders matched by relative path,
// frame sequences matched by number, -a's parts of multi-part EXRs, and the refusals, with the
// outputs each pair names.
#include <doctest/doctest.h>

#include <ImfChannelList.h>
#include <ImfFrameBuffer.h>
#include <ImfHeader.h>
#include <ImfMultiPartOutputFile.h>
#include <ImfOutputPart.h>
#include <ImfPartType.h>

#include <filesystem>
#include <string>
#include <vector>

#include "compare/pairs.hpp"
#include "core/error.hpp"
#include "io/image_io.hpp"
#include "io/temp_dir.hpp"

using namespace halo;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

void png(const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  write_image(path, PixelBuffer(3, 2, 1, PixelType::u8), SampleType::u8);
}

// An EXR of `parts` parts of 4x2 float R.
void exr_parts(const std::string& path, int parts) {
  std::vector<Imf::Header> headers;
  for (int i = 0; i < parts; ++i) {
    Imf::Header h(4, 2);
    h.channels().insert("R", Imf::Channel(Imf::FLOAT));
    h.setName("part" + std::to_string(i));
    h.setType(Imf::SCANLINEIMAGE);
    headers.push_back(h);
  }
  Imf::MultiPartOutputFile file(path.c_str(), headers.data(), parts);
  std::vector<float> v(8, 0.5f);
  for (int i = 0; i < parts; ++i) {
    Imf::FrameBuffer fb;
    fb.insert("R", Imf::Slice(Imf::FLOAT, reinterpret_cast<char*>(v.data()), 4, 16));
    Imf::OutputPart part(file, i);
    part.setFrameBuffer(fb);
    part.writePixels(2);
  }
}

ErrorKind kind_of(const PairingOptions& o) {
  try {
    pairs_of(o);
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind(0);
}

}  // namespace

TEST_CASE("pairs: two files, and two folders matched by relative path") {
  TempDir dir;
  png(dir / "a.png");
  png(dir / "b.png");
  auto pairs = pairs_of({.a = dir / "a.png", .b = dir / "b.png", .diff_out = dir / "d.png"});
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0].a == dir / "a.png");
  CHECK(pairs[0].diff_out == dir / "d.png");
  // Folders: x.png on both sides, y.png only in A, z.png only in B, sub/w.png with -r only.
  for (const char* f : {"A/x.png", "A/y.png", "B/x.png", "B/z.png", "A/sub/w.png", "B/sub/w.png"})
    png(dir / f);
  pairs = pairs_of({.a = dir / "A", .b = dir / "B", .diff_out = dir / "diffs"});
  REQUIRE(pairs.size() == 3);
  CHECK(pairs[0].a == dir / "A/x.png");
  CHECK(pairs[0].b == dir / "B/x.png");
  CHECK(pairs[0].diff_out == dir / "diffs/x.png");
  CHECK(pairs[1].b == dir / "B/y.png");  // missing: reported by the comparison
  CHECK(pairs[2].a == dir / "A/z.png");
  CHECK(fs::is_directory(dir / "diffs"));
  CHECK(pairs_of({.a = dir / "A", .b = dir / "B", .recursive = true}).size() == 4);
}

TEST_CASE("pairs: two frame sequences by frame number, --frames, outputs per frame") {
  TempDir dir;
  for (const char* f : {"a.0001.png", "a.0002.png", "a.0003.png", "b.0001.png", "b.0003.png"})
    png(dir / f);
  auto pairs =
      pairs_of({.a = dir / "a.####.png", .b = dir / "b.####.png", .diff_out = dir / "diff.png"});
  REQUIRE(pairs.size() == 3);
  CHECK(pairs[1].frame == 2L);
  CHECK(pairs[1].b == dir / "b.0002.png");  // missing: reported by the comparison
  CHECK(pairs[2].diff_out == dir / "diff.0003.png");
  pairs = pairs_of({.a = dir / "a.####.png", .b = dir / "b.####.png", .frames = "3"});
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0].frame == 3L);
}

TEST_CASE("pairs: what cannot be paired is a usage error, an input as output refused") {
  TempDir dir;
  png(dir / "a.png");
  png(dir / "F/a.png");
  png(dir / "s.0001.png");
  CHECK(kind_of({.a = dir / "a.png", .b = dir / "F"}) == ErrorKind::Usage);
  CHECK(kind_of({.a = dir / "s.####.png", .b = dir / "a.png"}) == ErrorKind::Usage);
  CHECK(kind_of({.a = dir / "a.png", .b = dir / "a.png", .frames = "1"}) == ErrorKind::Usage);
  CHECK(kind_of({.a = dir / "a.png", .b = dir / "a.png", .temporal = true}) == ErrorKind::Usage);
  CHECK(kind_of({.a = dir / "a.png", .b = dir / "F/a.png", .diff_out = dir / "./a.png"}) ==
        ErrorKind::CantCreate);
}

TEST_CASE("parts: -a pairs every subimage; differing counts and missing files stay one pair") {
  TempDir dir;
  exr_parts(dir / "two.exr", 2);
  exr_parts(dir / "two-b.exr", 2);
  exr_parts(dir / "three.exr", 3);
  auto parts = every_part({{dir / "two.exr", dir / "two-b.exr", "", "", dir / "d.exr", ""}});
  REQUIRE(parts.size() == 2);
  CHECK(parts[1].part.subimage == 1);
  CHECK(parts[1].part_label == "subimage 1");
  CHECK(parts[1].diff_out == dir / "d-subimage1.exr");
  CHECK(parts[1].file_a);  // opened once, when counted
  parts = every_part({{dir / "two.exr", dir / "three.exr", "", "", "", ""}});
  REQUIRE(parts.size() == 1);
  REQUIRE(parts[0].refused);
  CHECK(parts[0].refused->kind() == ErrorKind::NotComparable);
  parts = every_part({{dir / "two.exr", dir / "missing.exr", "", "", "", ""}});
  REQUIRE(parts.size() == 1);
  CHECK_FALSE(parts[0].refused);  // the comparison reports the missing file
  // One image a file: one pair, unlabelled.
  png(dir / "a.png");
  parts = every_part({{dir / "a.png", dir / "a.png", "", "", "", ""}});
  REQUIRE(parts.size() == 1);
  CHECK(parts[0].part_label.empty());
}
