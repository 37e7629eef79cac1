// denoise: OIDN's weights archive, each layer kind by hand, the network's structure and
// receptive field, and the device against the reference on odd sizes; tiles and strips against
// the whole image bit for bit. (The agreement with an independent implementation of OIDN is
// tests/denoise/agree.py.)
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "engine/guided_support.hpp"
#include "net/denoise_net.hpp"
#include "net/tza.hpp"
#include "pipeline/pipeline.hpp"

using namespace halo;

namespace {

// A .tza archive by hand: tensors after the header, then the table.
struct Archive {
  std::vector<std::byte> bytes = std::vector<std::byte>(12);  // magic, version, table offset
  std::vector<std::byte> table;
  int count = 0;

  template <class T>
  static void put(std::vector<std::byte>& to, T v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    to.insert(to.end(), p, p + sizeof v);
  }
  void add(const std::string& name, std::vector<int> dims, const std::string& layout, char type,
           const std::vector<float>& values) {
    const std::uint64_t offset = bytes.size();
    for (float v : values) {
      if (type == 'f')
        put(bytes, v);
      else
        put(bytes, std::uint16_t(v == 1.0f ? 0x3c00 : v == -2.0f ? 0xc000 : 0));
    }
    put(table, std::uint16_t(name.size()));
    for (char c : name) table.push_back(std::byte(c));
    table.push_back(std::byte(dims.size()));
    for (int d : dims) put(table, std::uint32_t(d));
    for (char c : layout) table.push_back(std::byte(c));
    table.push_back(std::byte(type));
    put(table, offset);
    ++count;
  }
  std::vector<std::byte> build(std::uint16_t magic = 0x41D7, std::uint8_t major = 2) const {
    std::vector<std::byte> out = bytes;
    std::memcpy(out.data(), &magic, 2);
    out[2] = std::byte(major);
    const std::uint64_t at = out.size();
    std::memcpy(out.data() + 4, &at, 8);
    put(out, std::uint32_t(count));
    out.insert(out.end(), table.begin(), table.end());
    return out;
  }
};

std::string error_of(const std::vector<std::byte>& bytes) {
  try {
    parse_tza(bytes, "w.tza");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::BadData);
    return e.what();
  }
  return "";
}

// Every output sample within `tolerance` x max(1, |reference|).
void check_close(const Image& got, const Image& expected, double tolerance,
                 const std::string& what) {
  const Comparison c = compare(got, expected, tolerance);
  INFO(what, ": ", c.summary());
  CHECK(c.ok());
}

// Guides like a render's: albedo in (0, 1), normals of any length, a few NaN and zero ones.
Guides render_guides(int w, int h, unsigned seed = 3) {
  Guides g;
  g.albedo = test::random_image(w, h, 3, false, seed, 0.02f, 0.98f);
  g.normal = test::random_image(w, h, 3, false, seed + 1, -1.2f, 1.2f);
  if (w * h > 4) g.normal.at(1, 0, 0) = NAN, g.normal.at(0, 1, 2) = 0.0f;
  return g;
}

// The stage on the test device; `in` is uploaded as samples of its source type (8-bit for
// LDR cases, whose reference then takes the same quantised image).
Image device_result(const Stage& stage, const Image& in, const Guides* g) {
  StageRun run;
  run.guides = g;
  const DeviceImage out =
      stage.enqueue(test::device(), upload(test::device(), to_pixels(in, in.source())), run);
  Image result = download_image(test::device(), out);
  test::device().take_timings();
  return result;
}

Image reference_result(const Stage& stage, const Image& in, const Guides* g) {
  StageRun run;
  run.guides = g;
  return stage.reference(in, run);
}

}  // namespace

TEST_CASE("half floats widen exactly, specials included") {
  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0xc000) == -2.0f);
  CHECK(half_to_float(0x7bff) == 65504.0f);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));  // the smallest subnormal
  CHECK(half_to_float(0x03ff) == std::ldexp(1023.0f, -24));
  CHECK(half_to_float(0x0400) == std::ldexp(1.0f, -14));
  CHECK(std::bit_cast<std::uint32_t>(half_to_float(0x8000)) == 0x80000000u);
  CHECK(std::isinf(half_to_float(0x7c00)));
  CHECK(std::isnan(half_to_float(0x7e00)));
}

