// Histograms: hand-made images with known counts, float edge cases, and every device strategy
// against the reference on awkward sizes, including more than 2^24 pixels.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "filters/measure/histogram.hpp"
#include "filters/registry.hpp"
#include "support.hpp"

using namespace halo;

namespace {

HistogramSpec spec(const std::string& text) {
  const Spec s = parse_spec(text.empty() ? "histogram" : "histogram:" + text);
  return HistogramSpec::from(Args(s, find_filter("histogram")->params));
}

const char* kMethods[] = {"global", "local", "private"};

// Every strategy the device can hold agrees with the reference; one whose counters do not
// fit in local memory is refused with a Usage error (global atomics always run).
void check_strategies(const PixelBuffer& pixels, const std::string& text,
                      Device& device = test::device()) {
  const Histogram expected = histogram_reference(pixels, spec(text));
  for (const char* method : kMethods) {
    INFO(text, " ", method, " on ", pixels.width, "x", pixels.height, "x", pixels.channels);
    try {
      const Histogram got = histogram_device(device, pixels, spec(text + ":method=" + method));
      device.take_timings();
      CHECK(got.method == method);
      CHECK(got.same_counts(expected));
    } catch (const Error& e) {
      CHECK(std::string(method) != "global");
      CHECK(std::string(e.what()).find("local memory") != std::string::npos);
    }
  }
}

}  // namespace

TEST_CASE("grey pixels R=G=B=v land in luma bin v; every 8-bit value once") {
  PixelBuffer grey(256, 1, 3, PixelType::u8);
  for (int v = 0; v < 256; ++v)
    for (int c = 0; c < 3; ++c) grey.samples<std::uint8_t>()[v * 3 + c] = std::uint8_t(v);
  for (const char* mode : {"luma", "luma709"}) {
    const Histogram h = histogram_reference(grey, spec(std::string("mode=") + mode));
    for (int v = 0; v < 256; ++v) CHECK(h.counts[v] == 1);
  }
  check_strategies(grey, "mode=luma");
  const Histogram rgb = histogram_reference(grey, spec("mode=rgb"));
  REQUIRE(rgb.counts.size() == 768);
  CHECK(rgb.binned() == 768);
  // Fewer bins: code v goes to v * bins / 256.
  const Histogram coarse = histogram_reference(grey, spec("bins=16"));
  for (int b = 0; b < 16; ++b) CHECK(coarse.counts[b] == 16);
}

TEST_CASE("the integer luma formula truncates: (299 R + 587 G + 114 B) / 1000") {
  PixelBuffer px(1, 1, 3, PixelType::u8);
  const std::uint8_t rgb[] = {255, 0, 0};  // 76245 / 1000 = 76
  std::memcpy(px.bytes.data(), rgb, 3);
  CHECK(histogram_reference(px, spec("")).counts[76] == 1);
  CHECK(histogram_reference(px, spec("mode=luma709")).counts[54] == 1);  // 542130 / 10000
}

TEST_CASE("a constant image puts every pixel in one bin, with every strategy") {
  PixelBuffer flat(1031, 997, 3, PixelType::u8);
  std::fill(flat.bytes.begin(), flat.bytes.end(), std::byte(200));
  const Histogram h = histogram_reference(flat, spec(""));
  CHECK(h.counts[200] == 1031u * 997u);
  check_strategies(flat, "mode=rgb");
}

TEST_CASE("a ramp of 16-bit codes fills equal bins") {
  PixelBuffer ramp(65536, 1, 1, PixelType::u16);
  for (int v = 0; v < 65536; ++v) ramp.samples<std::uint16_t>()[v] = std::uint16_t(v);
  const Histogram h = histogram_reference(ramp, spec("mode=gray:bins=1024"));
  for (int b = 0; b < 1024; ++b) CHECK(h.counts[b] == 64);
  check_strategies(ramp, "mode=gray:bins=1024");
  check_strategies(ramp, "mode=gray:bins=65536");
}

