// The hostile-input catalogue: what a careless or hostile user, or a neighbour on a shared
// folder, can do to a run, through the real binary. Each case states its exit code and leaves
// no file behind (no temporary in the output folder, no spool in $TMPDIR).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zlib.h>
#include <csignal>
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/sandbox.hpp"
#include "core/atomic_file.hpp"
#include "io/image_io.hpp"

using namespace halo;
using namespace halo::test;

namespace {

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

bool any_temporary(const fs::path& dir) {
  for (const auto& name : names_in(dir))
    if (name.starts_with(".halo-") || name.starts_with("halo-")) return true;
  return false;
}

// Runs a bash script in the sandbox (for pipes, signals and PIPESTATUS); its stdout.
std::string bash(const Sandbox& box, const std::string& script) {
  const std::string file = box / "script.sh";
  // set -m: background jobs keep SIGINT and SIGQUIT (without job control bash ignores them).
  std::ofstream(file) << "set -um\ncd " << box.dir << "\nhalo=" << HALO_BINARY << "\n" << script;
  return Sandbox::read_command("bash " + file + " 2>" + box / "script-stderr.txt");
}

// An uncompressed 8-bit RGB TIFF with its directory first and `rows_per_strip` rows a strip
// (as cameras and tifffile lay them out), so that cutting the file keeps the directory and loses
// strips. `declared`: the width and height the directory claims (0: the real ones).
std::string striped_tiff(int width, int height, int rows_per_strip, int declared = 0) {
  const auto u16 = [](std::string& b, unsigned v) { b += char(v & 255), b += char(v >> 8); };
  const auto u32 = [&](std::string& b, unsigned v) { u16(b, v & 0xffff), u16(b, v >> 16); };
  const int strips = (height + rows_per_strip - 1) / rows_per_strip;
  const unsigned row = unsigned(width) * 3;
  std::string ifd, offsets, counts;
  const unsigned entries = 10, ifd_end = 8 + 2 + entries * 12 + 4;
  const unsigned offsets_at = ifd_end, counts_at = ifd_end + 4 * strips,
                 bits_at = counts_at + 4 * strips;
  const unsigned data_at = bits_at + 6;
  for (int s = 0; s < strips; ++s) {
    const unsigned rows = unsigned(std::min(rows_per_strip, height - s * rows_per_strip));
    u32(offsets, data_at + unsigned(s * rows_per_strip) * row);
    u32(counts, rows * row);
  }
  const auto entry = [&](unsigned tag, unsigned type, unsigned count, unsigned value) {
    u16(ifd, tag), u16(ifd, type), u32(ifd, count);
    if (type == 3 && count == 1)
      u16(ifd, value), u16(ifd, 0);
    else
      u32(ifd, value);
  };
  std::string b = "II";
  u16(b, 42), u32(b, 8), u16(b, entries);
  entry(256, 4, 1, unsigned(declared ? declared : width));
  entry(257, 4, 1, unsigned(declared ? declared : height));
  entry(258, 3, 3, bits_at);
  entry(259, 3, 1, 1);  // no compression
  entry(262, 3, 1, 2);  // RGB
  entry(273, 4, unsigned(strips), strips == 1 ? data_at : offsets_at);
  entry(277, 3, 1, 3);
  entry(278, 4, 1, unsigned(declared ? declared : rows_per_strip));
  entry(279, 4, unsigned(strips), strips == 1 ? unsigned(height) * row : counts_at);
  entry(284, 3, 1, 1);  // contiguous samples
  b += ifd;
  u32(b, 0);  // no next directory
  b += offsets + counts;
  u16(b, 8), u16(b, 8), u16(b, 8);
  for (std::size_t i = 0; i < std::size_t(height) * row; ++i) b += char(64 + i % 128);
  return b;
}

}  // namespace

// OpenImageIO's TIFF reader fills strips it could not read with zeros and returns true,
// leaving only its error: halo checks after every read and stops at the first error.
TEST_CASE("hostile: a truncated TIFF or one claiming more pixels than it holds is refused (65)") {
  Sandbox box;
  const std::string whole = striped_tiff(300, 200, 8);
  std::ofstream(box / "whole.tif", std::ios::binary) << whole;
  REQUIRE(box.halo("run " + box / "whole.tif -o " + box / "whole.png").code == 0);
  std::ofstream(box / "cut.tif", std::ios::binary) << whole.substr(0, whole.size() / 2);
  const Result cut = box.halo("run " + box / "cut.tif -f gaussian:r=1 -o " + box / "cut.png");
  CHECK(cut.code == 65);
  CHECK(has(cut.err, "cut.tif: cannot read pixels: "));
  CHECK(std::count(cut.err.begin(), cut.err.end(), '\n') == 1);  // the first error, one line
  CHECK_FALSE(fs::exists(box / "cut.png"));
  // 30000x30000 declared in a file of a few hundred bytes: no 900-megapixel black image.
  std::string giant = striped_tiff(4, 4, 4, 30000);
  std::ofstream(box / "giant.tif", std::ios::binary) << giant;
  const Result g = box.halo("run " + box / "giant.tif -o " + box / "giant.png");
  CHECK(g.code == 65);
  CHECK_FALSE(fs::exists(box / "giant.png"));
  // A batch over a half-copied folder says which file failed (2), and writes the others.
  fs::create_directories(box / "shots");
  fs::copy_file(box / "whole.tif", box / "shots/a.tif");
  fs::copy_file(box / "cut.tif", box / "shots/b.tif");
  const Result batch = box.halo("run " + box / "shots -o " + box / "out/{stem}.png --mkdir");
  CHECK(batch.code == 2);
  CHECK(fs::exists(box / "out/a.png"));
  CHECK_FALSE(fs::exists(box / "out/b.png"));
  CHECK(has(batch.err, "b.tif: cannot read pixels"));
  // A million strips of one row, every one past the end of the file: OpenImageIO's error
  // text for them all passed 16 MB and aborted the process; the first error ends the file.
  constexpr std::uint32_t kStrips = 1'000'000;
  std::string many("II\x2a\0\x08\0\0\0", 8);
  const auto put16 = [&](std::uint32_t v) { many += char(v & 0xff), many += char(v >> 8 & 0xff); };
  const auto put32 = [&](std::uint32_t v) { put16(v & 0xffff), put16(v >> 16); };
  const std::uint32_t offsets = 8 + 2 + 9 * 12 + 4, counts = offsets + 4 * kStrips;
  put16(9);
  for (const auto& [tag, type, count, value] :
       std::vector<std::array<std::uint32_t, 4>>{{256, 4, 1, 1},
                                                 {257, 4, 1, kStrips},
                                                 {258, 3, 1, 8},
                                                 {259, 3, 1, 1},
                                                 {262, 3, 1, 1},
                                                 {273, 4, kStrips, offsets},
                                                 {277, 3, 1, 1},
                                                 {278, 4, 1, 1},
                                                 {279, 4, kStrips, counts}}) {
    put16(tag), put16(type), put32(count), put32(value);
  }
  put32(0);
  for (std::uint32_t i = 0; i < kStrips; ++i) put32(0x7ffffff0);  // past the end
  for (std::uint32_t i = 0; i < kStrips; ++i) put32(1);
  std::ofstream(box / "strips.tif", std::ios::binary) << many;
  const Result strips = box.halo("run " + box / "strips.tif -o " + box / "strips.png");
  CHECK(strips.code == 65);
  CHECK(has(strips.err, "strips.tif: cannot read pixels: "));
  CHECK(strips.err.size() < 1000);
  CHECK_FALSE(fs::exists(box / "strips.png"));
}

