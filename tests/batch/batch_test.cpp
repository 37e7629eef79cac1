// Batch planning and the worker pool: input expansion, frame ranges, shards, output templates,
// and run_batch's exit codes, --fail-fast and summary, with a stand-in for the per-file work.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "batch/batch.hpp"
#include "batch/inputs.hpp"
#include "batch/output_template.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/settings.hpp"

namespace halo {
namespace {

namespace fs = std::filesystem;

struct Folder {
  fs::path dir = fs::temp_directory_path() / ("halo-batch-" + std::to_string(::getpid()));
  Folder() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Folder() { fs::remove_all(dir); }
  std::string touch(const std::string& name) const {
    const fs::path path = dir / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "x";
    return path.string();
  }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

std::vector<std::string> names(const std::vector<InputFile>& files, const fs::path& under) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(fs::path(f.path).lexically_relative(under).string());
  return out;
}

int error_code(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.exit_code();
  }
  return 0;
}

TEST_CASE("frame ranges: single frames, ranges, steps, lists; malformed ones are usage errors") {
  CHECK(parse_frames("7") == std::vector<long>{7});
  CHECK(parse_frames("1-4") == std::vector<long>{1, 2, 3, 4});
  CHECK(parse_frames("1-10x4") == std::vector<long>{1, 5, 9});
  // Near the largest long the step must not overflow past the end (UBSan would say so).
  CHECK(parse_frames("9223372036854775800-9223372036854775807x5") ==
        std::vector<long>{9223372036854775800, 9223372036854775805});
  CHECK(parse_frames("3,1-2,10") == std::vector<long>{3, 1, 2, 10});
  for (const char* bad : {"", "a", "5-1", "1-5x0", "1,,2", "-3", "1-", "2x3", "1-100000000"})
    CHECK_MESSAGE(error_code([&] { parse_frames(bad); }) == 64, bad);
}

TEST_CASE("shards: K/N parsed strictly; N shards are disjoint and cover every file") {
  CHECK(parse_shard("2/8").index == 2);
  CHECK(parse_shard("2/8").count == 8);
  for (const char* bad : {"0/3", "4/3", "3", "1/0", "a/b", "1/2/3", "-1/2", " 1/2"})
    CHECK_MESSAGE(error_code([&] { parse_shard(bad); }) == 64, bad);
  std::vector<InputFile> files;
  for (int i = 0; i < 23; ++i)
    files.push_back({std::string("f").append(std::to_string(i)), "", "", ""});
  for (int n : {1, 2, 5, 23, 30}) {
    std::multiset<std::string> seen;
    for (int k = 1; k <= n; ++k) {
      const auto shard = take_shard(files, {k, n});
      CHECK(shard.size() >= files.size() / n);
      CHECK(shard.size() <= files.size() / n + 1);
      for (const auto& f : shard) seen.insert(f.path);
    }
    CHECK(seen.size() == files.size());
    for (const auto& f : files) CHECK(seen.count(f.path) == 1);
  }
  CHECK(names(take_shard(files, {2, 10}), "") == std::vector<std::string>{"f1", "f11", "f21"});
}

TEST_CASE("folders: sorted images only, hidden and temporary files skipped, --recursive") {
  Folder f;
  f.touch("b.png");
  f.touch("a.exr");
  f.touch("notes.txt");
  f.touch(".halo-123-c.png");  // an unfinished write of an earlier run
  f.touch("sub/c.JPG");
  f.touch(".hidden/d.png");
  const auto flat = expand_inputs({f.dir.string()}, {});
  CHECK(names(flat.files, f.dir) == std::vector<std::string>{"a.exr", "b.png"});
  CHECK_FALSE(flat.single);
  const auto deep = expand_inputs({f.dir.string()}, {.recursive = true});
  CHECK(names(deep.files, f.dir) == std::vector<std::string>{"a.exr", "b.png", "sub/c.JPG"});
  CHECK(deep.files[2].root == f.dir.string());
  Folder empty;
  fs::create_directories(empty.dir / "only-a-subfolder");
  CHECK(error_code([&] { expand_inputs({empty.dir.string()}, {}); }) == 66);
}

TEST_CASE("files and globs: order kept, duplicates once, missing plain files kept for the batch") {
  Folder f;
  const std::string a = f.touch("x1.png"), b = f.touch("x2.png");
  f.touch("y.png");
  const auto list = expand_inputs({b, f / "x*.png", a, f / "missing.png"}, {});
  CHECK(names(list.files, f.dir) == std::vector<std::string>{"x2.png", "x1.png", "missing.png"});
  CHECK(list.files[0].frame == "2");
  CHECK(error_code([&] { expand_inputs({f / "z*.png"}, {}); }) == 66);
  CHECK(expand_inputs({a}, {}).single);
  CHECK(expand_inputs({f / "missing.png"}, {}).single);
  CHECK_FALSE(expand_inputs({a, b}, {}).single);
  const auto with_channels = expand_inputs({f / "x*.png[R,G]"}, {});
  REQUIRE(with_channels.files.size() == 2);
  CHECK(with_channels.files[0].channels == "[R,G]");
}

TEST_CASE("frame sequences: #### and %04d, the frames on disk or --frames with missing ones") {
  Folder f;
  for (const char* name : {"shot.0001.exr", "shot.0002.exr", "shot.0010.exr", "shot.12345.exr",
                           "shot.001.exr", "shot.00003.exr", "shot.0004.png", "other.0005.exr",
                           "shot.99999999999999999999.exr"})  // past long: not a frame
    f.touch(name);
  const auto found = expand_inputs({f / "shot.####.exr"}, {});
  CHECK(names(found.files, f.dir) == std::vector<std::string>{"shot.0001.exr", "shot.0002.exr",
                                                              "shot.0010.exr", "shot.12345.exr"});
  CHECK(found.files[2].frame == "0010");
  CHECK(names(expand_inputs({f / "shot.%04d.exr"}, {}).files, f.dir) == names(found.files, f.dir));
  const auto asked = expand_inputs({f / "shot.%04d.exr"}, {.frames = "2-4"});
  CHECK(names(asked.files, f.dir) ==
        std::vector<std::string>{"shot.0002.exr", "shot.0003.exr", "shot.0004.exr"});
  CHECK(asked.files[1].frame == "0003");
  CHECK(error_code([&] { expand_inputs({f / "none.####.exr"}, {}); }) == 66);
  CHECK(error_code([&] { expand_inputs({f / "shot.0001.exr"}, {.frames = "1-2"}); }) == 64);
}

TEST_CASE("output templates: every field, literal braces, and clear errors") {
  const InputFile in{"renders/a/shot.0042.exr", "", "renders", "0042"};
  CHECK(OutputTemplate("out/{stem}.png").expand(in) == "out/shot.0042.png");
  CHECK(OutputTemplate("out/{name}").expand(in) == "out/shot.0042.exr");
  CHECK(OutputTemplate("{dir}/{stem}_blur{ext}").expand(in) == "renders/a/shot.0042_blur.exr");
  CHECK(OutputTemplate("out/{reldir}/{stem}.tif").expand(in) == "out/a/shot.0042.tif");
  CHECK(OutputTemplate("out/f{frame}.exr").expand(in) == "out/f0042.exr");
  CHECK(OutputTemplate("out/{{x}}{stem}.png").expand(in) == "out/{x}shot.0042.png");
  CHECK(OutputTemplate("plain.png").expand(in) == "plain.png");
  CHECK_FALSE(OutputTemplate("plain{{}}.png").has_fields());
  CHECK(OutputTemplate("out/{reldir}/{stem}.png").expand({"top.png", "", "", ""}) == "out/top.png");
  for (const char* bad : {"out/{stem.png", "out/{size}.png", "out/}x.png", "{}"})
    CHECK_MESSAGE(error_code([&] { OutputTemplate{bad}; }) == 64, bad);
  CHECK(error_code([&] { OutputTemplate("{frame}.png").expand({"a.png", "", "", ""}); }) == 64);
}

std::vector<FileJob> jobs_named(int n) {
  std::vector<FileJob> jobs;
  for (int i = 0; i < n; ++i)
    jobs.push_back(
        {{"in" + std::to_string(i) + ".png", "", "", ""}, "out" + std::to_string(i) + ".png", ""});
  return jobs;
}

FileOutcome outcome(FileStatus status) {
  FileOutcome o;
  o.status = status;
  o.error = status == FileStatus::ok ? "" : "reason";
  o.exit_code = status == FileStatus::failed ? 65 : status == FileStatus::mismatch ? 1 : 0;
  return o;
}

TEST_CASE("run_batch: every file runs once on the workers; the exit code says the worst") {
  for (int workers : {1, 3}) {
    std::vector<std::atomic<int>> runs(10);
    const auto ok = [&](const FileJob& job, int) {
      ++runs[std::stoi(job.input.path.substr(2))];
      return outcome(FileStatus::ok);
    };
    CHECK(run_batch(jobs_named(10), {.jobs = workers}, ok) == 0);
    for (const auto& r : runs) CHECK(r == 1);
  }
  const auto status_of = [](std::vector<FileStatus> statuses) {
    return [statuses](const FileJob& job, int) {
      return outcome(statuses[std::stoi(job.input.path.substr(2))]);
    };
  };
  using S = FileStatus;
  CHECK(run_batch(jobs_named(3), {.jobs = 2}, status_of({S::ok, S::skipped, S::ok})) == 0);
  CHECK(run_batch(jobs_named(3), {.jobs = 2}, status_of({S::ok, S::mismatch, S::ok})) == 1);
  CHECK(run_batch(jobs_named(3), {.jobs = 2}, status_of({S::mismatch, S::failed, S::ok})) == 2);
}

TEST_CASE("run_batch: --fail-fast stops taking files; the summary lists every file") {
  Folder f;
  const std::string summary = f / "summary.json";
  std::atomic<int> ran{0};
  const auto second_fails = [&](const FileJob& job, int) {
    ++ran;
    return outcome(job.input.path == "in1.png" ? FileStatus::failed : FileStatus::ok);
  };
  BatchSettings settings{.jobs = 1, .fail_fast = true, .summary = summary, .specs = {"edge"}};
  CHECK(run_batch(jobs_named(5), settings, second_fails) == 2);
  CHECK(ran == 2);
  std::ifstream in(summary);
  const auto json = nlohmann::json::parse(in);
  CHECK(json["schema"] == "halo-batch-summary/1");
  CHECK(json["filters"] == nlohmann::json::array({"edge"}));
  CHECK(json["exit_code"] == 2);
  REQUIRE(json["files"].size() == 5);
  CHECK(json["files"][0]["status"] == "ok");
  CHECK(json["files"][0]["error"].is_null());
  CHECK(json["files"][1]["status"] == "failed");
  CHECK(json["files"][1]["error"] == "reason");
  CHECK(json["files"][1]["exit_code"] == 65);
  CHECK(json["files"][4]["status"] == "not_run");
  CHECK(json["files"][4]["output"] == "out4.png");
  CHECK(json["totals"]["files"] == 5);
  CHECK(json["totals"]["ok"] == 1);
  CHECK(json["totals"]["failed"] == 1);
  CHECK(json["totals"]["not_run"] == 3);
  CHECK(json["totals"]["seconds"].get<double>() >= 0);
  for (const auto& entry : fs::directory_iterator(f.dir))  // no temporary left
    CHECK_FALSE(entry.path().filename().string().starts_with(".halo-"));
}

}  // namespace
}  // namespace halo