TEST_CASE("float edges: lo, hi, bin edges, outside, NaN, Inf, negative zero") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {0.0f,    -0.0f,  0.25f, 0.5f, 0.75f, 1.0f,
                                     -0.001f, 1.001f, nan,   inf,  -inf,  0.2499999f};
  PixelBuffer px(int(values.size()), 1, 1, PixelType::f32);
  std::memcpy(px.bytes.data(), values.data(), values.size() * 4);
  const Histogram h = histogram_reference(px, spec("mode=gray:bins=4:range=0,1"));
  // [0, .25) [.25, .5) [.5, .75) [.75, 1]: 0, -0 and 0.2499999 | 0.25 | 0.5 | 0.75, 1 (hi)
  CHECK(h.counts == std::vector<std::uint64_t>{3, 1, 1, 2});
  CHECK(h.under == 1);
  CHECK(h.over == 1);
  CHECK(h.nan == 1);
  CHECK(h.inf == 2);
  check_strategies(px, "mode=gray:bins=4:range=0,1");
  // range=auto spans the finite values.
  const Histogram a = histogram_reference(px, spec("mode=gray:bins=4"));
  CHECK(a.lo == -0.001f);
  CHECK(a.hi == 1.001f);
  CHECK(a.under + a.over == 0);
  check_strategies(px, "mode=gray:bins=4");
}

TEST_CASE("every strategy matches the reference on awkward sizes and modes" *
          doctest::test_suite("sweeps")) {
  // 8/16-bit data is read in blocks of 16 pixels when ppi is a multiple of 16 (ppi=auto gives
  // 16..256; 16 here), pixel by pixel otherwise (ppi=24); sizes leave partial blocks at the end.
  for (const auto& size : test::sweep<std::pair<int, int>>({{1, 1}, {7, 5}, {33, 17}, {1023, 517}},
                                                           {{7, 5}, {1023, 517}})) {
    const int w = size.first, h = size.second;
    check_strategies(test::random_pixels(w, h, 3, PixelType::u8), "mode=luma");
    check_strategies(test::random_pixels(w, h, 3, PixelType::u8), "mode=luma:ppi=24");
    check_strategies(test::random_pixels(w, h, 1, PixelType::u8), "mode=gray:ppi=16");
    check_strategies(test::random_pixels(w, h, 4, PixelType::u16), "mode=channel:c=3");
    check_strategies(test::random_pixels(w, h, 4, PixelType::u8), "mode=rgb:bins=100");
    check_strategies(test::random_pixels(w, h, 3, PixelType::u16), "mode=luma709:bins=4096");
    check_strategies(test::random_pixels(w, h, 3, PixelType::f32), "mode=channel:c=2:bins=37");
    check_strategies(test::random_pixels(w, h, 3, PixelType::f32),
                     "mode=rgb:range=-0.25,1.25:ppi=3");
  }
}

TEST_CASE("the local strategy's interleaved copies: any count and group size, exact counts" *
          doctest::test_suite("sweeps")) {
  // Counter b of copy s lies at b * HIST_SUBHISTS + s: a count that is not a power of two, more
  // copies than work-items and one copy must all add up to the reference, on random data (the
  // atomics of a block one by one), constant data (a block's one atomic) and float runs.
  Device device(test::device().info(), default_cache_dir());
  for (const char* shape : test::sweep<const char*>(
           {"hist_subhists=1", "hist_subhists=3,hist_group=64", "hist_subhists=32",
            "hist_subhists=32,hist_group=32,hist_in_flight=2", "hist_subhists=64,hist_group=32"},
           {"hist_subhists=3,hist_group=64", "hist_subhists=32,hist_group=32,hist_in_flight=2"})) {
    test::retune(device, shape);
    for (const auto& size : {std::pair{1, 1}, {7, 5}, {1023, 517}}) {
      const int w = size.first, h = size.second;  // not a binding: INFO captures them
      INFO(shape, " ", w, "x", h);
      PixelBuffer constant = test::random_pixels(w, h, 3, PixelType::u8);
      std::fill(constant.bytes.begin(), constant.bytes.end(), std::byte{77});
      for (const auto& [pixels, text] :
           {std::pair{test::random_pixels(w, h, 3, PixelType::u8), "mode=luma"},
            {constant, "mode=luma"},
            {test::random_pixels(w, h, 1, PixelType::u8), "mode=gray:ppi=32"},
            {test::random_pixels(w, h, 4, PixelType::u8), "mode=rgb"},
            {test::random_pixels(w, h, 3, PixelType::u16), "mode=luma709:bins=4096:ppi=24"},
            {test::random_pixels(w, h, 3, PixelType::f32), "mode=rgb:range=-0.25,1.25"}}) {
        const Histogram got =
            histogram_device(device, pixels, spec(std::string(text) + ":method=local"));
        device.take_timings();
        CHECK(got.same_counts(histogram_reference(pixels, spec(text))));
      }
    }
  }
}