// A swapped argument in a CI script (`compare golden.exr out.exr --json golden.exr`) replaced
// the golden image with a report; reports naming each other or -o replaced one another.
TEST_CASE("hostile: reports never replace an input or another output of the command (64)") {
  Sandbox box;
  write_image(box / "golden.png", photo(9, 7, 3), SampleType::u8);
  write_image(box / "out.png", photo(9, 7, 3), SampleType::u8);
  const std::string golden = Sandbox::read(box / "golden.png");
  const std::string pair = "compare " + box / "golden.png " + box / "out.png";
  for (const std::string& args :
       {pair + " --json " + box / "golden.png", pair + " --junit " + box / "out.png",
        pair + " --json " + box / "r.x --junit " + box / "./r.x",
        "run " + box / "golden.png -f box:r=1 -o " + box / "o.png --summary " + box / "golden.png",
        "run " + box / "golden.png -f box:r=1 -o " + box / "o.png --summary " + box / "o.png",
        "run " + box / "golden.png -f bilateral -o " + box / "o.png --write-flags " +
            box / "f.png --summary " + box / "f.png",
        "run " + box / "golden.png " + box / "out.png -f box:r=1 -o '" + box / "{stem}-x.png' " +
            "--summary " + box / "golden-x.png",
        "hist " + box / "golden.png --json " + box / "golden.png",
        "summary '" + box / "*.png' --json " + box / "out.png",
        "hist " + box / "golden.png --json " + box / "h.x --csv " + box / "h.x"}) {
    INFO(args);
    const Result r = box.halo(args);
    CHECK(r.code == 64);
    CHECK((has(r.err, "refusing to overwrite the input") || has(r.err, "name the same file")));
  }
  CHECK(Sandbox::read(box / "golden.png") == golden);
  CHECK_FALSE(fs::exists(box / "o.png"));  // refused before any work
  CHECK(box.halo(pair + " --json " + box / "r.json --junit " + box / "r.xml").code == 0);
}

