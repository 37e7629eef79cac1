// `halo run` over many files and `halo compare`, end to end: what a batch script or a CI job
// sees in outputs, messages, summaries and exit codes.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/sandbox.hpp"
#include "io/image_io.hpp"

using namespace halo;
using namespace halo::test;
namespace fs = std::filesystem;

namespace {

std::string q(const std::string& path) {
  return "'" + path + "'";
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

nlohmann::json read_json_text(const std::string& text) {
  return nlohmann::json::parse(text);
}

std::set<std::string> files_in(const std::string& folder) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder))
    names.insert(entry.path().filename().string());
  return names;
}

PixelBuffer pixels_of(const std::string& path) {
  return read_image({path, {}}).pixels;
}

// The folder of the issue: good files, a corrupt PNG, an empty file, an unreadable file, a
// dangling link and a name with spaces and unicode.
void make_mixed_folder(const Sandbox& box) {
  fs::create_directories(box / "in");
  write_image(box / "in/a.png", photo(31, 17, 3), SampleType::u8);
  write_image(box / "in/b.png", photo(8, 5, 4), SampleType::u8);
  write_image(box / "in/my photo ü.png", photo(9, 7, 3), SampleType::u8);
  const std::string good = Sandbox::read(box / "in/a.png");
  std::ofstream(box / "in/corrupt.png") << good.substr(0, good.size() / 2);
  std::ofstream(box / "in/empty.png");
  std::ofstream(box / "in/locked.png") << good;
  fs::permissions(box / "in/locked.png", fs::perms::none);
  fs::create_symlink(box / "nowhere.png", box / "in/dangling.png");
}

// Root reads files whatever their mode: there the locked file is just another good file.
bool locked_is_readable(const Sandbox& box) {
  return ::access((box / "in/locked.png").c_str(), R_OK) == 0;
}

// Runs oiiotool with `args` (files made for a case), which must succeed.
void oiiotool(const std::string& args) {
  REQUIRE(std::system(("oiiotool " + args + " >/dev/null 2>&1").c_str()) == 0);
}

}  // namespace

TEST_CASE("batch over a folder: good files written, each bad one reported, exit 2") {
  Sandbox box;
  make_mixed_folder(box);
  const Result r =
      box.halo("run " + box / "in" + " -f gaussian:r=2 -o " + q(box / "out/{stem}.png") +
               " --mkdir --summary " + box / "summary.json");
  INFO(r.err);
  CHECK(r.code == 2);
  for (const char* bad : {"corrupt.png", "empty.png", "dangling.png"}) {
    CHECK_MESSAGE(has(r.err, "error: " + box / "in/" + bad), bad);
    CHECK_FALSE(fs::exists(box / "out/" + bad));
  }
  CHECK(has(r.err, "file is empty"));
  const bool root = locked_is_readable(box);
  CHECK(fs::exists(box / "out/locked.png") == root);
  if (!root) CHECK(has(r.err, box / "in/locked.png"));
  // Good outputs are exactly what a single run writes.
  for (const char* name : {"a.png", "b.png", "my photo ü.png"}) {
    REQUIRE_MESSAGE(fs::exists(box / "out/" + name), name);
    const Result one =
        box.halo("run " + q(box / "in/" + name) + " -f gaussian:r=2 -o " + q(box / "one.png"));
    CHECK(one.code == 0);
    CHECK(pixels_of(box / "out/" + name).bytes == pixels_of(box / "one.png").bytes);
  }
  const auto summary = read_json(box / "summary.json");
  CHECK(summary["exit_code"] == 2);
  CHECK(summary["totals"]["files"] == 7);
  CHECK(summary["totals"]["ok"] == (root ? 4 : 3));
  CHECK(summary["totals"]["failed"] == (root ? 3 : 4));
  for (const auto& file : summary["files"]) {
    const std::string input = file["input"];
    const bool bad = has(input, "corrupt") || has(input, "empty") || has(input, "dangling") ||
                     (has(input, "locked") && !root);
    CHECK_MESSAGE(file["status"] == (bad ? "failed" : "ok"), input);
    CHECK(file["error"].is_null() != bad);
    if (has(input, "corrupt")) CHECK(file["exit_code"] == 65);
    if (has(input, "dangling")) CHECK(file["exit_code"] == 66);
  }
  // --fail-fast: one failure and the rest are not run (one worker: the order is the folder's).
  const Result fast = box.halo("run " + box / "in" + " -f edge -o " + q(box / "fast/{stem}.png") +
                               " --mkdir -j 1 --fail-fast --summary " + box / "fast.json");
  CHECK(fast.code == 2);
  const auto totals = read_json(box / "fast.json")["totals"];
  CHECK(totals["failed"] == 1);
  CHECK(totals["not_run"].get<int>() >= 1);
}

TEST_CASE("--skip-existing finishes an interrupted run; --no-clobber refuses") {
  Sandbox box;
  fs::create_directories(box / "in");
  fs::create_directories(box / "out");
  for (const char* name : {"1.png", "2.png", "3.png"})
    write_image(box / "in/" + name, photo(12, 9, 3), SampleType::u8);
  // What a killed run leaves: one output finished, one temporary file under a hidden name.
  write_image(box / "out/1.png", photo(5, 5, 1), SampleType::u8);
  std::ofstream(box / "out/.halo-99999-2.png") << "half";
  const std::string cmd = "run " + box / "in" + " -f sharpen -o " + q(box / "out/{stem}.png");
  const Result r = box.halo(cmd + " --skip-existing --summary " + box / "s.json");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(pixels_of(box / "out/1.png").width == 5);  // left alone
  CHECK(pixels_of(box / "out/2.png").width == 12);
  CHECK(pixels_of(box / "out/3.png").width == 12);
  const auto files = read_json(box / "s.json")["files"];
  CHECK(files[0]["status"] == "skipped");
  CHECK(files[1]["status"] == "ok");
  const Result refused = box.halo(cmd + " --no-clobber");
  CHECK(refused.code == 2);
  CHECK(has(refused.err, "not overwritten (--no-clobber)"));
  CHECK(pixels_of(box / "out/1.png").width == 5);
  const Result single =
      box.halo("run " + box / "in/1.png -f sharpen -o " + box / "out/1.png --no-clobber");
  CHECK(single.code == 73);
  // Without either flag outputs are replaced, atomically; no temporary file stays behind.
  CHECK(box.halo(cmd).code == 0);
  CHECK(pixels_of(box / "out/1.png").width == 12);
  for (const auto& name : files_in(box / "out"))
    CHECK_MESSAGE((name.rfind(".halo-", 0) != 0 || name == ".halo-99999-2.png"), name);
}