TEST_CASE("tensor archives: a hand-made one reads back; damaged ones are refused by name") {
  Archive a;
  a.add("conv.weight", {1, 1, 3, 3}, "oihw", 'h', {1, -2, 1, 1, 1, 1, 1, 1, -2});
  a.add("conv.bias", {1}, "x", 'f', {0.25f});
  const auto bytes = a.build();
  const TensorMap t = parse_tza(bytes, "w.tza");
  REQUIRE(t.size() == 2);
  CHECK(t.at("conv.weight").dims == std::vector<int>{1, 1, 3, 3});
  CHECK(t.at("conv.weight").layout == "oihw");
  CHECK(t.at("conv.weight").values[1] == -2.0f);
  CHECK(t.at("conv.bias").values[0] == 0.25f);
  CHECK(error_of(a.build(0x1234)).find("magic") != std::string::npos);
  CHECK(error_of(a.build(0x41D7, 3)).find("version 3") != std::string::npos);
  for (std::size_t cut : {std::size_t(3), std::size_t(30), bytes.size() - 1}) {
    const std::string e = error_of({bytes.begin(), bytes.begin() + cut});
    INFO(cut, ": ", e);
    CHECK(e.find("w.tza") == 0);
  }
  Archive bad;
  bad.add("conv.weight", {1}, "z", 'f', {1});
  CHECK(error_of(bad.build()).find("layout") != std::string::npos);
}

TEST_CASE("layers by hand: 3x3 convolution with zero padding and ReLU, pooling, upsampling") {
  NetLayer l;
  l.in = 1, l.out = 2;
  l.weight = {1, 1, 1, 1, 1,  1, 1, 1, 1,   // output 0: the 3x3 sum
              0, 0, 0, 0, -1, 0, 0, 0, 0};  // output 1: minus the centre
  l.bias = {0.5f, 0.25f};
  Activation a(1, 3, 3);
  for (int i = 0; i < 9; ++i) a.values[i] = float(i + 1);  // 1 2 3 / 4 5 6 / 7 8 9
  const Activation c = conv3x3(a, l);
  CHECK(c.at(0, 0, 0) == 1 + 2 + 4 + 5 + 0.5f);  // a corner: four taps inside
  CHECK(c.at(0, 1, 1) == 45 + 0.5f);
  CHECK(c.at(0, 2, 1) == 4 + 5 + 6 + 7 + 8 + 9 + 0.5f);
  CHECK(c.at(1, 1, 1) == 0.0f);  // 0.25 - 5, cut by the ReLU
  l.relu = false;
  CHECK(conv3x3(a, l).at(1, 1, 1) == 0.25f - 5);

  Activation b(1, 2, 4);
  b.values = {1, 5, 2, 0, 3, -1, 7, 8};
  const Activation p = maxpool2x2(b);
  CHECK(p.width == 2);
  CHECK(p.height == 1);
  CHECK(p.values == std::vector<float>{5, 8});
  const Activation u = upsample2x(p);
  CHECK(u.values == std::vector<float>{5, 5, 8, 8, 5, 5, 8, 8});
  const Activation j = concat(p, u.channels ? maxpool2x2(u) : p);
  CHECK(j.channels == 2);
  CHECK(j.values == std::vector<float>{5, 8, 5, 8});
}

TEST_CASE("OIDN's networks: layers, receptive field and work from their weights") {
  const auto net = DenoiseNet::load("rt_hdr_alb_nrm");
  const auto& layers = net->layers();
  REQUIRE(layers.size() == 16);
  CHECK(net->input_channels() == 9);
  CHECK(net->output_channels() == 3);
  CHECK(layers[13].name == "dec_conv1a");
  CHECK(layers[13].in == 64 + 9);  // the level below upsampled, then the input
  CHECK(layers[13].skip == NetLayer::kInput);
  CHECK(layers[1].pool);
  CHECK_FALSE(layers.back().relu);
  // 9 x in x out / 4^level summed over the layers: about 125k multiply-adds a pixel.
  CHECK(net->macs_per_pixel() == 125406.0);
  CHECK(net->receptive_radius() == DenoiseNet::receptive_radius(false));
  CHECK(DenoiseNet::receptive_radius(false) == 94);
  const auto large = DenoiseNet::load("rt_hdr_calb_cnrm_large");
  CHECK(large->layers().size() == 19);
  CHECK(large->receptive_radius() == DenoiseNet::receptive_radius(true));
  CHECK(DenoiseNet::receptive_radius(true) > 94);
  CHECK(DenoiseNet::load("rt_ldr_small")->input_channels() == 3);
}

TEST_CASE("denoise: device against the reference on odd sizes, with and without guides") {
  // 70 x 41 pads to 80 x 48: the deepest level is 5 x 3, odd both ways.
  const int sizes[][2] = {{1, 1}, {7, 5}, {33, 17}, {70, 41}};
  for (const auto& size : sizes) {
    const int w = size[0], h = size[1];
    const Guides g = render_guides(w, h);
    const Image hdr = test::random_image(w, h, 4, true, 9, 0.0f, 8.0f);  // RGBA, HDR values
    const Image grey = test::random_image(w, h, 1, false, 10);
    for (const std::string spec :
         {"denoise:precision=fp32", "denoise:precision=fp32:quality=fast"}) {
      const auto stage = make_stage(spec);
      const std::string what = spec + " " + std::to_string(w) + "x" + std::to_string(h);
      check_close(device_result(*stage, hdr, &g), reference_result(*stage, hdr, &g), 1e-4,
                  what + " RGBA with albedo and normals");
      check_close(device_result(*stage, grey, nullptr), reference_result(*stage, grey, nullptr),
                  1e-4, what + " grey");
    }
  }
}

