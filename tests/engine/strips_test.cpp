// Strips: a pipeline run strip by strip (each strip's input widened by the chain's reach)
// gives exactly the whole image's result, on the device and on the reference, for every
// filter, border, channel count, image height and strip height; histograms add up exactly.
#include <doctest/doctest.h>

#include "engine/guided_support.hpp"
#include "filters/measure/histogram.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/stream.hpp"
#include "pipeline/strips.hpp"
#include "support.hpp"

using namespace halo;

namespace {

constexpr int kWidth = 23;  // narrow: the rows are what matters here
constexpr int kHeights[] = {1, 2, 7, 517, 1031};
constexpr int kStripRows[] = {1, 3, 64};

// Every registered filter by its example, and the cases with other kernels: running sums (box
// from r=17), a tall 2D kernel.
std::vector<std::string> filter_specs() {
  std::vector<std::string> specs;
  for (const auto& f : filter_registry())
    if (f.swept) specs.push_back(f.example);  // the others in their own tests
  for (const char* extra : {"box:r=20", "conv:k=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15:w=3:h=5"})
    specs.push_back(extra);
  return specs;
}

// Guides for each guide set of the pipeline, as a render would carry them.
std::vector<Guides> guides_for(const Pipeline& pipeline, int w, int h) {
  std::vector<Guides> sets;
  for (std::size_t s = 0; s < pipeline.guide_sets().size(); ++s)
    sets.push_back(test::random_guides(w, h, true, 3 + unsigned(s)));
  return sets;
}

// A run's discontinuity flags, empty when it kept none.
std::vector<std::uint8_t> flag_bits(const StageRun& run) {
  const auto kept = run.side_output("flags");
  return kept ? kept->flags->bits : std::vector<std::uint8_t>();
}

struct Runs {
  RunResult device;
  PixelBuffer reference;
};

Runs run_both(Device& device, const Pipeline& pipeline, const PixelBuffer& input, int strip_rows) {
  RunOptions options;
  options.stream.strip_rows = strip_rows;
  options.guides = guides_for(pipeline, input.width, input.height);
  options.stream.keep_flags = true;
  Runs r;
  r.device = run_device(device, pipeline, input, PixelType::f32, options);
  device.take_timings();
  r.reference = run_reference(pipeline, input, PixelType::f32, options);
  return r;
}

void check_strips_equal_whole(const std::vector<std::string>& specs, const PixelBuffer& input,
                              const std::vector<int>& strip_rows = {std::begin(kStripRows),
                                                                    std::end(kStripRows)},
                              Device& device = test::device()) {
  std::vector<StageSpec> stage_specs;
  for (const auto& s : specs) stage_specs.push_back({s, ""});
  const Pipeline pipeline(stage_specs);
  const Runs whole = run_both(device, pipeline, input, 0);
  for (const int strip : strip_rows) {
    if (strip >= input.height) continue;
    const Runs strips = run_both(device, pipeline, input, strip);
    std::string chain;
    for (const auto& s : specs) chain += s + " ";
    INFO(chain, "on ", input.width, "x", input.height, "x", input.channels, " ",
         to_string(input.type), ", strips of ", strip);
    CHECK(strips.device.pixels.bytes == whole.device.pixels.bytes);
    CHECK(strips.reference.bytes == whole.reference.bytes);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const StageRun& a = strips.device.runs[i];
      const StageRun& b = whole.device.runs[i];
      CHECK(side_results_mismatch(a, b) == "");
      CHECK(bool(a.side_output("histogram")) == bool(b.side_output("histogram")));
      CHECK(flag_bits(a) == flag_bits(b));
    }
  }
}

// `specs` with every border through a GPU-typed device with launch shapes `shape` (a kernel
// the table gives GPUs only), strips against the whole image on RGB images 1, 2, 7 and 517
// rows tall (random, seeded by `seed` plus the height).
void check_strips_at_gpu_shape(const char* shape, const std::vector<std::string>& specs, int seed) {
  Device device(test::gpu_info(), default_cache_dir());
  test::retune(device, shape);
  for (const int h : {1, 2, 7, 517}) {
    const PixelBuffer input = test::random_pixels(kWidth * 5, h, 3, PixelType::u8, seed + h);
    for (const char* border : test::kBorders)
      for (const auto& spec : specs)
        check_strips_equal_whole({spec + ":border=" + border}, input,
                                 {std::begin(kStripRows), std::end(kStripRows)}, device);
  }
}

}  // namespace