TEST_CASE("sequences, globs and templates name inputs and outputs; planning errors come first") {
  Sandbox box;
  fs::create_directories(box / "seq");
  for (int f : {1, 2, 4})
    write_image(box / ("seq/shot.000" + std::to_string(f) + ".png"), photo(6, 4, 3),
                SampleType::u8);
  Result r = box.halo("run " + q(box / "seq/shot.####.png") + " -f edge -o " +
                      q(box / "o1/f{frame}{ext}") + " --mkdir");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(files_in(box / "o1") == std::set<std::string>{"f0001.png", "f0002.png", "f0004.png"});
  r = box.halo("run " + q(box / "seq/shot.%04d.png") + " --frames 1-4 -f edge -o " +
               q(box / "o2/{stem}.exr") + " --mkdir");
  CHECK(r.code == 2);  // frame 3 is missing
  CHECK(has(r.err, "shot.0003.png: no such file"));
  CHECK(files_in(box / "o2") ==
        std::set<std::string>{"shot.0001.exr", "shot.0002.exr", "shot.0004.exr"});
  // A range far larger than the sequence (a typo) is refused at once, not listed frame by
  // frame (2 million frames: 17 s and 1.5 GB before anything ran).
  const Measured m = run_measured(box, {"run", box / "seq/shot.####.png", "--frames", "1-2000000",
                                        "-f", "edge", "-o", box / "o5/{stem}.png", "--mkdir"});
  CHECK(m.code == 66);
  CHECK(has(m.err,
            "--frames '1-2000000' asks for 2000000 frames, 1999997 of which do not exist "
            "(the sequence has 3, 1-4)"));
  CHECK(m.peak_kib < 200 * 1024);
  CHECK_FALSE(fs::exists(box / "o5"));
  r = box.halo("run " + q(box / "seq/*.png") + " -f edge -o " + q(box / "o3/{name}") + " --mkdir");
  CHECK(r.code == 0);
  CHECK(files_in(box / "o3").size() == 3);

  const std::string two = "run " + box / "seq/shot.0001.png " + box / "seq/shot.0002.png -f edge";
  r = box.halo(two + " -o " + box / "x.png");
  CHECK(r.code == 64);
  CHECK(has(r.err, "names one file but there are 2 inputs"));
  r = box.halo(two + " -o " + q(box / "{bogus}.png"));
  CHECK(r.code == 64);
  CHECK(has(r.err, "unknown field {bogus}"));
  r = box.halo(two + " -o " + q(box / "same{ext}"));
  CHECK(r.code == 64);
  CHECK(has(r.err, "would be written twice"));
  r = box.halo(two + " -o " + q(box / "seq/{name}") + " --overwrite-input");
  CHECK(r.code == 0);  // each output replaces its own input only when asked
  r = box.halo(two + " -o " + q(box / "seq/{name}"));
  CHECK(r.code == 73);
  CHECK(has(r.err, "(use --overwrite-input)"));
  // Another input is never overwritten, --overwrite-input or not.
  r = box.halo(two + " -o " + q(box / "seq/shot.0002{ext}") + " --overwrite-input");
  CHECK(r.code == 73);
  CHECK(has(r.err, "refusing to overwrite the input " + box / "seq/shot.0002.png"));
  r = box.halo(two + " -o " + q(box / "nofolder/{stem}.png"));
  CHECK(r.code == 73);
  CHECK(has(r.err, "--mkdir"));
  CHECK_FALSE(fs::exists(box / "nofolder"));
  r = box.halo("run " + box / "seq" + " -f edge -o " + q(box / "o4/{stem}.png") + " --frames 1-2");
  CHECK(r.code == 64);
}

TEST_CASE("--shard K/N: shards are disjoint and together cover every input") {
  Sandbox box;
  fs::create_directories(box / "in");
  for (int i = 0; i < 7; ++i)
    write_image(box / ("in/" + std::to_string(i) + ".png"), photo(5, 3, 1), SampleType::u8);
  std::multiset<std::string> all;
  for (int k = 1; k <= 2; ++k) {
    const std::string out = box / ("shard" + std::to_string(k));
    const Result r = box.halo("run " + box / "in -f box:r=1 -o " + q(out + "/{stem}.png") +
                              " --mkdir --shard " + std::to_string(k) + "/2");
    INFO(r.err);
    CHECK(r.code == 0);
    for (const auto& name : files_in(out)) all.insert(name);
    CHECK(files_in(out).size() == (k == 1 ? 4 : 3));
  }
  CHECK(all.size() == 7);
  CHECK(std::set<std::string>(all.begin(), all.end()).size() == 7);
  CHECK(box.halo("run " + box / "in -f edge -o " + q(box / "{stem}.png") + " --shard 3/2").code ==
        64);
}

TEST_CASE("halo summary merges shard reports: totals, failed files, inputs processed twice") {
  Sandbox box;
  make_mixed_folder(box);
  const bool root = locked_is_readable(box);
  for (int k = 1; k <= 3; ++k) {
    const std::string shard = std::to_string(k);
    box.halo("run " + box / "in -f box:r=1 -o " + q(box / "out/{stem}.png") + " --mkdir --shard " +
             shard + "/3 --summary " + box / ("shard-" + shard + ".json"));
  }
  const std::string reports = q(box / "shard-*.json");  // halo expands the pattern
  const Result r = box.halo("summary " + reports + " --json " + box / "all.json");
  INFO(r.err);
  CHECK(r.code == 2);  // the corrupt, empty and dangling files failed
  const auto all = read_json(box / "all.json");
  const std::size_t failed = root ? 3 : 4;
  CHECK(all["totals"]["files"] == 7);
  CHECK(all["totals"]["ok"] == 7 - failed);
  CHECK(all["totals"]["failed"] == failed);
  CHECK(all["shards"].size() == 3);
  CHECK(all["duplicates"].empty());
  std::set<std::string> inputs;
  for (const auto& f : all["files"])
    inputs.insert(fs::path(f["input"].get<std::string>()).filename());
  CHECK(inputs.size() == 7);
  CHECK(has(r.out, "3 shards, 7 files: " + std::to_string(7 - failed) + " ok"));
  CHECK(has(r.out, "failed: " + box / "in/corrupt.png"));
  CHECK(has(r.out, "failed: " + box / "in/empty.png"));

  // A shard counted twice is found; all good shards merge to exit 0; the JSON can go to stdout.
  const Result twice = box.halo("summary " + box / "shard-1.json " + box / "shard-1.json");
  CHECK(twice.code == 2);
  CHECK(has(twice.out, "processed by more than one shard: "));
  box.halo("run " + box / "in/a.png -f edge -o " + box / "one.png --summary " + box / "one.json");
  const Result good = box.halo("summary " + box / "one.json --json -");
  CHECK(good.code == 0);
  CHECK(read_json_text(good.out)["totals"]["ok"] == 1);
  CHECK(has(good.err, "1 shards, 1 files: 1 ok"));

  // Not a report, cut short, missing.
  std::ofstream(box / "cut.json") << "{\"schema\": \"halo-batch-summary/1\", \"files\": [";
  CHECK(box.halo("summary " + box / "cut.json").code == 65);
  std::ofstream(box / "other.json") << "{\"schema\": \"halo-compare/1\"}";
  const Result other = box.halo("summary " + box / "other.json");
  CHECK(other.code == 65);
  CHECK(has(other.err, "not a halo run --summary report"));
  CHECK(box.halo("summary " + box / "nothing.json").code == 66);
  CHECK(box.halo("summary " + q(box / "nothing-*.json")).code == 66);
}