// Started with standard error closed, the first file halo opened (the output's temporary)
// took descriptor 2 and the log went into the image.
TEST_CASE("hostile: closed standard descriptors never receive an output's bytes") {
  Sandbox box;
  write_image(box / "g.png", photo(9, 7, 3), SampleType::u8);
  for (const std::string closed : {"2>&-", "1>&- 2>&-", "0<&- 1>&- 2>&-"}) {
    INFO(closed);
    const int status = std::system(
        (HALO_BINARY " -v run " + box / "g.png" + " -f box:r=1 -o " + box / "c.png " + closed)
            .c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    const PixelBuffer c = read_image({box / "c.png", {}}).pixels;  // a PNG, not a log
    CHECK(c.width == 9);
    fs::remove(box / "c.png");
  }
}

TEST_CASE("hostile: links to one file are each an input with their own output") {
  Sandbox box;
  fs::create_directories(box / "in");
  fs::create_directories(box / "out");
  write_image(box / "in/f1.png", photo(9, 7, 3), SampleType::u8);
  fs::create_symlink("f1.png", box / "in/f2.png");  // a held frame
  fs::create_symlink("f1.png", box / "in/f3.png");
  for (const std::string& inputs : {box / "in", box / "in/f*.png",
                                    box / "in/f1.png " + box / "in/f2.png " + box / "in/f3.png"}) {
    fs::remove_all(box / "out");
    fs::create_directories(box / "out");
    const Result r = box.halo("run " + inputs + " -f sharpen -o '" + box / "out/{stem}.png'");
    INFO(inputs, r.err);
    CHECK(r.code == 0);
    CHECK(names_in(box / "out") == std::vector<std::string>{"f1.png", "f2.png", "f3.png"});
  }
  // The same name twice (./ and a glob) is still one input.
  const Result twice = box.halo("run " + box / "in/f1.png " + box / "in/./f1.png -o '" +
                                box / "out/{stem}-again.png'");
  CHECK(twice.code == 0);
  CHECK(fs::exists(box / "out/f1-again.png"));
  // A template that maps two of them to one output is refused before any work, naming both.
  const Result clash = box.halo("run " + box / "in" + " -o " + box / "out/{ext}.png");
  CHECK(clash.code == 64);
  CHECK(
      has(clash.err, "would be written twice (for " + box / "in/f1.png and " + box / "in/f2.png"));
}

TEST_CASE("hostile: planted links at temporary names are never followed; modes follow umask") {
  Sandbox box;
  write_image(box / "in.png", photo(9, 7, 3), SampleType::u8);
  std::ofstream(box / "victim") << "precious";
  // The older names, .halo-PID-NAME, for the next PIDs: a neighbour's guess.
  const pid_t next = ::getpid();
  for (pid_t pid = next; pid < next + 200; ++pid)
    fs::create_symlink(box / "victim", box / (".halo-" + std::to_string(pid) + "-out.png"));
  const Result r = box.halo("run " + box / "in.png -o " + box / "out.png", "umask 022 &&");
  CHECK(r.code == 0);
  CHECK(Sandbox::read(box / "victim") == "precious");
  struct stat status {};
  REQUIRE(::stat((box / "out.png").c_str(), &status) == 0);
  CHECK((status.st_mode & 0777) == 0644);
}

// The temporary was created exclusively, closed, then opened again by name (fopen,
// OpenImageIO's writers): in a folder others can write that is not sticky, a neighbour who
// swaps the name for a link between the two (inotify makes it reliable) had root's file
// overwritten with the output.
TEST_CASE("hostile: a temporary's name swapped for a link while halo writes: nothing follows it") {
  Sandbox box;
  write_image(box / "in.png", photo(600, 400, 3), SampleType::u8);
  fs::create_directories(box / "shared");
  fs::permissions(box / "shared", fs::perms::all);  // 0777, not sticky
  for (const char* format : {"png", "exr", "pfm"}) {
    INFO(format);
    std::ofstream(box / "victim") << "precious";
    const int watch = ::inotify_init1(IN_CLOEXEC);
    REQUIRE(watch >= 0);
    REQUIRE(::inotify_add_watch(watch, (box / "shared").c_str(), IN_CREATE) >= 0);
    std::string swapped;
    std::thread neighbour([&] {
      alignas(inotify_event) char buffer[4096];
      while (swapped.empty()) {
        const ssize_t n = ::read(watch, buffer, sizeof buffer);
        if (n <= 0) return;
        for (ssize_t at = 0; at < n;) {
          const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
          const std::string name = event->len ? event->name : "";
          if (swapped.empty() && name.starts_with(".halo-")) {
            const fs::path planted = box.dir / "shared" / name;
            ::unlink(planted.c_str());
            ::symlink((box.dir / "victim").c_str(), planted.c_str());
            swapped = name;
          }
          at += ssize_t(sizeof(inotify_event) + event->len);
        }
      }
    });
    const std::string out = box / (std::string("shared/out.") + format);
    const Result r = box.halo("--device ref run " + box / "in.png -f gaussian:r=2 -o " + out);
    ::close(watch);  // ends the neighbour's read if halo created nothing
    neighbour.join();
    REQUIRE_FALSE(swapped.empty());
    CHECK(Sandbox::read(box / "victim") == "precious");
    // The name is a link now: nothing is published, the run says why.
    CHECK(r.code == 74);
    CHECK(has(r.err, "was replaced by another process; not published"));
    CHECK_FALSE(fs::exists(out));
    fs::remove(box.dir / "shared" / swapped);
  }
}

// The check was at the start and the rename at the end replaced: four runs to one absent
// output all exited 0.
TEST_CASE("hostile: --no-clobber among runs racing to one output: exactly one writes it") {
  Sandbox box;
  write_image(box / "in.png", photo(1200, 900, 3), SampleType::u8);
  const std::string codes = bash(box,
                                 "for i in 1 2 3 4; do ($halo --device ref run in.png -f "
                                 "gaussian:r=6 -o out.png --no-clobber 2>err$i; echo $? >code$i) "
                                 "& done; wait; cat code1 code2 code3 code4");
  int won = 0, refused = 0;
  std::istringstream lines(codes);
  for (int code; lines >> code;) code == 0 ? ++won : code == 73 ? ++refused : 0;
  CHECK(won == 1);
  CHECK(refused == 3);
  CHECK(fs::exists(box / "out.png"));
  CHECK_FALSE(any_temporary(box.dir));
}

// Everything halo reads besides its images: a FIFO hung the run, /dev/zero was read for GBs, a
// 3 GB file was read whole before "not a .tza", a config whose spaces refer to each other
// overflowed OpenColorIO's stack (SIGSEGV).
TEST_CASE("hostile: side files are regular files of bounded size, refused at once") {
  Sandbox box;
  write_image(box / "in.pfm", photo(24, 16, 3, PixelType::f32), SampleType::f32);
  REQUIRE(::mkfifo((box / "fifo").c_str(), 0600) == 0);
  // A sparse 3 GB file: nothing on disk, refused by its size before a byte is read.
  { std::ofstream(box / "huge.tza"); }
  fs::resize_file(box / "huge.tza", std::uintmax_t(3) << 30);
  fs::create_directories(box / "luts");
  std::ofstream(box / "cycle.ocio")
      << "ocio_profile_version: 2.1\nroles: {default: a, scene_linear: a}\n"
         "displays: {sRGB: [!<View> {name: Raw, colorspace: a}]}\ncolorspaces:\n"
         "  - !<ColorSpace> {name: a, from_scene_reference: !<ColorSpaceTransform> {src: b, dst: "
         "c}}\n"
         "  - !<ColorSpace> {name: b, from_scene_reference: !<ColorSpaceTransform> {src: a, dst: "
         "c}}\n"
         "  - !<ColorSpace> {name: c}\n";
  {  // 100 spaces, each defined through the one before: a chain 99 deep, no cycle
    std::ofstream chain(box / "chain.ocio");
    chain << "ocio_profile_version: 2.1\nroles: {default: s0, scene_linear: s0}\n"
             "displays: {sRGB: [!<View> {name: Raw, colorspace: s0}]}\ncolorspaces:\n"
             "  - !<ColorSpace> {name: s0}\n";
    for (int i = 1; i < 100; ++i)
      chain << "  - !<ColorSpace> {name: s" << i
            << ", from_scene_reference: !<ColorSpaceTransform> {src: s0, dst: s" << i - 1 << "}}\n";
  }
  const auto lut_config = [&](const std::string& lut) {
    std::ofstream(box / "lut.ocio")
        << "ocio_profile_version: 2.1\nsearch_path: luts\nroles: {default: lin, scene_linear: "
           "lin}\ndisplays: {sRGB: [!<View> {name: Raw, colorspace: lin}]}\ncolorspaces:\n"
           "  - !<ColorSpace> {name: lin}\n  - !<ColorSpace> {name: lut, from_scene_reference: "
           "!<FileTransform> {src: "
        << lut << "}}\n";
  };
  const struct {
    std::string spec, env;
    int code;
    std::string says;
  } cases[] = {
      {"denoise:weights=" + box / "fifo", "", 66,
       "fifo: a FIFO, not a regular file (weights file)"},
      {"denoise:weights=/dev/zero", "", 66, "/dev/zero: a device, not a regular file"},
      {"denoise:weights=" + box / "huge.tza", "", 65, "3221225472 bytes, over the 268435456"},
      {"display:config=" + box / "fifo", "", 66, "a FIFO, not a regular file (OpenColorIO config)"},
      {"display", "OCIO=" + box / "fifo", 66, "a FIFO, not a regular file (OpenColorIO config)"},
      {"ocio:from=a:to=c:config=" + box / "cycle.ocio", "", 64,
       "colour spaces refer to each other in a cycle (a -> b -> a)"},
      {"ocio:from=s0:to=s99:config=" + box / "chain.ocio", "", 64,
       "colour space s65 refers to others through a chain of 65 references, more than the 64"},
      {"icc:from=" + box / "fifo", "", 66, "a FIFO, not a regular file (ICC profile)"},
  };
  for (const auto& c : cases) {
    INFO(c.spec, " ", c.env);
    const Result r =
        box.halo("--device ref run " + box / "in.pfm -f '" + c.spec + "' -o " + box / "out.pfm",
                 c.env + " timeout 30");
    CHECK(r.code == c.code);
    CHECK(has(r.err, c.says));
    CHECK_FALSE(fs::exists(box / "out.pfm"));
  }
  // A LUT file a config names: checked before OpenColorIO opens it.
  REQUIRE(::mkfifo((box / "luts/fifo.spi1d").c_str(), 0600) == 0);
  fs::create_symlink("/dev/zero", box / "luts/zero.spi1d");
  for (const std::string lut : {"fifo.spi1d", "zero.spi1d"}) {
    lut_config(lut);
    const Result r =
        box.halo("--device ref run " + box / "in.pfm -f 'ocio:from=lin:to=lut:config=" +
                     box / "lut.ocio' -o " + box / "out.pfm",
                 "timeout 30");
    CHECK(r.code == 66);
    CHECK(has(r.err, "not a regular file (LUT file of " + box / "lut.ocio)"));
  }
}

// A FIFO planted at a kernel-cache entry's name hung every OpenCL run: the entry was written
// in place, and opening a FIFO to write waits for a reader.
TEST_CASE("hostile: FIFOs at the kernel cache's entries are passed over, not written into") {
  Sandbox box;
  write_image(box / "in.png", photo(9, 7, 3), SampleType::u8);
  const std::string cache = box / "cache";
  const std::string env = "HALO_CACHE_DIR=" + cache + " timeout 60";
  const std::string run = "--device 0 run " + box / "in.png -f box:r=1 -o " + box / "out.png";
  REQUIRE(box.halo(run, env).code == 0);  // the entries made
  std::vector<fs::path> entries;
  for (const auto& e : fs::recursive_directory_iterator(cache))
    if (e.path().extension() == ".key" || e.path().extension() == ".bin")
      entries.push_back(e.path());
  REQUIRE_FALSE(entries.empty());
  for (const fs::path& at : entries) {
    fs::remove(at);
    REQUIRE(::mkfifo(at.c_str(), 0600) == 0);
  }
  const Result r = box.halo(run, env);
  CHECK(r.code == 0);  // 124: timeout killed it, hung on a FIFO
  for (const fs::path& at : entries) CHECK(fs::is_fifo(at));  // left as they were
}

// The cache folder is the user's, but what is in it is only a hint: a link there made halo
// write its JSON into the link's target (a copy of /etc/passwd), 100,000 '[' crashed it, a
// FIFO hung it, a folder was an internal error (70).
TEST_CASE("hostile: the cache folder's records are hints: links replaced, odd files passed over") {
  Sandbox box;
  write_image(box / "in.png", photo(9, 7, 3), SampleType::u8);
  const std::string cache = box / "cache";
  const std::string env = "HALO_CACHE_DIR=" + cache + " timeout 30";
  const std::string run = "run " + box / "in.png -f gaussian:r=2 -o " + box / "out.png";
  REQUIRE(box.halo("--device 0 " + run, env).code == 0);  // the records made
  const fs::path record = fs::path(cache) / "device-start.json";
  REQUIRE(fs::is_regular_file(record));
  std::string tuning;
  const nlohmann::json costs = nlohmann::json::parse(Sandbox::read(record));
  for (const auto& device : costs["devices"].items())
    tuning = cache + "/tuning/" + device.key() + ".json";
  REQUIRE_FALSE(tuning.empty());
  fs::create_directories(fs::path(tuning).parent_path());
  std::ofstream(box / "passwd") << "root:x:0:0:root:/root:/bin/bash\n";
  const auto replant = [&](const fs::path& at, const std::string& as) {
    fs::remove_all(at);
    if (as == "link") fs::create_symlink(box / "passwd", at);
    if (as == "fifo") REQUIRE(::mkfifo(at.c_str(), 0600) == 0);
    if (as == "folder") fs::create_directories(at / "x");
    if (as == "nested") std::ofstream(at) << std::string(100000, '[');
  };
  for (const std::string as : {"link", "fifo", "folder", "nested"}) {
    for (const fs::path& at : {record, fs::path(tuning)}) {
      INFO(as, " at ", at.string());
      replant(at, as);
      for (const std::string device : {"--device 0 ", ""}) {
        const Result r = box.halo(device + run, env);
        CHECK(r.code == 0);
      }
      CHECK(Sandbox::read(box / "passwd") == "root:x:0:0:root:/root:/bin/bash\n");
      fs::remove_all(at);
    }
  }
}

// One name with a byte that is not UTF-8 made JSON's writer throw: exit 70 and no report.
TEST_CASE("hostile: a file name that is not UTF-8 never loses a report") {
  Sandbox box;
  fs::create_directories(box / "in");
  const std::string odd = box / "in/bad\xff\xfename.png";
  write_image(odd, photo(9, 7, 3), SampleType::u8);
  write_image(box / "in/good.png", photo(9, 7, 3), SampleType::u8);
  Result r = box.halo("--device ref run " + box / "in" + " -o '" +
                      box /
                          "out/{stem}.png' --mkdir "
                          "--summary " +
                      box / "s.json");
  CHECK(r.code == 0);
  const nlohmann::json summary = nlohmann::json::parse(Sandbox::read(box / "s.json"));
  CHECK(summary["files"].size() == 2);
  CHECK(has(Sandbox::read(box / "s.json"), "bad\xef\xbf\xbd\xef\xbf\xbdname.png"));  // U+FFFD
  r = box.halo("--device ref hist '" + odd + "' --json " + box / "h.json");
  CHECK(r.code == 0);
  CHECK(nlohmann::json::parse(Sandbox::read(box / "h.json"))["bins"] == 256);
  r = box.halo("compare '" + odd + "' " + box / "in/good.png --json " + box / "c.json");
  CHECK(r.code == 0);
  CHECK(nlohmann::json::parse(Sandbox::read(box / "c.json")).is_object());
}

TEST_CASE("hostile: the sweep removes only temporaries provably dead") {
  Sandbox box;
  write_image(box / "in.png", photo(9, 7, 3), SampleType::u8);
  const pid_t gone = ::fork();  // a PID that has certainly exited
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  const std::string tag = temporary_tag();
  const std::string dead = ".halo-" + tag + "-" + std::to_string(gone) + "-0123abcd.png";
  const std::string live = ".halo-" + tag + "-1-0123abcd.png";  // PID 1 is alive
  // Another host or container on a shared folder: its PIDs mean nothing here.
  const std::string foreign = ".halo-00000000-" + std::to_string(gone) + "-0123abcd.png";
  const std::string foreign_old = ".halo-00000000-" + std::to_string(gone) + "-4567abcd.png";
  const std::string older_form = ".halo-" + std::to_string(gone) + "-old.png";
  for (const auto& name : {dead, live, foreign, foreign_old, older_form})
    std::ofstream(box / name) << "half a file";
  const auto two_days_ago = fs::file_time_type::clock::now() - std::chrono::hours(48);
  fs::last_write_time(box / foreign_old, two_days_ago);
  const Result r = box.halo("run " + box / "in.png -o " + box / "out.png");
  CHECK(r.code == 0);
  CHECK(has(r.err, "removed 2 temporary files left by halo runs that were killed"));
  CHECK_FALSE(fs::exists(box / dead));
  CHECK_FALSE(fs::exists(box / foreign_old));
  CHECK(fs::exists(box / live));
  CHECK(fs::exists(box / foreign));
  CHECK(fs::exists(box / older_form));
}

TEST_CASE("hostile: output names as long as the file system allows are written") {
  Sandbox box;
  write_image(box / "in.png", photo(9, 7, 3), SampleType::u8);
  const std::string name = std::string(251, 'n') + ".png";  // NAME_MAX, 255
  const Result r = box.halo("run " + box / "in.png -o " + box / name);
  CHECK(r.code == 0);
  CHECK(fs::exists(box / name));
  CHECK_FALSE(any_temporary(box.dir));
}

namespace {

// Starts halo with `args`, standard input and output on the given descriptors, stderr into
// `err`, TMPDIR set, and every signal at its default action: what this process inherited
// (nohup ignores SIGHUP, some CI runners SIGPIPE) must not decide what is tested.
pid_t spawn_halo(const std::vector<std::string>& args, int in, int out, const std::string& err,
                 const std::string& tmpdir) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  for (int signal = 1; signal < NSIG; ++signal) std::signal(signal, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::dup2(in, 0);
  ::dup2(out, 1);
  // Nothing else of the parent's: a pipe's other end held here would keep it open.
  for (int fd = 3; fd < 1024; ++fd) ::close(fd);
  if (!std::freopen(err.c_str(), "w", stderr)) ::_exit(127);
  ::setenv("TMPDIR", tmpdir.c_str(), 1);
  std::vector<char*> argv = {const_cast<char*>(HALO_BINARY)};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(HALO_BINARY, argv.data());
  ::_exit(127);
}

// The wait status of `pid`, or -1 after `seconds` (it is then killed).
int wait_for(pid_t pid, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    if (std::chrono::steady_clock::now() > end) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    ::usleep(20000);
  }
}

}  // namespace