TEST_CASE("strips equal the whole image: every filter, border, channel count and height" *
          doctest::test_suite("sweeps")) {
  const auto specs = filter_specs();
  for (const int h : test::sweep<int>({std::begin(kHeights), std::end(kHeights)}, {1, 517}))
    for (const int channels : test::sweep<int>({1, 3, 4}, {4})) {
      PixelBuffer input = test::random_pixels(kWidth, h, channels, PixelType::u8, 5 + h);
      input.alpha = channels == 4;
      for (const auto& spec : specs) {
        if (channels == 1 && spec.starts_with("histogram")) continue;  // luma needs RGB
        if (channels != 3 && spec.starts_with("bilateral")) continue;  // albedo needs RGB
        if (channels != 3 && spec.starts_with("atrous")) continue;
        for (const char* border : test::kBorders)
          check_strips_equal_whole({spec + ":border=" + border}, input);
      }
    }
}

TEST_CASE("strips equal the whole image with the tiled kernels GPUs run" *
          doctest::test_suite("sweeps")) {
  // The tiled kernels stage tiles of rows in local memory: their interior tests and row
  // clamping are where a strip's first and last rows could go wrong. The loop takes one filter
  // of each kernel family.
  const auto specs = test::sweep<std::string>(
      filter_specs(), {"gaussian:r=4", "box:r=20", "sharpen", "bilateral", "atrous", "histogram"});
  for (const int h : test::sweep<int>({7, 517}, {517})) {
    const PixelBuffer input = test::random_pixels(kWidth * 3, h, 3, PixelType::u8, 11 + h);
    for (const auto& spec : specs)
      for (const char* border : test::kBorders)
        check_strips_equal_whole({spec + ":border=" + border}, input, {3, 64},
                                 test::tiled_device());
    check_strips_equal_whole({"gaussian:r=40", "box:r=18", "emboss"}, input, {3, 64},
                             test::tiled_device());
  }
}

TEST_CASE("strips equal the whole image with the fused separable kernel" *
          doctest::test_suite("sweeps")) {
  // The fused kernel walks bands of rows and loads each step's rows through the strip's row
  // mapping: a strip's edges fall inside bands and steps.
  for (const char* shape :
       test::sweep<const char*>({"fused_radius=16,fused_steps=3,fused_band=5", "fused_radius=2"},
                                {"fused_radius=16,fused_steps=3,fused_band=5"}))
    check_strips_at_gpu_shape(shape,
                              test::sweep<std::string>({"gaussian:r=1", "gaussian:r=8", "box:r=16",
                                                        "sep:h=1,2,1:v=1,2,3,4,5"},
                                                       {"gaussian:r=8", "sep:h=1,2,1:v=1,2,3,4,5"}),
                              17);
}

TEST_CASE("strips equal the whole image with the direct separable kernel" *
          doctest::test_suite("sweeps")) {
  // Its runs of rows per work-item cross a strip's first and last rows.
  check_strips_at_gpu_shape(
      "direct_radius=3,direct_rows=5,vec_w=8,vec_h=2",
      test::sweep<std::string>({"gaussian:r=1", "gaussian:r=3", "sep:h=1,2,1:v=1,2,3,4,5"},
                               {"gaussian:r=3"}),
      31);
}

TEST_CASE("strips equal the whole image with box_walk") {
  // box_walk's bands start inside strips, and its warm-up rows cross the strip's edges.
  check_strips_at_gpu_shape("box_walk=16,box_walk_steps=4,box_walk_band=5", {"box:r=19"}, 23);
}

TEST_CASE("strips equal the whole image with conv_vec's GPU forms") {
  // conv_slide computes vec_conv rows per work-item and stops at the strip's last row; a
  // strip's first and last rows fall inside a work-item's run. 4-wide vectors with 5 rows load
  // all rows first (small kernels); 8-wide with 9 rows slide row by row.
  for (const char* shape :
       {"conv_vec=4,vec_conv=5,vec_w=8,vec_h=2", "conv_vec=8,vec_conv=9,vec_w=8,vec_h=2"})
    check_strips_at_gpu_shape(shape, {"sharpen", "edge:mode=sobel", "conv:k=1,2,3,4,5:w=1:h=5"},
                              29);
}

TEST_CASE("strips equal the whole image: a radius larger than the strips" *
          doctest::test_suite("sweeps")) {
  // Each strip of 3 rows reads 403: the reference's share of this test is most of its time.
  for (const int h : test::sweep<int>({517, 1031}, {517})) {
    const PixelBuffer input = test::random_pixels(kWidth, h, 1, PixelType::u8, 3);
    for (const char* border : {"zero", "reflect"})
      check_strips_equal_whole({std::string("gaussian:r=200:border=") + border}, input, {3, 64});
  }
}