TEST_CASE("--verify over a batch reports every file and stage") {
  Sandbox box;
  fs::create_directories(box / "in");
  for (const char* name : {"a.png", "b.png"})
    write_image(box / "in/" + name, photo(23, 11, 3), SampleType::u8);
  const Result r = box.halo("run " + box / "in -f sharpen -f box:r=2 -o " +
                            q(box / "out/{stem}.png") + " --mkdir --verify");
  INFO(r.err);
  CHECK(r.code == 0);
  for (const char* name : {"a.png", "b.png"}) {
    CHECK(has(r.out, box / "in/" + name + " -> " + box / "out/" + name));
  }
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = r.out.find("verify sharpen", at)) != std::string::npos; ++at)
    ++lines;
  CHECK(lines == 2);
  CHECK_FALSE(has(r.out, "MISMATCH"));
}

TEST_CASE("compare: idiff thresholds, exit codes, diff image only on failure, JSON") {
  Sandbox box;
  PixelBuffer a = photo(10, 6, 3, PixelType::f32), b = a, c = photo(10, 7, 3, PixelType::f32);
  b.samples<float>()[0] += 0.001f;  // pixel (0,0) channel R
  b.samples<float>()[4] += 0.1f;    // pixel (1,0) channel G
  write_image(box / "a.exr", a, SampleType::f32);
  write_image(box / "b.exr", b, SampleType::f32);
  write_image(box / "c.exr", c, SampleType::f32);
  const std::string ab = "compare " + box / "a.exr " + box / "b.exr";
  CHECK(box.halo("compare " + box / "a.exr " + box / "a.exr").code == 0);
  Result r = box.halo(ab + " --json " + box / "r.json --diff-out " + box / "d.exr");
  CHECK(r.code == 1);
  CHECK(has(r.out, "FAILURE"));
  CHECK(has(r.out, "2 pixels (3.33%) over fail 1e-06"));
  CHECK(has(r.out, "at (1, 0) channel G"));
  const auto json = read_json(box / "r.json");
  CHECK(json["schema"] == "halo-compare/1");
  CHECK(json["exit_code"] == 1);
  CHECK(json["pairs"][0]["failed_pixels"] == 2);
  CHECK(json["pairs"][0]["worst"]["channel"] == "G");
  CHECK(json["pairs"][0]["worst"]["x"] == 1);
  CHECK(json["pairs"][0]["max_error"].get<double>() == doctest::Approx(0.1).epsilon(1e-5));
  const LoadedImage diff = read_image({box / "d.exr", {}});
  CHECK(diff.pixels.samples<float>()[4] == doctest::Approx(0.1).epsilon(1e-5));
  CHECK(diff.pixels.samples<float>()[1] == 0.0f);
  CHECK(box.halo(ab + " --fail 0.01").code == 1);  // one pixel still fails
  // None fails: idiff passes, although both pixels are over --warn.
  CHECK(has(box.halo(ab + " --fail 0.2").out, "PASS"));
  CHECK(box.halo(ab + " --allowfailures 2").code == 0);
  CHECK(box.halo(ab + " --allowfailures 1").code == 1);
  CHECK(box.halo(ab + " --failpercent 3.4").code == 0);            // 2 of 60 pixels = 3.33%
  CHECK(has(box.halo(ab + " --failpercent 3.4").out, "WARNING"));  // allowed, but over --warn
  CHECK(box.halo(ab + " --failpercent 3.4 --idiff-exit-codes").code == 1);
  CHECK(has(box.halo(ab + " --failpercent 3.4 --warn 0.5").out, "PASS"));
  CHECK(box.halo(ab + " --failpercent 3.3").code == 1);
  CHECK(box.halo(ab + " --failpercent 3.3 --idiff-exit-codes").code == 2);
  CHECK(box.halo(ab + " --failpercent 5 --hardfail 0.05").code == 1);    // 0.1 is over it
  CHECK(box.halo(ab + " --allowfailures 2 --hardfail 0.05").code == 0);  // allowed by any amount
  CHECK(box.halo(ab + " --failrelative 0.5").code == 0);  // 0.1 is under half the values
  // idiff's spellings.
  CHECK(box.halo(ab + " -fail 0.01").code == 1);
  CHECK(box.halo(ab + " -fail 0.2").code == 0);
  CHECK(box.halo(ab + " -failpercent 3.4 -hardfail 0.05 --idiff-exit-codes").code == 2);
  // idiff's -o: a - b (here -0.1 * 10), signed unless -abs, written whatever the verdict,
  // with -od only when the images differ.
  r = box.halo(ab + " -allowfailures 1 -o " + box / "d2.exr -scale 10");
  CHECK(r.code == 1);
  CHECK(read_image({box / "d2.exr", {}}).pixels.samples<float>()[4] ==
        doctest::Approx(-1.0).epsilon(1e-4));
  CHECK(box.halo(ab + " -fail 0.2 -abs -o " + box / "d3.exr").code == 0);
  CHECK(read_image({box / "d3.exr", {}}).pixels.samples<float>()[4] ==
        doctest::Approx(0.1).epsilon(1e-4));
  CHECK(box.halo("compare " + box / "a.exr " + box / "a.exr -od -o " + box / "d4.exr").code == 0);
  CHECK_FALSE(fs::exists(box / "d4.exr"));
  CHECK(box.halo("compare " + box / "a.exr " + box / "a.exr -o " + box / "d4.exr").code == 0);
  CHECK(fs::exists(box / "d4.exr"));
  CHECK(box.halo(ab + " -o " + box / "d5.exr --diff-out " + box / "d6.exr").code == 64);
  r = box.halo(ab + " --fail 0.2 --diff-out " + box / "none.exr");
  CHECK(r.code == 0);
  CHECK_FALSE(fs::exists(box / "none.exr"));
  r = box.halo("compare " + box / "a.exr " + box / "c.exr");
  CHECK(r.code == 3);
  CHECK(has(r.err, "not comparable"));
  CHECK(box.halo("compare " + box / "a.exr " + box / "missing.exr").code == 66);
  // idiff 2.4: images that cannot be compared are a failure; a missing file is 4.
  CHECK(box.halo("compare --idiff-exit-codes " + box / "a.exr " + box / "c.exr").code == 2);
  CHECK(box.halo("compare --idiff-exit-codes " + box / "a.exr " + box / "missing.exr").code == 4);

  // Folders: same-named files; a name on one side only is not comparable.
  for (const char* dir : {"x", "y"}) fs::create_directories(box / dir);
  write_image(box / "x/1.exr", a, SampleType::f32);
  write_image(box / "y/1.exr", a, SampleType::f32);
  CHECK(box.halo("compare " + box / "x " + box / "y").code == 0);
  write_image(box / "x/2.exr", a, SampleType::f32);
  write_image(box / "y/2.exr", b, SampleType::f32);
  r = box.halo("compare " + box / "x " + box / "y --diff-out " + box / "diffs");
  CHECK(r.code == 1);
  CHECK(has(r.out, "2 pairs: 1 passed, 0 warned, 1 failed, 0 not comparable"));
  CHECK(files_in(box / "diffs") == std::set<std::string>{"2.exr"});
  write_image(box / "y/3.exr", a, SampleType::f32);
  CHECK(box.halo("compare " + box / "x " + box / "y").code == 3);
  CHECK(box.halo("compare " + box / "x " + box / "a.exr").code == 64);
}