TEST_CASE("hostile: signals and a reader that goes away leave no temporary and no spool") {
  Sandbox box;
  write_image(box / "in.png", photo(300, 200, 3), SampleType::u8);  // noise: 180 KB of PNG
  fs::create_directories(box / "tmp");
  const std::string image = Sandbox::read(box / "in.png");
  // A pipe held open: halo is spooling standard input when the signal comes.
  for (const int signal : {SIGTERM, SIGHUP, SIGQUIT, SIGINT}) {
    INFO("signal ", signal);
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    const int null = ::open("/dev/null", O_WRONLY);
    const pid_t pid = spawn_halo({"run", "-", "-o", box / "out.png"}, pipe_fds[0], null,
                                 box / "err.txt", box / "tmp");
    ::close(pipe_fds[0]);
    ::close(null);
    CHECK(::write(pipe_fds[1], image.data(), image.size()) == ssize_t(image.size()));
    ::usleep(500000);
    ::kill(pid, signal);
    const int status = wait_for(pid, 20);
    ::close(pipe_fds[1]);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal);
    CHECK(names_in(box / "tmp").empty());
    CHECK_FALSE(fs::exists(box / "out.png"));
  }
  // `| head`: the reader leaves after 100 bytes; halo dies of SIGPIPE quietly (as head-friendly
  // tools do, 141 in a shell), its output's spool removed.
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const int null = ::open("/dev/null", O_RDONLY);
  const pid_t pid = spawn_halo({"run", box / "in.png", "-o", "png:-"}, null, pipe_fds[1],
                               box / "err.txt", box / "tmp");
  ::close(pipe_fds[1]);
  ::close(null);
  char head[100];
  CHECK(::read(pipe_fds[0], head, sizeof head) > 0);
  ::close(pipe_fds[0]);
  const int status = wait_for(pid, 30);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGPIPE);
  CHECK(Sandbox::read(box / "err.txt").empty());
  CHECK(names_in(box / "tmp").empty());
  CHECK_FALSE(any_temporary(box.dir));
}

TEST_CASE("hostile: --skip-existing and --no-clobber never replace an output written meanwhile") {
  // The check before a file is read only saves work: another run may publish the same output
  // while this one computes it (8 runs over one folder all wrote, 7 replaced). Here the output
  // appears once halo's temporary exists, i.e. after that check.
  Sandbox box;
  write_image(box / "in.png", photo(3000, 2000, 3), SampleType::u8);
  fs::create_directories(box / "out");
  fs::create_directories(box / "tmp");
  for (const std::string flag : {"--skip-existing", "--no-clobber"}) {
    INFO(flag);
    const std::string out = box / "out/o.png";
    fs::remove(out);
    const int null = ::open("/dev/null", O_RDWR);
    const pid_t pid = spawn_halo(
        {"-v", "run", box / "in.png", "-f", "gaussian:r=12", "--device", "ref", "-o", out, flag},
        null, null, box / "err.txt", box / "tmp");
    ::close(null);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!any_temporary(box / "out") && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(any_temporary(box / "out"));
    std::ofstream(out) << "another run's output";
    const int status = wait_for(pid, 120);
    REQUIRE(WIFEXITED(status));
    const std::string err = Sandbox::read(box / "err.txt");
    INFO(err);
    CHECK(WEXITSTATUS(status) == (flag == "--skip-existing" ? 0 : 73));
    CHECK(has(err, "o.png: exists (written meanwhile)"));
    CHECK(Sandbox::read(out) == "another run's output");
    CHECK_FALSE(any_temporary(box / "out"));
  }
}