TEST_CASE("denoise: border rules extend the image by the receptive field; zero is OIDN's") {
  const int w = 37, h = 23;
  const Guides g = render_guides(w, h);
  const Image in = test::random_image(w, h, 3, false, 14, 0.0f, 4.0f);
  for (const char* border : {"clamp", "reflect", "wrap"}) {
    const std::string spec = std::string("denoise:precision=fp32:border=") + border;
    const auto stage = make_stage(spec);
    const Image ref = reference_result(*stage, in, &g);
    check_close(device_result(*stage, in, &g), ref, 1e-4, spec);
    // Not OIDN's zero padding: the edges differ, and the rule is what extends the image.
    CHECK(compare(ref, reference_result(*make_stage("denoise"), in, &g), 1e-3).failures > 0);
  }
  // Tiles on the extended canvas give the whole canvas's result.
  const auto whole = make_stage("denoise:precision=fp32:border=reflect");
  const auto tiled = make_stage("denoise:precision=fp32:border=reflect:tile=16");
  CHECK(compare(device_result(*tiled, in, &g), device_result(*whole, in, &g), 0.0).max_error == 0);
  CHECK(make_stage("denoise:border=wrap")->whole_image_reason(PixelType::f32) != "");
  CHECK(make_stage("denoise:border=reflect")->whole_image_reason(PixelType::f32) == "");
}

TEST_CASE("denoise: the alpha plane passes; precision=tf32 and fp16 hold their stated tolerance") {
  const Guides g = render_guides(48, 40);
  const Image in = test::random_image(48, 40, 4, true, 9, 0.0f, 4.0f);
  for (const std::string precision : {"tf32", "fp16"}) {
    const auto stage = make_stage("denoise:precision=" + precision);
    const Image got = device_result(*stage, in, &g);
    for (int y = 0; y < 40; ++y)
      for (int x = 0; x < 48; ++x) CHECK(got.at(x, y, 3) == in.at(x, y, 3));
    // Float32 where the device has no tensor cores, so 1e-4 there.
    const double tolerance = verify_tolerance(*stage, test::device(), 1e-4);
    CHECK(tolerance == (test::device().info().tensor_cores() ? 1e-2 : 1e-4));
    check_close(got, reference_result(*stage, in, &g), tolerance, precision);
  }
}

TEST_CASE("denoise: precision=fp16 on odd sizes, every network shape, within its tolerance") {
  // Half tensors pair the channels: 3 colour channels alone (no guides) and the 9 of colour,
  // albedo and normal each leave a pair half empty, in the first layer and in the last
  // decoder's skip; the small and large networks have other channel counts.
  for (const auto& [w, h] : {std::pair{1, 1}, {7, 5}, {37, 23}}) {
    const Guides g = render_guides(w, h);
    const Image hdr = test::random_image(w, h, 3, false, 21, 0.0f, 8.0f);
    for (const std::string spec : {"denoise:precision=fp16", "denoise:precision=fp16:quality=fast",
                                   "denoise:precision=fp16:aux=clean:quality=high"}) {
      const auto stage = make_stage(spec);
      const double tolerance = verify_tolerance(*stage, test::device(), 1e-4);
      const std::string what = spec + " " + std::to_string(w) + "x" + std::to_string(h);
      check_close(device_result(*stage, hdr, &g), reference_result(*stage, hdr, &g), tolerance,
                  what + " with guides");
      check_close(device_result(*stage, hdr, nullptr), reference_result(*stage, hdr, nullptr),
                  tolerance, what + " alone");
    }
  }
}