// A TIFF's directories are its subimages; OpenImageIO's TIFF reader states no count, so halo
// counts them: -a compares each (as idiff -a), and without -a the report says what it left out.
TEST_CASE("compare -a: a multi-directory TIFF's every directory") {
  Sandbox box;
  PixelBuffer a = photo(8, 6, 3), b = a;
  b.samples<std::uint8_t>()[5] ^= 0x40;
  write_image(box / "a.tif", a, SampleType::u8);
  write_image(box / "b.tif", b, SampleType::u8);
  oiiotool(box / "a.tif " + box / "a.tif --siappend -o " + box / "aa.tif");
  oiiotool(box / "a.tif " + box / "b.tif --siappend -o " + box / "ab.tif");
  Result r = box.halo("compare -a " + box / "aa.tif " + box / "ab.tif");
  CHECK(r.code == 1);
  CHECK(has(r.out, "(subimage 1): FAILURE"));
  CHECK(has(r.out, "2 pairs: 1 passed, 0 warned, 1 failed"));
  r = box.halo("compare " + box / "aa.tif " + box / "ab.tif");
  CHECK(r.code == 0);
  CHECK(has(r.out, "only the first subimage compared (of 2 and 2)"));
}

TEST_CASE("compare -a: every subimage and MIP level, each a pair of the report") {
  Sandbox box;
  PixelBuffer a = photo(8, 6, 3, PixelType::f32), b = a;
  b.samples<float>()[3] += 0.25f;  // pixel (1,0) channel R
  write_image(box / "a.exr", a, SampleType::f32);
  write_image(box / "b.exr", b, SampleType::f32);
  // Two-part files (oiiotool --siappend) and mipmapped ones (-otex: 8x6, 4x3, 2x1, 1x1).
  oiiotool(box / "a.exr " + box / "a.exr --siappend -o " + box / "aa.exr");
  oiiotool(box / "a.exr " + box / "b.exr --siappend -o " + box / "ab.exr");
  oiiotool(box / "a.exr " + box / "a.exr " + box / "a.exr --siappend --siappend -o " +
           box / "aaa.exr");
  oiiotool(box / "a.exr -otex " + box / "ma.exr");
  oiiotool(box / "b.exr -otex " + box / "mb.exr");
  // Without -a only the first parts, which are equal; with it the second part fails.
  CHECK(box.halo("compare " + box / "aa.exr " + box / "ab.exr").code == 0);
  Result r = box.halo("compare -a " + box / "aa.exr " + box / "ab.exr --json " + box / "r.json" +
                      " --diff-out " + box / "d.exr");
  CHECK(r.code == 1);
  CHECK(has(r.out, "(subimage 0): PASS"));
  CHECK(has(r.out, "(subimage 1): FAILURE"));
  CHECK_FALSE(has(r.err, "only the first subimage"));
  auto json = read_json(box / "r.json");
  REQUIRE(json["pairs"].size() == 2);
  CHECK(json["pairs"][1]["subimage"] == 1);
  CHECK(json["pairs"][1]["miplevel"] == 0);
  CHECK(json["pairs"][1]["max_error"].get<double>() == doctest::Approx(0.25).epsilon(1e-5));
  CHECK(json["pairs"][1]["worst"]["x"] == 1);
  CHECK(json["pairs"][0]["max_error"] == 0);
  // The failing part's difference image carries its name.
  CHECK(files_in(box.dir.string()).count("d-subimage1.exr") == 1);
  CHECK(files_in(box.dir.string()).count("d-subimage0.exr") == 0);
  // MIP levels: 4 of each, every one compared at its own size.
  r = box.halo("compare --all-parts " + box / "ma.exr " + box / "mb.exr --json " + box / "m.json");
  CHECK(r.code == 1);
  json = read_json(box / "m.json");
  REQUIRE(json["pairs"].size() == 4);
  CHECK(json["pairs"][0]["pixels"] == 48);
  CHECK(json["pairs"][1]["pixels"] == 12);
  CHECK(json["pairs"][3]["pixels"] == 1);
  CHECK(json["pairs"][3]["miplevel"] == 3);
  CHECK(has(r.out, "(MIP level 0): FAILURE"));
  // A part's difference image never replaces an input (d-mip1.exr here) nor a report: 64
  // before anything is compared, the input kept.
  fs::copy_file(box / "ma.exr", box / "d-mip1.exr");
  const auto before = fs::file_size(box / "d-mip1.exr");
  r = box.halo("compare -a " + box / "d-mip1.exr " + box / "mb.exr --diff-out " + box / "d.exr");
  CHECK(r.code == 64);
  CHECK(has(r.err, "--diff-out " + box / "d-mip1.exr: refusing to overwrite the input"));
  CHECK(fs::file_size(box / "d-mip1.exr") == before);
  CHECK_FALSE(fs::exists(box / "d-mip0.exr"));
  r = box.halo("compare -a " + box / "ma.exr " + box / "mb.exr --diff-out " + box / "e.exr" +
               " --json " + box / "e-mip2.exr");
  CHECK(r.code == 64);
  CHECK(has(r.err, "--json and --diff-out name the same file"));
  // Counts that differ: not comparable (3); idiff 2.4.7 exits 2 for subimages, 3 for levels.
  r = box.halo("compare -a " + box / "aa.exr " + box / "aaa.exr");
  CHECK(r.code == 3);
  CHECK(has(r.err, "has 2 subimages"));
  CHECK(box.halo("compare -a --idiff-exit-codes " + box / "aa.exr " + box / "aaa.exr").code == 2);
  r = box.halo("compare -a --idiff-exit-codes " + box / "ma.exr " + box / "a.exr");
  CHECK(r.code == 3);
  CHECK(has(r.err, "has 4 MIP levels"));
  // Files of one image: -a changes nothing.
  r = box.halo("compare -a " + box / "a.exr " + box / "a.exr");
  CHECK(r.code == 0);
  CHECK_FALSE(has(r.out, "subimage"));
}