TEST_CASE("hostile: a standard error that cannot be written loses the log, not the exit code") {
  // 2>/dev/full: every write to stderr fails (ENOSPC). A batch that wrote every file exited 70
  // when its closing line could not be printed.
  Sandbox box;
  write_image(box / "a.png", photo(40, 30, 3), SampleType::u8);
  write_image(box / "b.png", photo(30, 20, 3), SampleType::u8);
  fs::create_directories(box / "tmp");
  const auto exit_code = [&](const std::vector<std::string>& args) {
    const int null = ::open("/dev/null", O_RDWR);
    const pid_t pid = spawn_halo(args, null, null, "/dev/full", box / "tmp");
    ::close(null);
    const int status = wait_for(pid, 60);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  for (const char* verbosity : {"-v", "-q", "--progress"}) {
    INFO(verbosity);
    const std::string out = box / (std::string("o") + verbosity);
    std::vector<std::string> args = {"run",  box / "a.png", box / "b.png",       "-f",
                                     "edge", "-o",          out + "/{stem}.png", "--mkdir"};
    args.insert(std::string(verbosity) == "--progress" ? args.end() : args.begin(), verbosity);
    CHECK(exit_code(args) == 0);
    CHECK(fs::exists(out + "/a.png"));
    CHECK(fs::exists(out + "/b.png"));
  }
  CHECK(exit_code({"run", box / "a.png", box / "missing.png", "-o", box / "p/{stem}.png",
                   "--mkdir"}) == 2);
  CHECK(exit_code({"run", "--no-such-option"}) == 64);
}

TEST_CASE("hostile: standard input is spooled only up to --max-memory") {
  Sandbox box;
  fs::create_directories(box / "tmp");
  const std::string status =
      bash(box, "export TMPDIR=" + box / "tmp" +
                    "\nhead -c 3000000 /dev/zero | $halo run - -o out.png --max-memory 1M\n"
                    "echo ${PIPESTATUS[1]}\n");
  CHECK(status == "65\n");
  CHECK(has(Sandbox::read(box / "script-stderr.txt"),
            "standard input: more than 1 MiB, the memory limit (--max-memory); name a file"));
  CHECK(names_in(box / "tmp").empty());
}

TEST_CASE("hostile: compare's thresholds are finite and >= 0; --diff-out never replaces an input") {
  Sandbox box;
  write_image(box / "a.png", photo(9, 7, 3), SampleType::u8);
  write_image(box / "b.png", photo(9, 7, 3, PixelType::u16), SampleType::u16);
  const std::string pair = " " + box / "a.png " + box / "b.png";
  for (const std::string bad :
       {"--fail nan", "--fail -1", "--fail inf", "--warn -0.5", "--failpercent nan",
        "--hardfail -1", "--fail 1e-3x", "--allowfailures -1", "-fail nan"}) {
    const Result r = box.halo("compare " + bad + pair);
    INFO(bad, r.err);
    CHECK(r.code == 64);
  }
  CHECK(box.halo("compare --hardfail inf" + pair).code == 1);
  CHECK(box.halo("compare --fail 0 " + box / "a.png " + box / "a.png").code == 0);
  fs::create_symlink(box / "a.png", box / "link.png");
  const std::string before = Sandbox::read(box / "a.png");
  for (const std::string& diff :
       {box / "a.png", box / "./a.png", box / "link.png", box / "b.png"}) {
    const Result r = box.halo("compare" + pair + " --diff-out " + diff);
    INFO(diff);
    CHECK(r.code == 73);
    CHECK(has(r.err, "--diff-out " + diff + ": refusing to overwrite the input"));
  }
  CHECK(Sandbox::read(box / "a.png") == before);
  // Folders: the difference folder is not one of the two compared.
  fs::create_directories(box / "x");
  fs::create_directories(box / "y");
  fs::copy_file(box / "a.png", box / "x/i.png");
  fs::copy_file(box / "b.png", box / "y/i.png");
  const Result folders = box.halo("compare " + box / "x " + box / "y --diff-out " + box / "x");
  CHECK(folders.code == 73);
  CHECK(Sandbox::read(box / "x/i.png") == before);
}

namespace {

std::string pfm_bytes(const std::string& header, const std::vector<float>& values) {
  std::string bytes = header;
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return bytes;
}

std::vector<float> floats_of(const std::string& path) {
  const PixelBuffer pixels = read_image({path, {}}).pixels;
  const float* p = pixels.samples<float>();
  return std::vector<float>(p, p + pixels.sample_count());
}

bool all_finite(const std::string& path) {
  for (float v : floats_of(path))
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

TEST_CASE("hostile: PFM headers are read strictly: CRLF, trailing bytes, odd scales, truncation") {
  Sandbox box;
  const std::vector<float> values = {0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f};  // 2x1 RGB
  std::ofstream(box / "crlf.pfm", std::ios::binary) << pfm_bytes("PF\r\n2 1\r\n-1.0\r\n", values);
  Result r = box.halo("run " + box / "crlf.pfm -o " + box / "out.pfm");
  CHECK(r.code == 0);
  CHECK(floats_of(box / "out.pfm") == values);  // not shifted by the LF
  std::ofstream(box / "junk.pfm", std::ios::binary)
      << pfm_bytes("PF\n2 1\n-1.0\n", values) << "trailing junk";
  r = box.halo("run " + box / "junk.pfm -o " + box / "out.pfm");
  CHECK(r.code == 0);
  CHECK(has(r.err, "junk.pfm: 13 bytes after the PFM's pixels, ignored"));
  std::ofstream(box / "scale.pfm", std::ios::binary) << pfm_bytes("PF\n2 1\n-2.0\n", values);
  r = box.halo("run " + box / "scale.pfm -o " + box / "out.pfm");
  CHECK(r.code == 0);
  CHECK(has(r.err, "scale.pfm: PFM scale -2: its sign gives the byte order"));
  CHECK(floats_of(box / "out.pfm") == values);
  std::ofstream(box / "cut.pfm", std::ios::binary) << "PF\n2 1\n-1.0";
  r = box.halo("run " + box / "cut.pfm -o " + box / "out.pfm");
  CHECK(r.code == 65);
  CHECK(has(r.err, "cut.pfm: truncated PFM header (no byte after the scale '-1.0')"));
}

TEST_CASE("hostile: parameters at the ends of their ranges give numbers, not NaN") {
  Sandbox box;
  write_image(box / "in.pfm", photo(31, 17, 3, PixelType::f32), SampleType::f32);
  // sigma_r = 1e-300 squared underflows: only equal colours average (was 0 * inf = NaN).
  Result r =
      box.halo("run " + box / "in.pfm -f bilateral:sigma_r=1e-300 -o " + box / "b.pfm --verify");
  CHECK(r.code == 0);
  CHECK(all_finite(box / "b.pfm"));
  // A histogram range past float's: every pixel in one bin before; refused now.
  for (const std::string range : {"-1e300,1e300", "0,1e39", "1,1.00000001", "-3e38,3e38"}) {
    r = box.halo("hist " + box / "in.pfm --range=" + range);
    INFO(range, r.err);
    CHECK(r.code == 64);
  }
  CHECK(box.halo("hist " + box / "in.pfm --range=0,4").code == 0);
  // rotate's background under its bicubic taps (1.32 x at most): 3.4e38 overflowed to NaN
  // over half the image; refused now, and the bound itself stays finite.
  for (const std::string bad : {"3.4e38", "-2e38"})
    CHECK(box.halo("run " + box / "in.pfm -f rotate:angle=30:background=" + bad + " -o " +
                   box / "r.pfm")
              .code == 64);
  r = box.halo("run " + box / "in.pfm -f rotate:angle=30:background=1e38 -o " + box / "r.pfm" +
               " --verify");
  CHECK(r.code == 0);
  CHECK(all_finite(box / "r.pfm"));
  // Normals that are all NaN are "no geometry", as zero normals: a finite result.
  PixelBuffer nan_normals(31, 17, 3, PixelType::f32);
  for (std::size_t i = 0; i < nan_normals.sample_count(); ++i)
    nan_normals.samples<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  write_image(box / "n.pfm", nan_normals, SampleType::f32);
  for (const std::string filter : {"atrous", "bilateral"}) {
    r = box.halo("run " + box / "in.pfm -f " + filter + ":normal=" + box / "n.pfm -o " +
                 box / "g.pfm --verify");
    INFO(filter, r.err);
    CHECK(r.code == 0);
    CHECK(all_finite(box / "g.pfm"));
  }
}

TEST_CASE("hostile: FIFOs and devices are refused up front, not waited on") {
  Sandbox box;
  write_image(box / "in.png", photo(9, 7, 3), SampleType::u8);
  REQUIRE(::mkfifo((box / "fifo.png").c_str(), 0600) == 0);
  // timeout: before, run and a batch waited for a writer forever.
  Result r = box.halo("run " + box / "fifo.png -o " + box / "o.png", "timeout 20");
  CHECK(r.code == 66);
  CHECK(has(r.err, "fifo.png: a FIFO, not a file; halo reads files"));
  r = box.halo("run " + box / "fifo.png " + box / "in.png -o '" + box / "{stem}-o.png'",
               "timeout 20");
  CHECK(r.code == 2);  // the batch goes on with the other file
  CHECK(fs::exists(box / "in-o.png"));
  r = box.halo("run /dev/zero -o " + box / "o.png", "timeout 20");
  CHECK(r.code == 66);
  CHECK(has(r.err, "/dev/zero: a device, not a file"));
}

TEST_CASE("hostile: presets are small .halo text files, never echoed") {
  Sandbox box;
  write_image(box / "in.png", photo(9, 7, 3), SampleType::u8);
  const std::string run = "run " + box / "in.png -o " + box / "o.png --preset ";
  std::ofstream(box / "shadow") << "root:$y$j9T$secretsecret:19000:0:99999:7:::\n";
  Result r = box.halo(run + box / "shadow");
  CHECK(r.code == 64);
  CHECK(has(r.err, "not a preset (preset files are named NAME.halo)"));
  CHECK_FALSE(has(r.err, "secret"));
  REQUIRE(::mkfifo((box / "fifo.halo").c_str(), 0600) == 0);
  r = box.halo(run + box / "fifo.halo", "timeout 20");
  CHECK(r.code == 66);
  CHECK(has(r.err, "fifo.halo: a FIFO, not a regular file (preset)"));
  {
    std::ofstream big(box / "big.halo");
    for (int i = 0; i < 300000; ++i) big << "box:r=1\n";  // 2.4 MB
  }
  r = box.halo(run + box / "big.halo", "timeout 20");
  CHECK(r.code == 65);
  CHECK(has(r.err, "big.halo: 2400000 bytes, over the 1048576 bytes allowed (preset)"));
  std::ofstream(box / "binary.halo") << "box:r=1\n\x01\x02secret\n";
  r = box.halo(run + box / "binary.halo");
  CHECK(r.code == 64);
  CHECK(has(r.err, "binary.halo:2: not a preset line (control characters)"));
  CHECK_FALSE(has(r.err, "secret"));
  // One unreadable preset in a folder of presets: named, and the others still listed.
  fs::create_directories(box / "shelf");
  std::ofstream(box / "shelf/soft.halo") << "# a soft look\ngaussian:r=2\n";
  std::ofstream(box / "shelf/locked.halo") << "box:r=1\n";
  fs::permissions(box / "shelf/locked.halo", fs::perms::none);
  std::ofstream(box / "shelf/odd.halo") << "box:r=1\n\x01\n";
  r = box.halo("presets", "HALO_PRESET_PATH=" + box / "shelf");
  CHECK(r.code == 0);
  CHECK(has(r.out, "soft"));
  CHECK(has(r.err, "odd.halo:2: not a preset line (control characters) (left out of the presets)"));
  if (::geteuid() != 0) CHECK(has(r.err, "locked.halo"));  // root reads it regardless
}

TEST_CASE("hostile: summary refuses deep nesting and wrong types as bad reports (65)") {
  Sandbox box;
  std::ofstream(box / "deep.json") << std::string(400000, '[');
  Result r = box.halo("summary " + box / "deep.json", "timeout 20");
  CHECK(r.code == 65);
  CHECK(has(r.err, "deep.json: not a halo run --summary report (nested deeper than 16 levels)"));
  const std::string head = R"({"schema": "halo-batch-summary/1", )";
  const std::vector<std::pair<std::string, std::string>> wrong = {
      {R"("files": [], "totals": 7})", "totals is not an object"},
      {R"("files": [], "totals": {"seconds": "long"}})", "totals.seconds is not a number"},
      {R"("files": [3], "totals": {}})", "an entry of files is not an object"},
      {R"("files": [{"input": 5}], "totals": {}})", "files[].input is not a string"},
      {R"("files": [], "totals": {}, "exit_code": "x"})", "exit_code is not an integer"}};
  for (const auto& entry : wrong) {
    const auto& body = entry.first;  // not a binding: INFO captures it
    const auto& why = entry.second;
    std::ofstream(box / "r.json") << head << body;
    r = box.halo("summary " + box / "r.json");
    INFO(body);
    CHECK(r.code == 65);
    CHECK(has(r.err, "r.json: not a halo run --summary report (" + why + ")"));
  }
  // Brackets and escaped quotes inside names are not nesting.
  std::ofstream(box / "names.json")
      << head << R"("files": [{"input": "[[[[[[[[[[[[[[[[[[[[\"{{{{{{{{{{{{{{{{{{{{", )"
      << R"("status": "ok"}], "totals": {}})";
  r = box.halo("summary " + box / "names.json");
  CHECK(r.code == 0);
  CHECK(has(r.out, "1 files: 1 ok"));
  // Parsed, a report takes about 11 bytes a byte: counted in --max-memory before parsing.
  {
    std::ofstream many(box / "many.json");
    many << head << R"("files": [)";
    for (int i = 0; i < 2000; ++i)
      many << (i ? "," : "") << R"({"input": "in)" << i << R"(.png", "status": "ok"})";
    many << R"(], "totals": {}})";
  }
  CHECK(box.halo("summary " + box / "many.json --max-memory 10M").code == 0);
  r = box.halo("summary " + box / "many.json --max-memory 500K");
  CHECK(r.code == 65);
  CHECK(has(r.err, "many.json: the summary report, parsed"));
  // A 1 GB file was read whole before "not JSON": refused by its size (a sparse file).
  { std::ofstream(box / "huge.json"); }
  fs::resize_file(box / "huge.json", std::uintmax_t(1) << 30);
  const Result huge = box.halo("summary " + box / "huge.json", "timeout 20");
  CHECK(huge.code == 65);
  CHECK(has(huge.err, "1073741824 bytes, over the 134217728 bytes allowed (summary report)"));
}

TEST_CASE("hostile: a halo copied out of its build tree looks only beside itself") {
  Sandbox box;
  write_image(box / "in.tif", photo(9, 7, 3, PixelType::f32), SampleType::f32);
  write_image(box / "in.exr", photo(9, 7, 3, PixelType::f32), SampleType::f32);
  fs::create_directories(box / "bin");
  fs::copy_file(HALO_BINARY, box / "bin/halo");
  const std::string moved = box / "bin/halo";
  // No OpenImageIO module beside it: a format only the module writes (BMP) does not go through
  // the build tree's module.
  const std::string bmp_err =
      Sandbox::read_command(moved + " run " + box / "in.tif -o " + box / "o.bmp 2>&1");
  CHECK(has(bmp_err, "needs halo's OpenImageIO module libhalo_oiio.so, which was not found"));
  // A plain TIFF is read and written without it, through libtiff.
  CHECK(Sandbox::read_command(moved + " run " + box / "in.tif -o " + box / "o.tif 2>&1; echo $?") ==
        "0\n");
  // EXR needs no module: halo reads and writes it through OpenEXR itself.
  CHECK(Sandbox::read_command(moved + " run " + box / "in.exr -o " + box / "o.exr 2>&1; echo $?") ==
        "0\n");
  // No presets beside it: the source tree's are not listed.
  CHECK(Sandbox::read_command(moved + " presets 2>&1") == "no presets found\n");
}

TEST_CASE("hostile: a NaN or infinity reaches exactly the outputs whose window holds it") {
  Sandbox box;
  PixelBuffer image = photo(200, 200, 1, PixelType::f32);
  float* v = image.samples<float>();
  v[100 * 200 + 100] = std::numeric_limits<float>::quiet_NaN();
  v[30 * 200 + 40] = std::numeric_limits<float>::infinity();
  write_image(box / "in.pfm", image, SampleType::f32);
  // r = 17 and 40 run as running sums; r = 3 as weights. The footprints do not overlap.
  for (const int r : {3, 17, 40}) {
    if (r == 40) {  // 81x81 windows would overlap: the infinity alone
      v[100 * 200 + 100] = 0.5f;
      write_image(box / "in.pfm", image, SampleType::f32);
    }
    const Result run = box.halo("run " + box / "in.pfm -f box:r=" + std::to_string(r) + " -o " +
                                box / "out.pfm --verify");
    INFO(r, run.err);
    CHECK(run.code == 0);
    int nan = 0, inf = 0;
    for (float x : floats_of(box / "out.pfm")) nan += std::isnan(x), inf += std::isinf(x);
    const int side = 2 * r + 1;
    CHECK(nan == (r == 40 ? 0 : side * side));
    // The infinity's window is cut by the top edge at r = 40: rows 0..70 (clamp repeats row 0
    // only, which holds no infinity).
    CHECK(inf == (r == 40 ? side * (30 + r + 1) : side * side));
  }
}

namespace {

std::string be32(std::uint32_t v) {
  std::string s;
  for (int shift : {24, 16, 8, 0}) s += char((v >> shift) & 0xff);
  return s;
}

std::string png_chunk(const std::string& type, const std::string& data) {
  const std::string body = type + data;
  return be32(std::uint32_t(data.size())) + body +
         be32(std::uint32_t(
             crc32(0, reinterpret_cast<const Bytef*>(body.data()), uInt(body.size()))));
}

std::string deflated(const std::string& data) {
  uLongf size = compressBound(uLong(data.size()));
  std::string out(size, '\0');
  compress2(reinterpret_cast<Bytef*>(out.data()), &size,
            reinterpret_cast<const Bytef*>(data.data()), uLong(data.size()), 9);
  out.resize(size);
  return out;
}

// A 4x3 RGB8 PNG with `chunks` (framed by png_chunk) between its header and its pixels.
void write_small_png(const std::string& path, const std::string& chunks) {
  const std::string ihdr = be32(4) + be32(3) + std::string("\x08\x02\x00\x00\x00", 5);
  std::string raw;
  for (int y = 0; y < 3; ++y) raw += '\0' + std::string(12, char(40 * y));
  std::ofstream(path, std::ios::binary)
      << std::string("\x89PNG\r\n\x1a\n", 8) << png_chunk("IHDR", ihdr) << chunks
      << png_chunk("IDAT", deflated(raw)) << png_chunk("IEND", "");
}

// 20 zTXt chunks of 7 MiB of text each: 150 KB in the file, 140 MB inflated.
std::string ztxt_bomb() {
  const std::string text = deflated(std::string(7 << 20, 'a'));
  std::string chunks;
  for (int i = 0; i < 20; ++i)
    chunks += png_chunk("zTXt", "key" + std::to_string(i) + std::string(2, '\0') + text);
  return chunks;
}

}  // namespace

TEST_CASE("hostile: metadata is held within its limits: a zTXt bomb, many attributes") {
  Sandbox box;
  write_small_png(box / "bomb.png", ztxt_bomb());
  const Measured m = run_measured(box, {"run", box / "bomb.png", "-o", box / "out.png"});
  CHECK(m.code == 0);
  CHECK(m.peak_kib < rss_bound_kib(200 * 1024));  // 854 MB before
  CHECK(has(m.err,
            "bomb.png: text or profile chunks past the limits for PNG metadata (32 MiB, "
            "1000 chunks) dropped"));
  CHECK(has(m.err, "bomb.png: metadata past halo's limits (16 MiB, 1000 attributes) dropped"));
  // Each warning once, though the file is opened twice.
  CHECK(m.err.find("32 MiB") == m.err.rfind("32 MiB"));
  CHECK(fs::file_size(box / "out.png") < (std::size_t(17) << 20));  // 147 MB before
  // --strict drops nothing: the file is refused.
  const Result strict = box.halo("--strict run " + box / "bomb.png -o " + box / "strict.png");
  CHECK(strict.code == 65);
  CHECK(has(strict.err, "(--strict refuses to drop them)"));
  CHECK_FALSE(fs::exists(box / "strict.png"));
  // 3000 small text chunks: the first 1000 or so kept.
  std::string many;
  for (int i = 0; i < 3000; ++i) {
    std::string text("k");
    text += std::to_string(i);
    text += '\0';  // keyword, then the text (GCC 12's -Wrestrict misfires on one expression)
    text += 'v';
    many += png_chunk("tEXt", text);
  }
  write_small_png(box / "many.png", many);
  const Result r = box.halo("run " + box / "many.png -o " + box / "many-out.png");
  CHECK(r.code == 0);
  CHECK(has(r.err, "many.png: text or profile chunks past the limits for PNG metadata"));
  const std::string written = Sandbox::read(box / "many-out.png");
  std::size_t chunks = 0;
  for (auto at = written.find("tEXt"); at != std::string::npos; at = written.find("tEXt", at + 4))
    ++chunks;
  CHECK(chunks >= 990);
  CHECK(chunks <= 1001);  // what was kept, and halo's Software
}

TEST_CASE("hostile: rotate's strips count the band of input rows a turned strip reads") {
  // At 17.5 degrees a strip of one output row of this 4000x3000 image reads about 1300 input
  // rows: that band is what the budget must hold (an 8000x8000 image took 824-995 MB at
  // --max-memory 50M when only the strip's own rows were counted).
  Sandbox box;
  write_image(box / "g.png", photo(4000, 3000, 1), SampleType::u8, {.compression = "1"});
  Measured m = run_measured(box, {"run", box / "g.png", "-f", "rotate:angle=17.5", "-o",
                                  box / "r.png", "--max-memory", "50M"});
  CHECK(m.code == 65);
  CHECK(has(m.err, "g.png: a strip of one row ("));
  CHECK(has(m.err, "rows read) of this 4000x3000 image needs"));
  CHECK_FALSE(fs::exists(box / "r.png"));
  m = run_measured(box, {"run", box / "g.png", "-f", "rotate:angle=17.5", "-o", box / "r.png",
                         "--max-memory", "300M"});
  CHECK(m.code == 0);
  CHECK(m.peak_kib < rss_bound_kib((300 + 100) * 1024));  // the budget and OpenCL's own
  // A small window cut first reads only its rows: no spurious refusal.
  m = run_measured(box, {"run", box / "g.png", "-f", "crop:x=100:y=200:w=10:h=14", "-f",
                         "rotate:angle=17.5", "-o", box / "c.png", "--max-memory", "60M"});
  CHECK(m.code == 0);
  CHECK(m.err.empty());
}

TEST_CASE("hostile: --max-memory is the process's: both images of compare, every job of a batch") {
  Sandbox box;
  // 1000x1000 RGB float: 24 MB held whole (as stored and as floats); two are 48 MB.
  write_image(box / "a.pfm", photo(1000, 1000, 3, PixelType::f32), SampleType::f32);
  PixelBuffer other = photo(1000, 1000, 3, PixelType::f32);
  other.samples<float>()[0] += 1.0f;
  write_image(box / "b.pfm", other, SampleType::f32);
  CHECK(box.halo("hist " + box / "a.pfm --max-memory 40M").code == 0);
  const Result both = box.halo("compare " + box / "a.pfm " + box / "b.pfm --max-memory 40M");
  CHECK(both.code == 65);
  CHECK(has(both.err,
            "b.pfm: the whole image needs 23 MiB of memory, over the limit of 17 MiB, "
            "23 MiB already held by images read whole"));
  CHECK(box.halo("compare " + box / "a.pfm " + box / "b.pfm --max-memory 60M").code == 1);
  // FLIP's maps beside them: errors, their sorted copy, exposures (HDR) and the heat map,
  // 18 bytes a pixel, 17 MiB more.
  const Result flip =
      box.halo("compare " + box / "a.pfm " + box / "b.pfm --metrics flip --max-memory 60M");
  CHECK(flip.code == 65);
  CHECK(has(flip.err, "b.pfm: computing the metrics needs"));
  CHECK(box.halo("compare " + box / "a.pfm " + box / "b.pfm --metrics flip,ssim --max-memory 90M")
            .code == 1);
  // A batch of two at once: each file's strips are planned in half the budget.
  const auto strip_rows = [&](const std::string& jobs) {
    const Result r = box.halo("-v run " + box / "a.pfm " + box / "b.pfm -f box:r=1 -o '" +
                              box / "{stem}-out.pfm' --max-memory 8M -j " + jobs);
    CHECK(r.code == 0);
    const auto at = r.err.find("strips of ");
    REQUIRE(at != std::string::npos);
    return std::stoi(r.err.substr(at + 10));
  };
  const int alone = strip_rows("1"), paired = strip_rows("2");
  CHECK(paired * 2 <= alone + 2);
  // A file that needs more than its share but fits the whole budget reserves what it needs
  // and runs once that is free, not fails; one that needs more than the whole budget fails
  // naming the whole budget. Two that do not fit together take turns.
  const std::string wrap = " -f box:r=1:border=wrap -o '" + box / "{stem}-wrap.pfm' -j 2";
  const Result pooled =
      box.halo("-v run " + box / "a.pfm " + box / "b.pfm" + wrap + " --max-memory 120M");
  CHECK(pooled.code == 0);
  for (const char* name : {"a.pfm", "b.pfm"})
    CHECK(has(pooled.err,
              std::string(name) + ": needs 94 MiB of --max-memory, more than its share of 2"));
  CHECK(fs::file_size(box / "a-wrap.pfm") == fs::file_size(box / "a.pfm"));
  CHECK(fs::file_size(box / "b-wrap.pfm") == fs::file_size(box / "b.pfm"));
  // Beside a small file it runs at once: the two reservations fit the budget together.
  write_image(box / "c.pfm", photo(64, 64, 3, PixelType::f32), SampleType::f32);
  const Result beside =
      box.halo("-v run " + box / "a.pfm " + box / "c.pfm" + wrap + " --max-memory 120M");
  CHECK(beside.code == 0);
  CHECK(has(beside.err, "a.pfm: needs 94 MiB of --max-memory, more than its share of 2"));
  CHECK_FALSE(has(beside.err, "waited for"));
  CHECK(fs::file_size(box / "c-wrap.pfm") == fs::file_size(box / "c.pfm"));
  const Result over =
      box.halo("run " + box / "a.pfm " + box / "b.pfm" + wrap + " --max-memory 60M");
  CHECK(over.code != 0);
  CHECK(has(over.err, "needs 94 MiB of host memory, over the limit of 60 MiB"));
  // A format whose reader may hold the whole file: the file's size counts.
  std::ofstream(box / "padded.ppm", std::ios::binary)
      << "P6\n2 2\n255\n"
      << std::string(12, '\x7f') << std::string(3 << 20, '\0');
  const Result padded = box.halo("run " + box / "padded.ppm -o " + box / "p.png --max-memory 1M");
  CHECK(padded.code == 65);
  CHECK(has(padded.err, "padded.ppm: the whole file (OpenImageIO's ppm reader may hold it) needs"));
}

TEST_CASE("hostile: warnings name the output, never its temporary") {
  Sandbox box;
  // 70 KB of XMP: more than a JPEG marker holds.
  const std::string xmp = "XML:com.adobe.xmp" + std::string(5, '\0') + std::string(70000, 'x');
  write_small_png(box / "xmp.png", png_chunk("iTXt", xmp));
  const Result r = box.halo("run " + box / "xmp.png -o " + box / "out.jpg");
  CHECK(r.code == 0);
  CHECK(has(r.err, box / "out.jpg: XMP of"));
  CHECK_FALSE(has(r.err, ".halo-"));
}

TEST_CASE(
    "hostile: the catalogue, each case within its exit code, memory and time, leaving nothing") {
  Sandbox box;
  fs::create_directories(box / "tmp");
  write_image(box / "in.png", photo(64, 48, 3), SampleType::u8);
  write_image(box / "other.png", photo(64, 48, 3, PixelType::u16), SampleType::u16);
  REQUIRE(::mkfifo((box / "fifo.png").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((box / "fifo.halo").c_str(), 0600) == 0);
  std::ofstream(box / "shadow") << "root:$y$secret:19000:0:99999:7:::\n";
  std::ofstream(box / "deep.json") << std::string(400000, '[');
  std::ofstream(box / "cut.pfm", std::ios::binary) << "PF\n2 1\n-1.0";
  std::ofstream(box / "padded.ppm", std::ios::binary)
      << "P6\n2 2\n255\n"
      << std::string(12, '\x7f') << std::string(3 << 20, '\0');
  write_small_png(box / "bomb.png", ztxt_bomb());
  struct Case {
    std::vector<std::string> args;
    int code;
    long rss_mib;
    double seconds;
  };
  const std::string out = box / "out.png";
  const std::vector<Case> catalogue = {
      {{"run", box / "bomb.png", "-o", out}, 0, 200, 30},
      {{"run", box / "fifo.png", "-o", out}, 66, 100, 10},
      {{"run", "/dev/zero", "-o", out}, 66, 100, 10},
      {{"run", box / "padded.ppm", "-o", out, "--max-memory", "1M"}, 65, 100, 10},
      {{"run", box / "cut.pfm", "-o", out}, 65, 100, 10},
      {{"run", box / "in.png", "-o", out, "--preset", box / "fifo.halo"}, 66, 100, 10},
      {{"run", box / "in.png", "-o", out, "--preset", box / "shadow"}, 64, 100, 10},
      {{"run", box / "in.png", "-o", box / ".halo-1-x.png"}, 0, 200, 30},
      {{"summary", box / "deep.json"}, 65, 100, 10},
      {{"compare", box / "in.png", box / "other.png", "--fail", "nan"}, 64, 100, 10},
      {{"compare", box / "in.png", box / "other.png", "--diff-out", box / "in.png"}, 73, 100, 10},
      {{"hist", box / "in.png", "--range=-1e300,1e300"}, 64, 100, 10},
  };
  for (const auto& c : catalogue) {
    std::string line;
    for (const auto& a : c.args) line += a + " ";
    INFO(line);
    const auto start = std::chrono::steady_clock::now();
    const Measured m = run_measured(box, c.args, {"TMPDIR=" + box / "tmp"});
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO(m.err);
    CHECK(m.code == c.code);
    CHECK(m.peak_kib < rss_bound_kib(c.rss_mib * 1024));
    CHECK(took < c.seconds * (rss_bound_kib(1) > 1 ? 4 : 1));  // sanitizers run slower
    CHECK(names_in(box / "tmp").empty());
    for (const auto& name : names_in(box.dir))
      CHECK_MESSAGE(!(name.starts_with(".halo-") && name != ".halo-1-x.png"), name);
    CHECK_FALSE(has(m.err, "secret"));
    fs::remove(out);
  }
}

TEST_CASE("hostile: a small file size limit never lets PoCL die mid-compile") {
  Sandbox box;
  write_image(box / "in.png", photo(30, 20, 3), SampleType::u8);
  // ulimit -f 1000 (blocks of 512 bytes in sh). PoCL writes its compiled kernels to files; LLVM
  // ended halo with "LLVM ERROR" (exit 1) when a write failed. auto takes the reference; an
  // explicit device is the one-line error of a device that cannot run.
  const std::string run = "run " + box / "in.png -f box:r=2 -o " + box / "out.png --verify";
  const Result auto_device = box.halo(run, "ulimit -f 1000 && HALO_DEVICE=auto");
  CHECK(auto_device.code == 0);
  CHECK(
      has(auto_device.err, "(PoCL) writes its compiled kernels to files, and the file size limit"));
  CHECK_FALSE(has(auto_device.err, "LLVM"));
  const Result strict = box.halo("--strict " + run, "ulimit -f 1000 && HALO_DEVICE=auto");
  CHECK(strict.code == 69);
  CHECK_FALSE(has(strict.err, "LLVM"));
}
