// The sequence measures of `halo compare --metrics temporal` (lib/compare/sequence.cpp): steps
// over consecutive frames both sequences hold, the temporal error of a flickering sequence
// against a steady one, and the gates that cannot hold without a step.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "compare/sequence.hpp"
#include "io/image_io.hpp"
#include "io/temp_dir.hpp"

using namespace halo;
using test::TempDir;

namespace {

// An 8x6 RGB float frame of one grey value.
void frame(const std::string& path, float value) {
  PixelBuffer pixels(8, 6, 3, PixelType::f32);
  float* p = pixels.samples<float>();
  for (int i = 0; i < 8 * 6 * 3; ++i) p[i] = value;
  write_image(path, pixels, SampleType::f32);
}

// Results of three pairs, `unreadable` the one that could not be read (-1: none).
std::vector<PairResult> read(int unreadable = -1) {
  std::vector<PairResult> results(3);
  if (unreadable >= 0) results[std::size_t(unreadable)].error = "cannot read";
  return results;
}

std::vector<Pair> frames_of(const TempDir& dir) {
  return pairs_of({.a = dir / "a.####.pfm", .b = dir / "b.####.pfm"});
}

}  // namespace

TEST_CASE("sequence measures: a steady sequence against one that flickers") {
  TempDir dir;
  for (int t = 1; t <= 3; ++t) {
    frame(dir / ("a.000" + std::to_string(t) + ".pfm"), 0.5f);
    frame(dir / ("b.000" + std::to_string(t) + ".pfm"), t % 2 ? 0.5f : 0.8f);
  }
  const std::vector<Pair> pairs = frames_of(dir);
  REQUIRE(pairs.size() == 3);
  TemporalResult same = measure_sequence(pairs, read(), {});
  REQUIRE(same.frames == std::vector<long>{2, 3});
  CHECK(same.error[0] > 0);  // b changes where a does not
  CHECK(same.failed.empty());
  // Frame 2 unreadable: no step into or out of it.
  TemporalResult gap = measure_sequence(pairs, read(1), {});
  CHECK(gap.frames.empty());
  // A gate that measured nothing fails, never passes.
  gap = measure_sequence(pairs, read(1), {.fail_temporal = 1.0});
  REQUIRE(gap.failed.size() == 1);
  CHECK(gap.failed[0].find("no two consecutive frames") != std::string::npos);
  // The gate: above it fails, naming the error; a generous one holds.
  CHECK(measure_sequence(pairs, read(), {.fail_temporal = 1e-9}).failed.size() == 1);
  CHECK(measure_sequence(pairs, read(), {.fail_temporal = 10.0}).failed.empty());
}

TEST_CASE("sequence measures: identical sequences have no temporal error") {
  TempDir dir;
  for (int t = 1; t <= 3; ++t) {
    frame(dir / ("a.000" + std::to_string(t) + ".pfm"), 0.1f * float(t));
    frame(dir / ("b.000" + std::to_string(t) + ".pfm"), 0.1f * float(t));
  }
  const TemporalResult r = measure_sequence(frames_of(dir), read(), {});
  REQUIRE(r.error.size() == 2);
  CHECK(r.error[0] == 0);
  CHECK(r.error[1] == 0);
}