TEST_CASE("compare: two frame sequences, their temporal error and flicker by hand, gates") {
  // Flat grey frames: a is 0.2, 0.4, 0.4 and b 0.2, 0.2, 0.4 (8-bit, so in display space as
  // read). The steps into frames 2 and 3 change a by 0.2 and 0 and b by 0 and 0.2: temporal
  // error |0.2 - 0| and |0 - 0.2|, 0.2 each; flicker (no motion vectors: still) 0.1 each.
  Sandbox box;
  const auto flat = [](std::uint8_t code) {
    PixelBuffer p(16, 12, 1, PixelType::u8);
    std::fill_n(p.samples<std::uint8_t>(), p.sample_count(), code);
    return p;
  };
  fs::create_directories(box / "a");
  fs::create_directories(box / "b");
  const std::uint8_t a_codes[] = {51, 102, 102}, b_codes[] = {51, 51, 102};
  for (int f = 1; f <= 3; ++f) {
    write_image(box / ("a/shot." + std::to_string(1000 + f) + ".png"), flat(a_codes[f - 1]),
                SampleType::u8);
    write_image(box / ("b/shot." + std::to_string(1000 + f) + ".png"), flat(b_codes[f - 1]),
                SampleType::u8);
  }
  const std::string seqs =
      "compare " + q(box / "a/shot.####.png") + " " + q(box / "b/shot.####.png");
  Result r = box.halo(seqs + " --metrics temporal --json " + box / "t.json");
  CHECK(r.code == 1);  // idiff's rule still decides each pair: frame 1002 differs
  CHECK(has(r.out,
            "temporal: 2 steps, frames 1001-1003: temporal error 0.2 (largest 0.2 into "
            "frame 1002); flicker a 0.1, b 0.1"));
  CHECK(has(r.out, "a has no motion vectors: taken as still"));
  const auto json = read_json(box / "t.json");
  CHECK(json["temporal"]["temporal_error"].get<double>() == doctest::Approx(0.2));
  CHECK(json["temporal"]["steps"].size() == 2);
  CHECK(json["temporal"]["steps"][0]["frame"] == 1002);
  CHECK(json["temporal"]["steps"][0]["flicker_a"].get<double>() == doctest::Approx(0.2));
  CHECK(json["temporal"]["steps"][1]["flicker_b"].get<double>() == doctest::Approx(0.2));
  CHECK(json["pairs"][1]["a"] == box / "a/shot.1002.png");
  // A gate alone decides: the pairs' samples no longer do.
  CHECK(box.halo(seqs + " --fail-temporal 0.3").code == 0);
  r = box.halo(seqs + " --fail-temporal 0.1 --junit " + box / "t.xml");
  CHECK(r.code == 1);
  CHECK(has(r.out, "FAILURE, temporal error 0.2 above --fail-temporal 0.1"));
  CHECK(has(read_text(box / "t.xml"), "temporal error 0.2 above --fail-temporal 0.1"));
  CHECK(box.halo(seqs + " --fail-flicker 0.05").code == 1);
  CHECK(box.halo(seqs + " --fail-flicker 0.15").code == 0);
  // --frames picks; a frame b lacks is a pair that cannot be compared, and no step crosses it.
  r = box.halo(seqs + " --frames 1001-1003x2 --fail-temporal 1");
  CHECK(r.code == 1);  // a gate that measured nothing fails
  CHECK(has(r.out, "temporal: no two consecutive frames compared: FAILURE"));
  CHECK(box.halo(seqs + " --frames 1001-1003x2 --metrics temporal --fail 1").code == 0);
  fs::remove(box / "b/shot.1002.png");
  r = box.halo(seqs + " --fail-temporal 1");
  CHECK(r.code == 3);
  CHECK(has(r.out, "temporal: no two consecutive frames compared"));
  // A cut: every pixel's depth changes (1 to 10), so none is seen in both frames: the flicker
  // is not measured (null), and its gate fails rather than passing on nothing.
  for (const auto& [f, z] : {std::pair{"1", "1"}, std::pair{"2", "10"}})
    REQUIRE(std::system(("oiiotool --pattern constant:color=0.5,0.5,0.5," + std::string(z) +
                         " 16x12 4 --chnames R,G,B,Z -d float -o " + box / "cut.000" + f +
                         ".exr >/dev/null 2>&1")
                            .c_str()) == 0);
  r = box.halo("compare " + q(box / "cut.####.exr") + " " + q(box / "cut.####.exr") +
               " --fail-flicker 0.5 --json " + box / "cut.json");
  CHECK(r.code == 1);
  CHECK(has(r.out, "no pixel seen in both frames of any step: --fail-flicker cannot hold"));
  CHECK(read_json(box / "cut.json")["temporal"]["flicker_a"].is_null());
  // Sequences only.
  const std::string file = box / "a/shot.1001.png";
  CHECK(box.halo("compare " + q(box / "a/shot.####.png") + " " + file).code == 64);
  CHECK(box.halo("compare " + file + " " + file + " --frames 1-2").code == 64);
  r = box.halo("compare " + file + " " + file + " --metrics temporal");
  CHECK(r.code == 64);
  CHECK(has(r.err, "--metrics temporal needs two frame sequences"));
}