TEST_CASE("more than 2^24 pixels: counts beyond float precision stay exact") {
  PixelBuffer big(4097, 4097, 1, PixelType::u8);  // 16785409 pixels > 2^24
  auto* s = big.samples<std::uint8_t>();
  for (std::size_t i = 0; i < big.sample_count(); ++i) s[i] = i % 3 ? 7 : 9;
  const Histogram h = histogram_reference(big, spec("mode=gray"));
  CHECK(h.counts[9] == (big.sample_count() + 2) / 3);
  CHECK(h.counts[7] == big.sample_count() - h.counts[9]);
  check_strategies(big, "mode=gray");
}

TEST_CASE("ppi=auto keeps 512 work-items per compute unit, 16..256 pixels per work-item") {
  Device& device = test::device();
  const auto units = device.info().compute_units;
  const auto ppi_for = [&](int w, int h) {
    const PixelBuffer pixels = test::random_pixels(w, h, 1, PixelType::u8);
    const Histogram got = histogram_device(device, pixels, spec("mode=gray:method=local"));
    device.take_timings();
    CHECK(got.same_counts(histogram_reference(pixels, spec("mode=gray"))));
    return got.pixels_per_item;
  };
  CHECK(ppi_for(7, 5) == 16);
  // Exactly 512 work-items per unit at 256 pixels per work-item.
  const int exact = 2 * 256 * 256 * int(units);
  CHECK(ppi_for(exact / 64, 64) == 256);
  CHECK(ppi_for(exact / 64 - 1, 64) == 128);
  CHECK(histogram_device(device, test::random_pixels(7, 5, 1, PixelType::u8),
                         spec("mode=gray:ppi=48"))
            .pixels_per_item == 48);
  device.take_timings();
}

TEST_CASE("histogram as a pipeline stage: integer sources binned by the codes they hold") {
  Image image = test::random_image(19, 11, 3, false, 4);
  image.set_source(PixelType::u8);
  const auto stage = make_stage("histogram:mode=rgb");
  StageRun run;
  CHECK(stage->reference(image, run).data() == image.data());  // passes through
  const auto counted = run.side_output("histogram");
  REQUIRE(counted);
  CHECK(counted->histogram->codes);
  CHECK(counted->histogram->binned() == 19u * 11u * 3u);
}

TEST_CASE("histogram options are checked") {
  CHECK_THROWS_WITH(make_stage("histogram:bins=0"), doctest::Contains("out of range"));
  CHECK_THROWS_WITH(make_stage("histogram:bins=65537"), doctest::Contains("out of range"));
  CHECK_THROWS_WITH(make_stage("histogram:range=1,0"), doctest::Contains("lo < hi"));
  CHECK_THROWS_WITH(make_stage("histogram:c=1"), doctest::Contains("only with mode=channel"));
  const PixelBuffer gray = test::random_pixels(4, 4, 1, PixelType::u8);
  CHECK_THROWS_WITH(histogram_reference(gray, spec("mode=luma")),
                    doctest::Contains("needs 3 colour channels"));
  CHECK_THROWS_WITH(histogram_reference(gray, spec("mode=gray:range=0,1")),
                    doctest::Contains("range= applies to float data"));
  const PixelBuffer rgb = test::random_pixels(4, 4, 3, PixelType::u8);
  CHECK_THROWS_WITH(histogram_reference(rgb, spec("mode=gray")), doctest::Contains("mode=luma"));
}

// The labels of everything enqueued since the last call, in order.
std::vector<std::string> enqueued(Device& device) {
  std::vector<std::string> labels;
  for (const auto& t : device.take_timings()) labels.push_back(t.label);
  return labels;
}