TEST_CASE("strips equal the whole image: chains of three stages, guides shared and not" *
          doctest::test_suite("sweeps")) {
  const std::vector<std::vector<std::string>> chains = {
      {"sharpen:border=zero", "gaussian:r=5:border=reflect", "box:r=2"},
      {"histogram:mode=rgb", "atrous:iters=2", "emboss"},
      {"bilateral:r=3", "histogram", "bilateral:r=2:normal=off"},
      {"box:r=18", "sep:h=1,2,1:v=1,4,6,4,1", "edge:mode=sobel:gray=1"}};
  for (const int h : test::sweep<int>({std::begin(kHeights), std::end(kHeights)}, {7, 517})) {
    const PixelBuffer input = test::random_pixels(kWidth, h, 3, PixelType::u8, 40 + h);
    for (const auto& chain : chains) check_strips_equal_whole(chain, input);
  }
}

TEST_CASE("strips equal the whole image on float data, NaN and Inf included") {
  PixelBuffer input = test::random_pixels(kWidth, 517, 3, PixelType::f32, 9);
  input.samples<float>()[100] = NAN;
  input.samples<float>()[2000] = INFINITY;
  check_strips_equal_whole({"gaussian:r=4", "histogram:range=-1,2"}, input);
  check_strips_equal_whole({"bilateral", "atrous:iters=1"}, input);
  // range=auto on float data needs the whole image's range: after another stage such a chain
  // runs whole; first, it streams after a pass over the input for the range. Either way the
  // result is the same whatever strips were asked for.
  check_strips_equal_whole({"box:r=3", "histogram:mode=rgb"}, input);
  check_strips_equal_whole({"histogram:mode=rgb", "box:r=3"}, input);
  check_strips_equal_whole({"histogram:mode=luma709"}, input);
}

TEST_CASE("lanes: strips on two queues and on three reference threads give the same results") {
  const Pipeline pipeline(std::vector<StageSpec>{
      {"gaussian:r=3", ""}, {"histogram:mode=rgb", ""}, {"bilateral:r=2", ""}, {"emboss", ""}});
  const PixelBuffer input = test::random_pixels(57, 301, 3, PixelType::u8, 21);
  RunOptions options;
  options.stream.strip_rows = 7;
  options.guides = guides_for(pipeline, input.width, input.height);
  options.stream.keep_flags = true;
  options.stream.verify = true;
  const RunResult one = run_device(test::device(), pipeline, input, PixelType::f32, options);
  options.stream.lanes = 2;
  const RunResult two = run_device(test::device(), pipeline, input, PixelType::f32, options);
  test::device().take_timings();
  CHECK(two.ok());
  CHECK(two.pixels.bytes == one.pixels.bytes);
  REQUIRE(two.runs.size() == 4);
  const auto counted_two = two.runs[1].side_output("histogram");
  const auto counted_one = one.runs[1].side_output("histogram");
  REQUIRE(counted_two);
  REQUIRE(counted_one);
  CHECK(counted_two->histogram->same_counts(*counted_one->histogram));
  CHECK(flag_bits(two.runs[2]) == flag_bits(one.runs[2]));
  REQUIRE(two.checks.size() == one.checks.size());
  for (std::size_t i = 0; i < two.checks.size(); ++i)
    CHECK(two.checks[i].result.samples == one.checks[i].result.samples);
  options.stream.verify = false;
  options.stream.lanes = 1;
  const PixelBuffer reference = run_reference(pipeline, input, PixelType::f32, options);
  options.stream.lanes = 3;
  CHECK(run_reference(pipeline, input, PixelType::f32, options).bytes == reference.bytes);
}