TEST_CASE("denoise: tiles and strips give the whole image's result, bit for bit") {
  // Each tile also computes the receptive field around it (109 pixels a side), so tiles cost
  // far more than the image here; the reference takes the fewest.
  const int w = 130, h = 110;
  const Guides g = render_guides(w, h);
  const Image in = test::random_image(w, h, 3, false, 4, 0.0f, 16.0f);
  const auto whole = make_stage("denoise:precision=fp32");
  const Image expected = device_result(*whole, in, &g);
  for (const char* tile : {"37"}) {
    const auto tiled = make_stage(std::string("denoise:precision=fp32:tile=") + tile);
    const Comparison d = compare(device_result(*tiled, in, &g), expected, 0.0);
    INFO("tile=", tile, ": ", d.summary());
    CHECK(d.max_error == 0.0);
  }
  const Comparison r = compare(reference_result(*make_stage("denoise:tile=72"), in, &g),
                               reference_result(*whole, in, &g), 0.0);
  INFO("reference, tile=80: ", r.summary());
  CHECK(r.max_error == 0.0);
  // Strips through the executor: the exposure is scanned over the whole input first.
  const Pipeline pipeline(std::vector<StageSpec>{{"denoise:precision=fp32", ""}});
  const PixelBuffer pixels = to_pixels(in, PixelType::f32);
  RunOptions one;
  one.guides = {g};
  const RunResult all = run_device(test::device(), pipeline, pixels, PixelType::f32, one);
  RunOptions strips = one;
  strips.stream.strip_rows = 64;
  CHECK(run_device(test::device(), pipeline, pixels, PixelType::f32, strips).pixels.bytes ==
        all.pixels.bytes);
  strips.stream.strip_rows = 23;
  CHECK(run_device(test::device(), pipeline, pixels, PixelType::f32, strips).pixels.bytes ==
        all.pixels.bytes);
}

TEST_CASE("denoise: the network follows the guides, hdr and quality") {
  const Guides g = render_guides(8, 8), albedo_only = [&] {
    Guides a;
    a.albedo = g.albedo;
    return a;
  }();
  const auto names = [](const std::string& spec, const Guides* guides) {
    StageRun run;
    run.guides = guides;
    std::string all;
    for (const auto& d : make_stage(spec)->details(run)) all += d + "\n";
    return all;
  };
  CHECK(names("denoise", &g).find("float input: OIDN network rt_hdr_alb_nrm\n") !=
        std::string::npos);
  CHECK(names("denoise", &g).find("8/16-bit input: OIDN network rt_ldr_alb_nrm\n") !=
        std::string::npos);
  CHECK(names("denoise", &albedo_only).find("network rt_hdr_alb\n") != std::string::npos);
  CHECK(names("denoise", nullptr).find("network rt_hdr\n") != std::string::npos);
  CHECK(names("denoise:quality=fast", &g).find("rt_hdr_alb_nrm_small") != std::string::npos);
  CHECK(names("denoise:aux=clean", &g).find("rt_hdr_calb_cnrm\n") != std::string::npos);
  CHECK(names("denoise:aux=clean:quality=high", &g).find("rt_hdr_calb_cnrm_large") !=
        std::string::npos);
  CHECK(names("denoise:aux=prefilter", &g)
            .find("rt_hdr_calb_cnrm after rt_alb on the albedo, rt_nrm on the normals") !=
        std::string::npos);
  CHECK(names("denoise:hdr=0", &g).find("float input: OIDN network rt_ldr_alb_nrm") !=
        std::string::npos);
  CHECK_THROWS_AS(make_stage("denoise:albedo=off:normal=n.exr"), Error);
  CHECK_THROWS_AS(make_stage("denoise:tile=8"), Error);
}

TEST_CASE("denoise: prefiltered guides and LDR colour, device against the reference") {
  const int w = 45, h = 29;
  const Guides g = render_guides(w, h, 8);
  const Image hdr = test::random_image(w, h, 3, false, 12, 0.0f, 3.0f);
  const Image ldr = to_image(to_pixels(test::random_image(w, h, 3, false, 13), PixelType::u8));
  for (const std::string spec :
       {"denoise:precision=fp32:aux=prefilter", "denoise:precision=fp32:aux=clean"})
    check_close(device_result(*make_stage(spec), hdr, &g),
                reference_result(*make_stage(spec), hdr, &g), 1e-4, spec);
  for (const std::string spec : {"denoise:precision=fp32", "denoise:precision=fp32:srgb=0"}) {
    const auto stage = make_stage(spec);
    const Image ref = reference_result(*stage, ldr, &g);
    check_close(device_result(*stage, ldr, &g), ref, 1e-4, spec + " LDR");
    for (float v : ref.data()) CHECK(v <= 1.0f);  // LDR results stay in [0, 1]
  }
}

TEST_CASE("denoise: autoexposure is 0.18 over the log-mean of bin luminances") {
  // A constant grey image of value v: every bin's luminance is v, so the exposure is 0.18 / v,
  // and exposure=auto gives exposure=0.18/v's result.
  const float v = 3.0f;
  Image in(40, 24, 3);
  for (float& s : in.data()) s = v;
  const Image a = reference_result(*make_stage("denoise:albedo=off"), in, nullptr);
  const Image b = reference_result(*make_stage("denoise:albedo=off:exposure=0.06"), in, nullptr);
  check_close(a, b, 1e-6, "auto against 0.18/3");
}