TEST_CASE("compare: SSIM by hand, a CI gate alone or beside idiff's rule; JUnit reports") {
  Sandbox box;
  // Flat images: means 0.5 and 0.25, no variance, so SSIM = (2 ux uy + C1) C2 / ((ux^2 + uy^2 +
  // C1) C2) = 0.2501 / 0.3126 with C1 = (0.01 * 1)^2.
  PixelBuffer half(24, 16, 1, PixelType::f32), quarter(24, 16, 1, PixelType::f32);
  std::fill_n(half.samples<float>(), half.sample_count(), 0.5f);
  std::fill_n(quarter.samples<float>(), quarter.sample_count(), 0.25f);
  write_image(box / "half.pfm", half, SampleType::f32);
  write_image(box / "quarter.pfm", quarter, SampleType::f32);
  const std::string pair = "compare " + box / "half.pfm " + box / "quarter.pfm";
  Result r = box.halo(pair + " --metrics ssim --json " + box / "s.json");
  CHECK(r.code == 1);  // idiff's rule: every pixel over --fail
  const auto json = read_json(box / "s.json");
  CHECK(json["pairs"][0]["ssim"]["mean"].get<double>() == doctest::Approx(0.2501 / 0.3126));
  CHECK(json["pairs"][0]["ssim"]["channels"]["Y"].get<double>() ==
        doctest::Approx(0.2501 / 0.3126));
  CHECK(json["metrics"] == nlohmann::json::array({"ssim"}));
  // Twice the range: C1 four times larger.
  box.halo(pair + " --metrics ssim --ssim-range 2 --json " + box / "s2.json");
  CHECK(read_json(box / "s2.json")["pairs"][0]["ssim"]["mean"].get<double>() ==
        doctest::Approx(0.2504 / 0.3129));
  // --fail-ssim alone decides: 0.80006 passes 0.8, fails 0.81; with --fail both rules apply.
  CHECK(box.halo(pair + " --fail-ssim 0.8").code == 0);
  r = box.halo(pair + " --fail-ssim 0.81");
  CHECK(r.code == 1);
  CHECK(has(r.out, "SSIM 0.800064 below --fail-ssim 0.81"));
  CHECK(box.halo(pair + " --fail-ssim 0.8 --fail 0.1").code == 1);
  CHECK(box.halo(pair + " --fail-ssim 0.8 --fail 0.3").code == 0);
  CHECK(box.halo(pair + " --fail-ssim 0.81 --idiff-exit-codes").code == 2);
  CHECK(box.halo("compare " + box / "half.pfm " + box / "half.pfm --fail-ssim 1").code == 0);
  // On the device, checked against the reference.
  r = box.halo("--device 0 " + pair + " --fail-ssim 0.8 --verify");
  CHECK(r.code == 0);
  CHECK(has(r.out, "verify ssim on "));
  CHECK(has(r.out, ": ok: mean 0.800064"));
  // Under one 11x11 window SSIM is not defined: not comparable, saying why.
  write_image(box / "small.pfm", photo(7, 5, 3, PixelType::f32), SampleType::f32);
  r = box.halo("compare " + box / "small.pfm " + box / "small.pfm --metrics ssim");
  CHECK(r.code == 3);
  CHECK(has(r.err, "at least 11x11"));
  CHECK(box.halo("compare " + box / "half.pfm " + box / "quarter.pfm --metrics psnr").code == 64);
  for (const char* bad : {"2", "nan", "-inf", "x"}) {
    CAPTURE(bad);
    CHECK(box.halo(pair + " --fail-ssim " + bad).code == 64);
    CHECK(box.halo(pair + " --metrics ssim --ssim-range " + bad).code == (bad[0] == '2' ? 1 : 64));
  }
  CHECK(box.halo(pair + " --metrics ssim --ssim-range 0").code == 64);

  // JUnit: one case per pair, failures with their reason, names escaped.
  for (const char* dir : {"gold", "out"}) fs::create_directories(box / dir);
  write_image(box / "gold/a&<b>.pfm", half, SampleType::f32);
  write_image(box / "out/a&<b>.pfm", half, SampleType::f32);
  write_image(box / "gold/q.pfm", half, SampleType::f32);
  write_image(box / "out/q.pfm", quarter, SampleType::f32);
  write_image(box / "gold/only.pfm", half, SampleType::f32);
  // U+FFFE: valid UTF-8 in a file name, a character XML 1.0 cannot hold.
  write_image(box / "gold/n\xEF\xBF\xBE.pfm", half, SampleType::f32);
  write_image(box / "out/n\xEF\xBF\xBE.pfm", half, SampleType::f32);
  r = box.halo("compare " + box / "gold " + box / "out --fail-ssim 0.9 --junit " +
               box / "report.xml");
  CHECK(r.code == 3);  // only.pfm has no partner
  const std::string xml = read_text(box / "report.xml");
  CHECK(has(xml, "<testsuite name=\"halo compare\" tests=\"4\" failures=\"1\" errors=\"1\""));
  CHECK(has(xml, "a&amp;&lt;b&gt;.pfm"));
  CHECK(has(xml, "n\xEF\xBF\xBD.pfm"));  // U+FFFD in its place
  CHECK_FALSE(has(xml, "\xEF\xBF\xBE"));
  CHECK(has(xml, "<failure message=\"SSIM 0.800064 below --fail-ssim 0.9\">"));
  CHECK(has(xml, "<error message="));
  CHECK_FALSE(has(xml, "a&<b>"));
}

// FLIP weighs finite colours only; a test image with NaN or infinities where the reference has
// numbers must not pass its gate on the finite pixels' mean.
TEST_CASE("compare: --fail-flip alone fails NaN and infinities that FLIP cannot weigh") {
  Sandbox box;
  PixelBuffer ref = photo(32, 24, 3, PixelType::f32), test = ref;
  float* t = test.samples<float>();
  t[3] = std::numeric_limits<float>::quiet_NaN();
  t[100] = std::numeric_limits<float>::infinity();
  t[200] = -std::numeric_limits<float>::infinity();
  write_image(box / "ref.exr", ref, SampleType::f32);
  write_image(box / "test.exr", test, SampleType::f32);
  const Result r = box.halo("compare " + box / "ref.exr " + box / "test.exr --fail-flip 0.5");
  CHECK(r.code == 1);
  CHECK(has(r.out, "FAILURE"));
  CHECK(has(r.out + r.err, "3 samples NaN or infinite where the other image has a number"));
  // The same NaN in both images is no difference.
  CHECK(box.halo("compare " + box / "test.exr " + box / "test.exr --fail-flip 0.5").code == 0);
}