TEST_CASE("strip plans: every row delivered once; inputs widened by the chain's reach") {
  const Pipeline pipeline(
      std::vector<StageSpec>{{"gaussian:r=4", ""}, {"histogram", ""}, {"bilateral:r=2", ""}});
  CHECK(pipeline.reach() == 4 + 0 + 3);
  CHECK(pipeline.reach_after(0) == 3);
  CHECK(pipeline.guide_sets().size() == 1);
  CHECK(pipeline.guide_set(2) == 0);
  CHECK(pipeline.guide_set(0) == -1);
  const StripPlan plan(pipeline, 100, 30);
  REQUIRE(plan.strips() == 4);
  CHECK(plan.output(0) == Span{0, 30});
  CHECK(plan.output(3) == Span{90, 100});
  CHECK(plan.input(0) == Span{0, 37});
  CHECK(plan.input(1) == Span{23, 67});
  CHECK(plan.input(3) == Span{83, 100});
  CHECK(plan.stage_rows(1, 0) == Span{27, 63});  // gaussian computes what bilateral reads
  CHECK(plan.stage_rows(1, 2) == Span{30, 60});
  CHECK(StripPlan(pipeline, 100, 0).strips() == 1);
  CHECK(StripPlan(pipeline, 100, 500).strips() == 1);
  CHECK(pipeline.whole_image_reason(PixelType::u8) == "");
  CHECK(Pipeline(std::vector<StageSpec>{{"box:r=2:border=wrap", ""}})
            .whole_image_reason(PixelType::u8)
            .find("border=wrap") != std::string::npos);
  // A histogram's range=auto on float data: streamed first (a scan finds the range), whole after
  // stages that make its input.
  CHECK(pipeline.whole_image_reason(PixelType::f32).find("measures its whole input") !=
        std::string::npos);
  CHECK(Pipeline(std::vector<StageSpec>{{"histogram", ""}}).whole_image_reason(PixelType::f32) ==
        "");
}

TEST_CASE("carried strip plans: the inputs tile the image; the first strip delivers fewer rows") {
  const Pipeline pipeline(std::vector<StageSpec>{{"gaussian:r=4", ""}});
  const StripPlan plan(pipeline, 100, 30, true);
  REQUIRE(plan.strips() == 4);
  CHECK(plan.output(0) == Span{0, 26});  // 30 rows read, the reach short of its last
  CHECK(plan.input(0) == Span{0, 30});
  CHECK(plan.output(1) == Span{26, 56});
  CHECK(plan.input(1) == Span{30, 60});  // [22, 60) widened; [22, 30) the strip before read
  CHECK(plan.stage_rows(1, 0) == Span{26, 56});
  CHECK(plan.input(3) == Span{90, 100});
  CHECK(plan.output(3) == Span{86, 100});
  // Strips shorter than the reach: the last ones have no row left to read but one.
  const StripPlan small(pipeline, 10, 3, true);
  REQUIRE(small.strips() == 4);
  CHECK(small.output(0) == Span{0, 1});
  CHECK(small.input(0) == Span{0, 5});
  CHECK(small.input(1) == Span{5, 8});
  CHECK(small.input(2) == Span{8, 10});
  CHECK(small.input(3) == Span{9, 10});
  CHECK(small.output(3) == Span{7, 10});
  for (const StripPlan* p : {&plan, &small}) {  // every output row once, in order
    int next = 0;
    for (int k = 0; k < p->strips(); ++k) {
      CHECK(p->output(k).first == next);
      next = p->output(k).last;
    }
    CHECK(next == p->height());
  }
  CHECK(StripPlan(pipeline, 100, 100, true).strips() == 1);  // one strip: nothing to carry
  CHECK(StripPlan(pipeline, 100, 100, true).input(0) == Span{0, 100});
}

TEST_CASE("streaming with the vector kernels: strips read only rows the strip before did not") {
  // The first stage carries its rows pass's shared rows (the vector kernels CPUs run, here on
  // whatever the test device is), so each strip's input starts where the last one's ended (one
  // row again where none is new): results equal the whole image's.
  Device device(test::device().info(), default_cache_dir());
  test::retune(device, "vec=16");
  for (const std::string spec : {"gaussian:r=5:border=reflect", "conv:k=1,2,1,2,4,2,1,2,1:gray=1",
                                 "sep:h=1,2,3,2,1:v=1,0,1:offset=0.25"}) {
    const Pipeline pipeline(std::vector<StageSpec>{{spec, ""}, {"sharpen:border=zero", ""}});
    REQUIRE(facet<CarriesRows>(*pipeline.stages()[0])->carries_rows(device));
    for (const int h : {1, 2, 7, 517}) {
      const PixelBuffer input = test::random_pixels(kWidth, h, 3, PixelType::u8, 70 + h);
      const PixelBuffer whole = run_device(device, pipeline, input, PixelType::u8, {}).pixels;
      for (const int strip_rows : {1, 3, 4, 64}) {
        StreamInput in;
        in.width = input.width, in.height = h, in.channels = 3, in.type = PixelType::u8;
        int rows_held = 0, last_row = 0, overlap = 0;
        in.read = [&](HostStrip& strip, Span rows) {
          overlap = std::max(overlap, last_row - strip.rows.first);
          last_row = strip.rows.last;
          rows_held += strip.rows.count();
          const std::size_t row = std::size_t(kWidth) * 3;
          std::memcpy(strip.pixels.bytes.data() + (rows.first - strip.rows.first) * row,
                      input.bytes.data() + rows.first * row, rows.count() * row);
        };
        PixelBuffer out;  // gray=1 makes one channel of three
        const auto write = [&](Span rows, const PixelBuffer& pixels) {
          if (out.bytes.empty()) out = PixelBuffer(kWidth, h, pixels.channels, PixelType::u8);
          std::memcpy(out.bytes.data() + rows.first * pixels.bytes.size() / rows.count(),
                      pixels.bytes.data(), pixels.bytes.size());
        };
        const StreamResult result =
            stream_device(device, pipeline, in, PixelType::u8, write, {.strip_rows = strip_rows});
        device.take_timings();
        INFO(spec, " on ", h, " rows, strips of ", strip_rows, ": ", result.strips, " strips");
        CHECK(out.bytes == whole.bytes);
        CHECK(overlap <= 1);
        CHECK(rows_held <= h + result.strips);  // widened by the reach, 2 x 5 rows a strip
      }
    }
  }
}