TEST_CASE("histograms run on the out-of-order queue and profile the count-to-reduce span") {
  const PixelBuffer pixels = test::random_pixels(300, 200, 3, PixelType::u8);
  const Histogram expected = histogram_reference(pixels, spec("mode=rgb"));
  Device& device = test::device();
  INFO("PoCL and NVIDIA both offer out-of-order queues and 64-bit atomics");
  REQUIRE(device.info().int64_atomics);
  CHECK(device.has_out_of_order());
  SUBCASE("local sub-histograms add straight into the 64-bit totals") {
    Device fresh(device.info(), default_cache_dir());
    HistogramTotals totals;
    const Histogram got = histogram_device(fresh, pixels, spec("mode=rgb"), &totals);
    CHECK(got.same_counts(expected));
    CHECK(got.count_to_reduce_ms > 0);
    CHECK(enqueued(fresh) == std::vector<std::string>{"upload", "histogram totals",
                                                      "histogram_local", "histogram totals"});
    // The totals run on: the next histogram of the same size needs no clearing.
    CHECK(histogram_device(fresh, pixels, spec("mode=rgb"), &totals).same_counts(expected));
    CHECK(enqueued(fresh) ==
          std::vector<std::string>{"upload", "histogram_local", "histogram totals"});
  }
  SUBCASE("without 64-bit atomics: 32-bit partials, then the reduce kernel") {
    DeviceInfo info = device.info();
    info.int64_atomics = false;
    Device narrow(info, default_cache_dir());
    HistogramTotals totals;
    const Histogram got = histogram_device(narrow, pixels, spec("mode=rgb"), &totals);
    CHECK(got.same_counts(expected));
    CHECK(got.count_to_reduce_ms > 0);
    CHECK(enqueued(narrow) == std::vector<std::string>{"upload", "histogram totals",
                                                       "histogram partials", "histogram_local",
                                                       "histogram_reduce", "histogram totals"});
    CHECK(histogram_device(narrow, pixels, spec("mode=rgb"), &totals).same_counts(expected));
    CHECK(enqueued(narrow) == std::vector<std::string>{"upload", "histogram partials",
                                                       "histogram_local", "histogram_reduce",
                                                       "histogram totals"});
    check_strategies(test::random_pixels(1023, 517, 3, PixelType::u8), "mode=luma", narrow);
  }
}

TEST_CASE("running totals: histograms in a row stay exact, whatever came before") {
  Device device(test::device().info(), default_cache_dir());
  const PixelBuffer a = test::random_pixels(333, 77, 3, PixelType::u8);
  const PixelBuffer b = test::random_pixels(64, 64, 3, PixelType::u8);
  const PixelBuffer grey = test::random_pixels(101, 3, 1, PixelType::u8);
  HistogramTotals luma, rgb, other;  // one per histogram shape, as a batch keeps them
  const auto exact = [&](const PixelBuffer& pixels, const std::string& text,
                         HistogramTotals& totals) {
    const Histogram got = histogram_device(device, pixels, spec(text), &totals);
    device.take_timings();
    return got.same_counts(histogram_reference(pixels, spec(text)));
  };
  for (int round = 0; round < 3; ++round) {  // sizes and modes interleaved
    CHECK(exact(a, "mode=luma", luma));
    CHECK(exact(b, "mode=luma", luma));
    CHECK(exact(a, "mode=rgb", rgb));
    CHECK(exact(grey, "mode=gray:bins=256:method=global", luma));
    CHECK(exact(b, "mode=luma:method=private", luma));
    CHECK(exact(a, "mode=rgb:bins=64", other));  // another size: the totals are remade
    CHECK(exact(b, "mode=luma", other));
  }
  // Totals prepared for a count that was never taken back hold garbage: the next histogram
  // clears them instead of subtracting a stale record.
  cl::Event ready;
  cl::Buffer& buffer = luma.prepare(device, 256 + 4, ready);
  const std::vector<cl_ulong> garbage(256 + 4, 12345);
  device.write(buffer, garbage.data(), garbage.size() * sizeof(cl_ulong), "garbage");
  CHECK(exact(a, "mode=luma", luma));
  CHECK(exact(b, "mode=luma", luma));
}