TEST_CASE("compare: FLIP by hand, LDR and HDR, its heat map and its gate") {
  Sandbox box;
  // Flat black against flat white: no features, so FLIP is the remapped colour difference.
  // HyAB(black, white) = 100, 100^0.7 = 25.1189; the largest difference (green to blue)
  // 203.3017^0.7 = 41.2761, of which 0.4 is 16.5104; 25.1189 is above it, so the error is
  // 0.95 + (25.1189 - 16.5104) / (41.2761 - 16.5104) * 0.05 = 0.967380. Within 2e-5: the
  // derivative filters' float sums leave ~1e-8 on a flat image, whose square root (FLIP's
  // feature exponent 0.5) is ~1e-4 of the exponent, as in NVIDIA's float implementation.
  PixelBuffer black(16, 12, 3, PixelType::u8), white(16, 12, 3, PixelType::u8);
  std::fill_n(white.samples<std::uint8_t>(), white.sample_count(), std::uint8_t(255));
  write_image(box / "black.png", black, SampleType::u8);
  write_image(box / "white.png", white, SampleType::u8);
  const std::string pair = "compare " + box / "black.png " + box / "white.png";
  Result r = box.halo(pair + " --metrics flip --json " + box / "f.json --fail-flip 0.5 " +
                      "--diff-out " + box / "heat.png");
  CHECK(r.code == 1);
  CHECK(has(r.out, "FLIP mean 0.9673"));
  auto flip = read_json(box / "f.json")["pairs"][0]["flip"];
  CHECK(flip["mean"].get<double>() == doctest::Approx(0.9673798).epsilon(2e-5));
  CHECK(flip["max"].get<double>() == doctest::Approx(0.9673798).epsilon(2e-5));
  CHECK(flip["hdr"] == false);
  // The heat map: magma's entry round(0.96738 * 255) = 247, (0.989815, 0.934329, 0.690198).
  const PixelBuffer heat = pixels_of(box / "heat.png");
  REQUIRE(heat.channels == 3);
  CHECK(int(heat.samples<std::uint8_t>()[0]) == 252);
  CHECK(int(heat.samples<std::uint8_t>()[1]) == 238);
  CHECK(int(heat.samples<std::uint8_t>()[2]) == 176);
  CHECK(box.halo(pair + " --fail-flip 0.97").code == 0);
  CHECK(box.halo("compare " + box / "black.png " + box / "black.png --fail-flip 0").code == 0);

  // Float files get HDR-FLIP: exposures from the reference, each tone-mapped.
  PixelBuffer render = photo(24, 20, 3, PixelType::f32), brighter = render;
  for (std::size_t i = 0; i < render.sample_count(); ++i) {
    render.samples<float>()[i] *= 8.0f;
    brighter.samples<float>()[i] = render.samples<float>()[i] * 1.25f;
  }
  write_image(box / "r.pfm", render, SampleType::f32);
  write_image(box / "b.pfm", brighter, SampleType::f32);
  const std::string hdr = "compare " + box / "r.pfm " + box / "b.pfm --metrics flip --json ";
  box.halo(hdr + box / "h.json");
  flip = read_json(box / "h.json")["pairs"][0]["flip"];
  CHECK(flip["hdr"] == true);
  CHECK(flip["exposures"]["count"].get<int>() >= 2);
  CHECK(flip["mean"].get<double>() > 0);
  box.halo(hdr + box / "h2.json --flip-start -3 --flip-stop 1 --flip-tonemapper hable");
  flip = read_json(box / "h2.json")["pairs"][0]["flip"];
  CHECK(flip["exposures"]["start"] == -3);
  CHECK(flip["exposures"]["count"] == 4);
  // The exposure map: viridis, dark at the first exposure, yellow at the last.
  box.halo(hdr + box / "h3.json --flip-exposure-map " + box / "exposure.png");
  const PixelBuffer exposure = pixels_of(box / "exposure.png");
  CHECK(exposure.width == 24);
  CHECK(exposure.channels == 3);
  box.halo(pair + " --flip-exposure-map " + box / "none.png");  // LDR: no exposures
  CHECK_FALSE(fs::exists(box / "none.png"));
  box.halo(hdr + box / "l.json --flip-mode ldr");
  CHECK(read_json(box / "l.json")["pairs"][0]["flip"]["hdr"] == false);
  r = box.halo(hdr + box / "x.json --flip-start 3 --flip-stop 1");
  CHECK(r.code == 64);
  CHECK(has(r.err, "first exposure 3 is above the last 1"));

  // On the device, with --verify against the reference: LDR and HDR.
  r = box.halo("-v --device 0 " + pair + " --metrics flip --verify --fail-flip 0.97");
  CHECK(r.code == 0);
  CHECK(has(r.out, ": ok: mean 0.9673"));
  CHECK(has(r.err, "ms in kernels"));
  r = box.halo("--device 0 " + hdr + box / "v.json --verify");
  CHECK(r.code == 1);  // idiff's rule fails the pair; verify itself is ok
  CHECK(has(r.out, ": ok: mean"));
  const auto verified = read_json(box / "v.json")["pairs"][0];
  CHECK(verified["flip"]["hdr"] == true);
  CHECK(verified["verify"]["ok"] == true);
  CHECK(verified["verify"]["checks"].size() == 1);
  CHECK(verified["device"].get<std::string>().size() > 0);
  // --verify checks what a device computes: without a metric it has nothing to check.
  CHECK(box.halo(pair + " --verify").code == 64);

  // Two channels are neither grey nor colour; bad settings are refused.
  write_image(box / "ya.png", photo(16, 12, 2), SampleType::u8);
  r = box.halo("compare " + box / "ya.png " + box / "ya.png --metrics flip");
  CHECK(r.code == 3);
  CHECK(has(r.err, "grey, RGB or RGBA"));
  // Below 2 pixels per degree FLIP's feature filters have no neighbour weight in float: ppd
  // 1.5 crashed (an empty percentile bucket) on 8-bit pairs and gave FLIP 0 on float ones.
  for (const char* bad : {"--fail-flip 1.5", "--fail-flip nan", "--flip-ppd 0", "--flip-ppd 1.5",
                          "--flip-viewing 0.01,0.7,3840", "--flip-tonemapper filmic",
                          "--flip-mode hdr10", "--metrics flop"}) {
    CAPTURE(bad);
    CHECK(box.halo(pair + " " + bad).code == 64);
  }
  // A Blender render, every layer compared: FLIP takes its colour (the Combined layer) and
  // says so; its mean is NVIDIA's FLIP v1.6 figure for this pair (tests/oracle/nvidia-flip).
  const std::string renders = "compare " HALO_RENDER_DATA "/scene_1024spp.exr " HALO_RENDER_DATA
                              "/scene_4spp.exr --metrics flip --fail-flip 1 --json ";
  Result rr = box.halo(renders + box / "render.json");
  CHECK(rr.code == 0);
  CHECK(has(rr.out,
            "FLIP on ViewLayer.Combined.R,ViewLayer.Combined.G,ViewLayer.Combined.B,"
            "ViewLayer.Combined.A"));
  auto rj = read_json(box / "render.json");
  CHECK(rj["pairs"][0]["flip"]["mean"].get<double>() == doctest::Approx(0.113841).epsilon(1e-5));
  CHECK(rj["pairs"][0]["flip"]["channels"].size() == 4);
  CHECK(rj["pairs"][0]["channels"].size() == 11);  // idiff's rule still checks every layer
  // Viewing conditions: 0.7 m from a 0.7 m wide 3840-pixel screen is the default 67.02 ppd;
  // 0.5 m from a 0.6 m 1920-pixel one is 0.5 * 1920 / 0.6 * pi / 180 = 27.925 ppd.
  const auto mean_with = [&](const std::string& option) {
    REQUIRE(box.halo(renders + box / "v.json " + option).code == 0);
    return read_json(box / "v.json")["pairs"][0]["flip"]["mean"].get<double>();
  };
  CHECK(mean_with("--flip-viewing 0.7,0.7,3840") == doctest::Approx(0.113841).epsilon(1e-5));
  const double near = mean_with("--flip-viewing 0.5,0.6,1920");
  CHECK(near == mean_with("--flip-ppd 27.925268031909273"));
  CHECK(near > 0.2);  // fewer pixels per degree: the noise is seen larger
  for (const char* bad : {"0.7,0.7", "0.7,0,3840", "a,b,c", "0.7,0.7,3840,1", "1e9,1,1e9"})
    CHECK(box.halo(renders + box / "v.json --flip-viewing " + bad).code == 64);
  CHECK(box.halo(renders + box / "v.json --flip-viewing 1,1,1 --flip-ppd 30").code == 64);
}