TEST_CASE("strip rows: about 1.5 MiB a float buffer, at least 2x the reach") {
  StreamInput photo;  // a 5K RGB photo: 61440 bytes a float row (5120 floats a plane's row)
  photo.width = 5120, photo.height = 2880, photo.channels = 3, photo.type = PixelType::u8;
  const auto rows = [&](const char* spec, StripLimits limits) {
    return choose_strip_rows(Pipeline(std::vector<StageSpec>{{spec, ""}}), photo, PixelType::u8,
                             limits);
  };
  StripLimits cpu;  // a CPU device: its buffers are host memory, and it carries rows over
  cpu.device_bytes = std::size_t(8) << 30, cpu.max_allocation = std::size_t(2) << 30;
  CHECK(rows("gaussian:r=8", cpu) == 25);   // 1.5 MiB / 61440 bytes; 2 x 8 is less
  CHECK(rows("gaussian:r=16", cpu) == 32);  // twice the reach
  CHECK(rows("gaussian:r=24", cpu) == 48);
  StripLimits reference;  // no device: nothing carried, twice the reach all the same
  CHECK(rows("gaussian:r=12", reference) == 25);
  CHECK(rows("gaussian:r=24", reference) == 48);
  StripLimits gpu = cpu;
  gpu.device_is_host = false, gpu.target_bytes = std::size_t(16) << 20;
  CHECK(rows("gaussian:r=12", gpu) == 273);
  CHECK(rows("gaussian:r=100", gpu) == 400);
  StripLimits tight = cpu;  // the host budget wins over the floor: 72 rows of 425 KiB fit
  tight.host_bytes = std::size_t(30) << 20;
  CHECK(rows("gaussian:r=24", tight) == 72 - 2 * 24);
}

TEST_CASE("streaming: rows are read once and in order, written in order, verified per strip") {
  const Pipeline pipeline(std::vector<StageSpec>{{"gaussian:r=3", ""}, {"sharpen", ""}});
  const PixelBuffer input = test::random_pixels(31, 200, 3, PixelType::u8, 2);
  StreamInput in;
  in.width = input.width, in.height = input.height, in.channels = 3, in.type = PixelType::u8;
  int next_read = 0, next_written = 0, reads = 0;
  in.read = [&](HostStrip& strip, Span rows) {
    CHECK(rows.first == next_read);
    next_read = rows.last;
    ++reads;
    const std::size_t row = 31 * 3;
    std::memcpy(strip.pixels.bytes.data() + (rows.first - strip.rows.first) * row,
                input.bytes.data() + rows.first * row, rows.count() * row);
  };
  PixelBuffer out(31, 200, 3, PixelType::u8);
  const StreamResult result = stream_device(test::device(), pipeline, in, PixelType::u8,
                                            [&](Span rows, const PixelBuffer& pixels) {
                                              CHECK(rows.first == next_written);
                                              next_written = rows.last;
                                              std::memcpy(out.bytes.data() + rows.first * 93,
                                                          pixels.bytes.data(), pixels.bytes.size());
                                            },
                                            {.strip_rows = 16, .verify = true});
  test::device().take_timings();
  CHECK(next_read == 200);
  CHECK(next_written == 200);
  CHECK(reads == 13);
  CHECK(result.strips == 13);
  CHECK(result.ok());
  REQUIRE(result.checks.size() == 4);
  for (const auto& check : result.checks) CHECK(check.result.samples == 31u * 200u * 3u);
  CHECK(out.bytes == run_reference(pipeline, input, PixelType::u8).bytes);
  CHECK(result.phases.wall_s > 0);
}