namespace halo {
namespace {

// --max-memory for one test, restored after it.
struct MemoryLimit {
  Settings before = settings();
  explicit MemoryLimit(std::size_t bytes) {
    Settings s = before;
    s.limits.max_memory = bytes;
    install_settings(s);
  }
  ~MemoryLimit() { install_settings(before); }
};

}  // namespace

TEST_CASE("memory pool: files reserve what they plan, wait for it in order, and see its budget") {
  const MemoryLimit limit(100);
  set_files_at_once(2);
  CHECK(memory_per_file() == 50);
  // Up to 10 s for `done` (a broken pool fails here instead of hanging the suite).
  const auto within = [](const auto& done) {
    for (int i = 0; i < 10000 && !done(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return done();
  };
  std::optional<MemoryReservation> large(std::in_place, 70, 100);
  CHECK_FALSE(large->waited());
  CHECK(memory_per_file() == 100);  // the budget it planned within, on this thread
  // 60 does not fit beside 70: it waits. 20 would fit, but asked after 60 it waits its turn,
  // then runs beside the 60 (60 + 20 <= 100).
  std::atomic<bool> small_granted{false};
  std::thread second([&] {
    const MemoryReservation r(60, 100);
    CHECK(r.waited());
    CHECK(memory_per_file() == 100);
    CHECK(within([&] { return small_granted.load(); }));  // held until the 20 runs too
  });
  CHECK(within([] { return MemoryReservation::waiting() == 1; }));
  std::thread third([&] {
    const MemoryReservation r(20, 0);  // planned within its share
    CHECK(r.waited());
    CHECK(memory_per_file() == 50);
    small_granted = true;
  });
  CHECK(within([] { return MemoryReservation::waiting() == 2; }));  // both wait beside 70
  large.reset();
  second.join();
  third.join();
  CHECK(small_granted);
  CHECK(memory_per_file() == 50);  // no reservation held on this thread: the share again
  // More than the whole budget takes it all rather than waiting forever.
  const MemoryReservation all(1000, 100);
  CHECK(all.bytes() == 100);
  set_files_at_once(1);
}

}  // namespace halo