TEST_CASE("batch devices and progress: --device all and lists, --progress when piped") {
  Sandbox box;
  fs::create_directories(box / "in");
  for (const char* name : {"a.png", "b.png", "c.png"})
    write_image(box / "in/" + name, photo(9, 6, 3), SampleType::u8);
  const std::string run = "run " + box / "in -f edge -o " + q(box / "out/{stem}.png") + " --mkdir";
  Result r = box.halo("--device all " + run + " --progress --summary " + box / "s.json");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(has(r.err, "halo: 3/3 "));  // the final progress line, even though stderr is a file
  CHECK(has(r.err, "images/s"));
  // The document is named: a range-for over a member of a temporary would outlive it.
  const nlohmann::json summary = read_json(box / "s.json");
  for (const auto& file : summary["files"]) CHECK(file["device"] != "reference");
  r = box.halo(run);  // piped, no --progress: no progress lines, but the one summary line
  CHECK(r.code == 0);
  CHECK_FALSE(has(r.err, "images/s"));
  CHECK(has(r.err, "halo: 3 files: 3 ok, 0 skipped, 0 failed, 0 mismatched, 0 not run ("));
  r = box.halo("-q " + run);  // -q: nothing
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  r = box.halo("--device 0,0 " + run);
  CHECK(r.code == 64);
  CHECK(has(r.err, "device 0 twice"));
  r = box.halo("--device ref " + run + " -j 2 --summary " + box / "ref.json");
  CHECK(r.code == 0);
  const nlohmann::json ref_summary = read_json(box / "ref.json");
  for (const auto& file : ref_summary["files"]) CHECK(file["device"] == "reference");
}

TEST_CASE("Ctrl-C: files in flight finish, no partial output, exit 130; --skip-existing resumes") {
  Sandbox box;
  fs::create_directories(box / "in");
  constexpr int kFiles = 60;
  for (int i = 0; i < kFiles; ++i)
    write_image(box / fmt::format("in/{:02}.png", i), photo(384, 256, 3), SampleType::u8);
  const std::string args = "--device ref run " + box / "in -f gaussian:r=16 -o " +
                           q(box / "out/{stem}.png") + " --mkdir -j 1 --summary " + box / "s.json";
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string command = "exec " HALO_BINARY " " + args + " 2>" + box / "err.txt";
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Interrupt as soon as the first output is in place.
  for (int wait = 0; wait < 6000 && !fs::exists(box / "out/00.png"); ++wait) ::usleep(5000);
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  INFO(Sandbox::read(box / "err.txt"));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(has(Sandbox::read(box / "err.txt"), "interrupted"));
  const auto written = files_in(box / "out");
  CHECK(written.size() >= 1);
  CHECK(written.size() < std::size_t(kFiles));
  for (const auto& name : written) {
    CHECK_MESSAGE(name.rfind(".halo-", 0) == std::string::npos, name);  // no temporary left
    CHECK(pixels_of(box / "out/" + name).width == 384);                 // complete files only
  }
  const auto summary = read_json(box / "s.json");
  CHECK(summary["exit_code"] == 130);
  CHECK(summary["totals"]["not_run"].get<std::size_t>() == kFiles - written.size());
  const Result resumed = box.halo(args + " --skip-existing");
  CHECK(resumed.code == 0);
  CHECK(files_in(box / "out").size() == std::size_t(kFiles));
  CHECK(read_json(box / "s.json")["totals"]["skipped"].get<std::size_t>() == written.size());
}

TEST_CASE("on a terminal the batch draws one live progress line; -q silences it") {
  Sandbox box;
  fs::create_directories(box / "in");
  for (const char* name : {"a.png", "b.png"})
    write_image(box / "in/" + name, photo(9, 6, 3), SampleType::u8);
  // script(1) (util-linux, always on Debian) gives halo a pseudo-terminal.
  const auto on_terminal = [&](const std::string& flags) {
    const std::string command = "script -qec \"" HALO_BINARY " " + flags + " run " + box / "in" +
                                " -f edge -o '" + box / "out/{stem}.png" +
                                "' --mkdir\" /dev/null > " + box / "tty.txt";
    const int status = std::system(command.c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    return Sandbox::read(box / "tty.txt");
  };
  const std::string live = on_terminal("");
  CHECK(has(live, "\r\x1b[Khalo: 2/2 "));  // redrawn in place, ends at done/total
  CHECK(has(live, "images/s"));
  CHECK_FALSE(has(on_terminal("-q"), "images/s"));
}
