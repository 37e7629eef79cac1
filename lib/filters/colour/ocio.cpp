// OpenColorIO stages: `ocio` converts between two colour spaces of a config, `display` turns
// scene values into a display's through one of its views (a render to a viewable image). The
// config is config=FILE, else $OCIO, else halo's built-in one (presets/ocio/config.ocio, built
// into the program). OpenColorIO's CPU processor is the reference; devices run it baked
// (filters/colour/color_lut.hpp).
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>

#include <OpenColorIO/OpenColorIO.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/paths.hpp"
#include "core/settings.hpp"
#include "core/text.hpp"
#include "filters/colour/color_lut.hpp"

namespace OCIO = OCIO_NAMESPACE;

namespace halo {

extern const char* const kBuiltinOcioConfig;  // generated from presets/ocio/config.ocio

namespace {

constexpr const char* kBuiltinName = "halo's built-in config";

struct LoadedConfig {
  OCIO::ConstConfigRcPtr config;
  std::string where;  // the file, or kBuiltinName
};

// A config is read as halo's other side files are (core/paths.hpp), and the LUT files it names
// are checked the same way before OpenColorIO opens them by name: a FIFO hung the run,
// /dev/zero was read for 4 GB.
constexpr std::size_t kMaxConfigBytes = std::size_t(16) << 20;
constexpr std::size_t kMaxLutBytes = std::size_t(512) << 20;

// The colour spaces a config's transform refers to (ColorSpaceTransform and the like name
// them), into `spaces`; the LUT files it names are checked where OpenColorIO will look for them.
void references_of(const OCIO::Config& config, const OCIO::ConstTransformRcPtr& t,
                   std::set<std::string>& spaces, const std::string& where) {
  if (!t) return;
  if (auto group = OCIO::DynamicPtrCast<const OCIO::GroupTransform>(t)) {
    for (int i = 0; i < group->getNumTransforms(); ++i)
      references_of(config, group->getTransform(i), spaces, where);
  } else if (auto file = OCIO::DynamicPtrCast<const OCIO::FileTransform>(t)) {
    std::string path;
    try {
      path = config.getCurrentContext()->resolveFileLocation(file->getSrc());
    } catch (const OCIO::Exception&) {
      return;  // not found: OpenColorIO says so itself when a transform needs it
    }
    check_small_file(path, kMaxLutBytes, "LUT file of " + where);
  } else if (auto space = OCIO::DynamicPtrCast<const OCIO::ColorSpaceTransform>(t)) {
    spaces.insert(space->getSrc());
    spaces.insert(space->getDst());
  } else if (auto look = OCIO::DynamicPtrCast<const OCIO::LookTransform>(t)) {
    spaces.insert(look->getSrc());
    spaces.insert(look->getDst());
  } else if (auto view = OCIO::DynamicPtrCast<const OCIO::DisplayViewTransform>(t)) {
    spaces.insert(view->getSrc());
  }
}

// The colour space a name, alias or role stands for ("" when none).
std::string canonical_space(const OCIO::Config& config, const std::string& name) {
  const auto space = config.getColorSpace(name.c_str());
  return space ? space->getName() : "";
}

// Checks every LUT file the config names, and that no colour space reaches itself through
// the spaces its transforms name: OpenColorIO recursed until the stack overflowed (SIGSEGV)
// on such a config; oiiotool and ociocheck crash on it too.
void check_config(const OCIO::Config& config, const std::string& spec, const std::string& where) {
  std::map<std::string, std::set<std::string>> edges;
  const auto collect = [&](const std::string& from, const OCIO::ConstTransformRcPtr& t) {
    std::set<std::string> spaces;
    references_of(config, t, spaces, where);
    for (const auto& name : spaces)
      if (const std::string to = canonical_space(config, name); !to.empty() && !from.empty())
        edges[from].insert(to);
  };
  for (int i = 0;
       i < config.getNumColorSpaces(OCIO::SEARCH_REFERENCE_SPACE_ALL, OCIO::COLORSPACE_ALL); ++i) {
    const char* name =
        config.getColorSpaceNameByIndex(OCIO::SEARCH_REFERENCE_SPACE_ALL, OCIO::COLORSPACE_ALL, i);
    const auto space = config.getColorSpace(name);
    for (const auto dir : {OCIO::COLORSPACE_DIR_TO_REFERENCE, OCIO::COLORSPACE_DIR_FROM_REFERENCE})
      collect(space->getName(), space->getTransform(dir));
  }
  for (int i = 0; i < config.getNumLooks(); ++i) {
    const auto look = config.getLook(config.getLookNameByIndex(i));
    collect(canonical_space(config, look->getProcessSpace()), look->getTransform());
    collect(canonical_space(config, look->getProcessSpace()), look->getInverseTransform());
  }
  for (int i = 0; i < config.getNumViewTransforms(); ++i) {
    const auto view = config.getViewTransform(config.getViewTransformNameByIndex(i));
    for (const auto dir :
         {OCIO::VIEWTRANSFORM_DIR_TO_REFERENCE, OCIO::VIEWTRANSFORM_DIR_FROM_REFERENCE})
      collect("", view->getTransform(dir));
  }
  for (int i = 0; i < config.getNumNamedTransforms(); ++i) {
    const auto named = config.getNamedTransform(config.getNamedTransformNameByIndex(i));
    for (const auto dir : {OCIO::TRANSFORM_DIR_FORWARD, OCIO::TRANSFORM_DIR_INVERSE})
      collect("", named->getTransform(dir));
  }
  // Depth-first over the references: a space met again while still open is a cycle, and a
  // space whose chain of references is longer than kMostChained is refused too: OpenColorIO
  // follows each reference by recursion (a 9000-space chain overflowed its stack after 8 s);
  // real configs chain a few.
  constexpr std::size_t kMostChained = 64;
  std::map<std::string, int> state;          // 1 open, 2 done
  std::map<std::string, std::size_t> chain;  // done: the longest chain from the space
  std::vector<std::string> path;
  std::function<void(const std::string&)> visit = [&](const std::string& space) {
    state[space] = 1;
    path.push_back(space);
    std::size_t longest = 0;
    for (const auto& next : edges[space]) {
      if (state[next] == 1) {
        std::string cycle;
        for (auto it = std::find(path.begin(), path.end(), next); it != path.end(); ++it)
          cycle += *it + " -> ";
        throw Error(ErrorKind::Usage, fmt::format("filter '{}': OpenColorIO config {}: colour "
                                                  "spaces refer to each other in a cycle ({}{})",
                                                  spec, where, cycle, next));
      }
      if (state[next] == 0) visit(next);
      longest = std::max(longest, chain[next] + 1);
    }
    if (longest > kMostChained)
      throw Error(ErrorKind::Usage,
                  fmt::format("filter '{}': OpenColorIO config {}: colour space {} refers to "
                              "others through a chain of {} references, more than the {} "
                              "halo follows",
                              spec, where, space, longest, kMostChained));
    chain[space] = longest;
    path.pop_back();
    state[space] = 2;
  };
  for (const auto& [space, _] : edges)
    if (state[space] == 0) visit(space);
}

// Configs by file, loaded once a process ("" is the built-in one).
LoadedConfig load_config(const std::string& spec, const std::string& file) {
  static std::mutex mutex;
  static std::map<std::string, OCIO::ConstConfigRcPtr> loaded;
  std::lock_guard lock(mutex);
  const std::string where = file.empty() ? kBuiltinName : file;
  if (const auto it = loaded.find(file); it != loaded.end()) return {it->second, where};
  try {
    OCIO::ConstConfigRcPtr config;
    if (file.empty()) {
      std::istringstream text(kBuiltinOcioConfig);
      config = OCIO::Config::CreateFromStream(text);
    } else {
      std::string bytes;
      try {
        bytes = read_small_file(file, kMaxConfigBytes, "OpenColorIO config");
      } catch (const Error& e) {
        throw Error(e.kind(), fmt::format("filter '{}': {}", spec, e.what()));
      }
      std::istringstream text(bytes);
      auto editable = OCIO::Config::CreateFromStream(text)->createEditableCopy();
      // Its LUT files are found from its own folder, as CreateFromFile would.
      editable->setWorkingDir(std::filesystem::absolute(file).parent_path().c_str());
      check_config(*editable, spec, where);
      config = editable;
    }
    loaded.emplace(file, config);
    return {config, where};
  } catch (const OCIO::Exception& e) {
    throw Error(ErrorKind::Usage,
                fmt::format("filter '{}': OpenColorIO config {}: {}", spec, where, e.what()));
  }
}

LoadedConfig config_of(const Args& args) {
  const std::string& given = args.text("config");
  if (given == "builtin") return load_config(args.spec_text(), "");
  return load_config(args.spec_text(), given == "auto" ? settings().ocio_config : given);
}

std::vector<std::string> colour_spaces(const OCIO::Config& config) {
  std::vector<std::string> names;
  for (int i = 0; i < config.getNumColorSpaces(); ++i)
    names.emplace_back(config.getColorSpaceNameByIndex(i));
  return names;
}

// The colour space a name, alias or role stands for; a Usage error naming what there is.
OCIO::ConstColorSpaceRcPtr colour_space(const Args& args, const LoadedConfig& c,
                                        const std::string& key) {
  const std::string& name = args.text(key);
  if (auto space = c.config->getColorSpace(name.c_str())) return space;
  args.fail(key, fmt::format("no colour space '{}' in {} (have {})", name, c.where,
                             fmt::join(colour_spaces(*c.config), ", ")));
}

// Whether the space holds light linearly (a render's, ACEScg): its values to scene_linear are
// proportional. Such inputs want a table spaced by stops; display-referred ones ([0, 1]) evenly.
bool linear_light(const OCIO::Config& config, const OCIO::ColorSpace& space) {
  if (space.isData() || space.getReferenceSpaceType() == OCIO::REFERENCE_SPACE_DISPLAY)
    return false;
  if (!config.hasRole(OCIO::ROLE_SCENE_LINEAR)) return false;
  auto cpu =
      config.getProcessor(space.getName(), OCIO::ROLE_SCENE_LINEAR)->getDefaultCPUProcessor();
  float grey[4][3] = {{0.25f, 0.25f, 0.25f}, {0.5f, 0.5f, 0.5f}, {1, 1, 1}, {4, 4, 4}};
  for (auto& p : grey) cpu->applyRGB(p);
  const float one = grey[2][1];
  if (!(one > 0.0f)) return false;
  const auto near = [](float a, float b) { return std::fabs(a - b) <= 1e-3f * std::fabs(b); };
  return near(grey[0][1], 0.25f * one) && near(grey[1][1], 0.5f * one) &&
         near(grey[3][1], 4.0f * one);
}

// Matrix steps composed in double into one affine map (rows of r, g, b, offset).
std::array<double, 12> composed(const std::vector<OCIO::ConstMatrixTransformRcPtr>& steps) {
  double m[3][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
  for (const auto& step : steps) {
    double s[16], offset[4];
    step->getMatrix(s);
    step->getOffset(offset);
    double next[3][4];
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 4; ++c) {
        double v = 0;
        for (int k = 0; k < 3; ++k) v += s[r * 4 + k] * m[k][c];
        next[r][c] = v;
      }
      next[r][3] += offset[r];
    }
    std::copy(&next[0][0], &next[0][0] + 12, &m[0][0]);
  }
  std::array<double, 12> flat;
  std::copy(&m[0][0], &m[0][0] + 12, flat.begin());
  return flat;
}

// A forward matrix step, or null.
OCIO::ConstMatrixTransformRcPtr matrix_step(const OCIO::ConstTransformRcPtr& step) {
  auto m = OCIO::DynamicPtrCast<const OCIO::MatrixTransform>(step);
  return m && m->getDirection() == OCIO::TRANSFORM_DIR_FORWARD ? m : nullptr;
}

ColorTransform cpu_transform(OCIO::ConstCPUProcessorRcPtr cpu) {
  return [cpu](float* rgb, std::size_t pixels) {
    OCIO::PackedImageDesc image(rgb, long(pixels), 1, 3);
    cpu->apply(image);
  };
}

// The steps of a group as one transform of the config.
ColorTransform steps_transform(const OCIO::Config& config,
                               const std::vector<OCIO::ConstTransformRcPtr>& steps) {
  auto group = OCIO::GroupTransform::Create();
  for (const auto& step : steps) group->appendTransform(step->createEditableCopy());
  return cpu_transform(config.getProcessor(group)->getDefaultCPUProcessor());
}

// How the processor's optimised steps run on a device without a cube: all matrices (one
// matrix), or per-channel steps, matrices, per-channel steps (a split). A device computes a
// matrix as OpenColorIO does, in float, so conversions between linear spaces are exact.
struct Steps {
  std::optional<std::array<double, 12>> matrix;
  std::optional<SplitTransform> split;
};

Steps device_steps(const OCIO::Config& config, const OCIO::Processor& processor,
                   const Shaper& inputs) {
  auto group = processor.getOptimizedProcessor(OCIO::OPTIMIZATION_DEFAULT)->createGroupTransform();
  const int n = group->getNumTransforms();
  const auto per_channel = [&](int i) {
    return !config.getProcessor(group->getTransform(i))->hasChannelCrosstalk();
  };
  std::vector<OCIO::ConstTransformRcPtr> before, after;
  std::vector<OCIO::ConstMatrixTransformRcPtr> matrices;
  int i = 0;
  for (; i < n && !matrix_step(group->getTransform(i)) && per_channel(i); ++i)
    before.push_back(group->getTransform(i));
  for (; i < n && matrix_step(group->getTransform(i)); ++i)
    matrices.push_back(matrix_step(group->getTransform(i)));
  for (; i < n && !matrix_step(group->getTransform(i)) && per_channel(i); ++i)
    after.push_back(group->getTransform(i));
  if (i != n) return {};
  if (before.empty() && after.empty()) return {.matrix = composed(matrices)};
  if (matrices.empty()) return {};  // curves alone: the bake finds them
  return {.split = SplitTransform{.before = steps_transform(config, before),
                                  .after = steps_transform(config, after),
                                  .matrix = composed(matrices),
                                  .before_shaper = inputs}};
}

// The arguments of the call to `function` that starts at `at` (just past its '('): where each
// top-level argument begins and ends, and where the call's ')' is.
struct Call {
  std::vector<std::pair<std::size_t, std::size_t>> arguments;
  std::size_t close = std::string::npos;
};

Call call_at(const std::string& code, std::size_t at) {
  Call call;
  int depth = 0;
  std::size_t start = at;
  for (std::size_t i = at; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '(') ++depth;
    if (c == ')' && depth-- == 0) {
      call.arguments.emplace_back(start, i);
      call.close = i;
      return call;
    }
    if (c == ',' && depth == 0) call.arguments.emplace_back(start, i), start = i + 1;
  }
  return call;
}

std::string trimmed(const std::string& code, std::pair<std::size_t, std::size_t> span) {
  const std::size_t first = code.find_first_not_of(" \n\t", span.first);
  const std::size_t last = code.find_last_not_of(" \n\t", span.second - 1);
  return first > last ? "" : code.substr(first, last - first + 1);
}

// Every call to atan2(a, b) as atan2(b, a).
std::string swap_atan2(const std::string& code) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t at; (at = code.find("atan2(", from)) != std::string::npos;) {
    const Call call = call_at(code, at + 6);
    if (call.arguments.size() != 2) break;
    out.append(code, from, at + 6 - from)
        .append(trimmed(code, call.arguments[1]))
        .append(", ")
        .append(trimmed(code, call.arguments[0]))
        .push_back(')');
    from = call.close + 1;
  }
  return out.append(code, from);
}

// OpenColorIO 2.1 writes GLSL's atan(y, x) as HLSL's atan2(x, y), which takes (y, x) like C:
// its HLSL is then wrong where it turns hue (ACES's red modifier). Whether this version does is
// seen by writing that step in both languages.
bool hlsl_atan2_reversed() {
  static const bool reversed = [] {
    auto config = OCIO::Config::CreateRaw();
    auto red_mod = OCIO::FixedFunctionTransform::Create(OCIO::FIXED_FUNCTION_ACES_RED_MOD_10);
    auto gpu = config->getProcessor(red_mod)->getDefaultGPUProcessor();
    const auto first_argument = [&](OCIO::GpuLanguage language, const std::string& function) {
      auto shader = OCIO::GpuShaderDesc::CreateShaderDesc();
      shader->setLanguage(language);
      gpu->extractGpuShaderInfo(shader);
      const std::string text = shader->getShaderText();
      const std::size_t at = text.find(function + "(");
      if (at == std::string::npos) return std::string();
      const Call call = call_at(text, at + function.size() + 1);
      return call.arguments.empty() ? std::string() : trimmed(text, call.arguments[0]);
    };
    return first_argument(OCIO::GPU_LANGUAGE_GLSL_4_0, "atan") !=
           first_argument(OCIO::GPU_LANGUAGE_HLSL_DX11, "atan2");
  }();
  return reversed;
}

// HLSL as OpenColorIO writes it for a processor, as OpenCL C: constructors as casts, HLSL's
// colour swizzles as OpenCL's (.rgb.r is .x), vectors indexed by component, literals as floats
// (OpenCL's are double), program-scope constants in __constant, `in` parameters plain.
// kernels/color_program.cl defines what stays (halo_make_float4x4 and halo_mul for HLSL's
// float4x4 and mul, lerp, saturate, frac).
std::string opencl_from_hlsl(std::string code) {
  const auto replace = [&](const std::string& pattern, const std::string& with) {
    code = std::regex_replace(code, std::regex(pattern), with);
  };
  replace(R"(\.rgb\.r\b)", ".x");
  replace(R"(\.rgb\.g\b)", ".y");
  replace(R"(\.rgb\.b\b)", ".z");
  // .rgba, .rgb, .r, ... after a name, ) or ]: the same letters as x, y, z, w.
  std::string swizzled;
  const std::regex swizzle(R"(([\w\)\]])\.([rgba]{1,4})\b)");
  auto last = code.cbegin();
  for (std::sregex_iterator it(code.begin(), code.end(), swizzle), end; it != end; ++it) {
    swizzled.append(last, (*it)[0].first).append((*it)[1].str()).push_back('.');
    for (const char c : (*it)[2].str())
      swizzled.push_back(c == 'r' ? 'x' : c == 'g' ? 'y' : c == 'b' ? 'z' : 'w');
    last = (*it)[0].second;
  }
  code = swizzled.append(last, code.cend());
  // v[k] on vectors declared in the code: v.sk.
  std::set<std::string> vectors;
  const std::regex declared(R"(\bfloat[234]\s+(\w+)\s*=)");
  for (std::sregex_iterator it(code.begin(), code.end(), declared), end; it != end; ++it)
    vectors.insert((*it)[1].str());
  for (const auto& v : vectors) replace("\\b" + v + R"(\[([0-3])\])", v + ".s$1");
  replace(R"((^|\n)(static )?const )", "$1__constant ");
  replace(R"(\bin\s+(int|float))", "$1");
  replace(R"(\babs\()", "fabs(");
  replace(R"(\bfloat4x4\()", "halo_make_float4x4(");  // a name OpenCL C reserves
  replace(R"(\bmul\()", "halo_mul(");
  replace(R"(\b(float[234])\()", "($1)(");
  replace(R"(\b(float|int)\()", "($1)(");
  replace(R"((^|[^\w.])((\d+\.\d*|\.\d+)([eE][+-]?\d+)?|\d+[eE][+-]?\d+)(?![\w.]))", "$1$2f");
  return code;
}

// Every `name.Sample(sampler, p)` of a texture as `with(p)`: the call's position argument
// kept as it is.
std::string replace_samples(const std::string& code, const std::string& name,
                            const std::string& with) {
  const std::string call = name + ".Sample(";
  std::string out;
  std::size_t from = 0;
  for (std::size_t at; (at = code.find(call, from)) != std::string::npos;) {
    const Call args = call_at(code, at + call.size());
    if (args.arguments.size() != 2) return "";
    out.append(code, from, at - from).append(with + "(").append(trimmed(code, args.arguments[1]));
    out.push_back(')');
    from = args.close + 1;
  }
  return out.append(code, from);
}

// OpenColorIO's own GPU code for the processor, as OpenCL C defining
// `float4 ocio_transform(float4, __global const float* halo_textures)`: analytic, as
// OpenColorIO computes it on GPUs, its LUT files' textures sampled from `textures` (one buffer,
// each texture's samples after the one before). Empty code when it needs what halo does not
// translate (uniforms: dynamic properties), and the device bakes a table instead.
DeviceProgram device_program(const OCIO::Processor& processor) {
  auto shader = OCIO::GpuShaderDesc::CreateShaderDesc();
  shader->setLanguage(OCIO::GPU_LANGUAGE_HLSL_DX11);
  shader->setFunctionName("ocio_transform");
  shader->setResourcePrefix("ocio_");
  shader->setTextureMaxWidth(1u << 24);  // 1D LUTs as one row
  processor.getDefaultGPUProcessor()->extractGpuShaderInfo(shader);
  if (shader->getNumUniforms() > 0) return {};
  std::string code = shader->getShaderText();
  if (hlsl_atan2_reversed()) code = swap_atan2(code);
  // The textures: their declarations go, their samples read the buffer through helpers.
  DeviceProgram program;
  std::string helpers;
  const auto sampled = [&](const char* name, const char* sampler, const std::string& with) {
    code =
        std::regex_replace(code, std::regex(std::string(R"(\bTexture[123]D\s+)") + name + ";"), "");
    code = std::regex_replace(code, std::regex(std::string(R"(\bSamplerState\s+)") + sampler + ";"),
                              "");
    code = replace_samples(code, name, with);
  };
  for (unsigned i = 0; i < shader->getNumTextures() && !code.empty(); ++i) {
    const char *name = nullptr, *sampler = nullptr;
    unsigned width = 0, height = 0;
    OCIO::GpuShaderDesc::TextureType channel;
    OCIO::Interpolation interpolation;
    shader->getTexture(i, name, sampler, width, height, channel, interpolation);
    const float* values = nullptr;
    shader->getTextureValues(i, values);
    const int channels = channel == OCIO::GpuShaderDesc::TEXTURE_RED_CHANNEL ? 1 : 3;
    const bool linear = interpolation != OCIO::INTERP_NEAREST;
    // A one-row texture is sampled with one coordinate.
    const std::string position = height == 1 ? "(float2)(p, 0.5f)" : "p";
    const std::string helper = fmt::format("halo_texture_{}", i);
    helpers +=
        fmt::format("#define {}(p) halo_sample2d(halo_textures + {}, {}, {}, {}, {}, {})\n", helper,
                    program.textures.size(), width, height, channels, int(linear), position);
    program.textures.insert(program.textures.end(), values,
                            values + std::size_t(width) * height * channels);
    sampled(name, sampler, helper);
  }
  for (unsigned i = 0; i < shader->getNum3DTextures() && !code.empty(); ++i) {
    const char *name = nullptr, *sampler = nullptr;
    unsigned edge = 0;
    OCIO::Interpolation interpolation;
    shader->get3DTexture(i, name, sampler, edge, interpolation);
    const float* values = nullptr;
    shader->get3DTextureValues(i, values);
    // Tetrahedral: the code reads the cell's corners at texel centres itself.
    const bool linear = interpolation == OCIO::INTERP_LINEAR;
    const std::string helper = fmt::format("halo_texture3d_{}", i);
    helpers += fmt::format("#define {}(p) halo_sample3d(halo_textures + {}, {}, {}, p)\n", helper,
                           program.textures.size(), edge, int(linear));
    program.textures.insert(program.textures.end(), values,
                            values + std::size_t(edge) * edge * edge * 3);
    sampled(name, sampler, helper);
  }
  if (code.empty()) return {};
  for (const char* unknown : {"Texture", "Sampler", "float3x3", "out ", "inout "})
    if (code.find(unknown) != std::string::npos) return {};
  code = std::regex_replace(
      code, std::regex(R"(\bfloat4\s+ocio_transform\s*\(\s*float4\s+(\w+)\s*\))"),
      "float4 ocio_transform(float4 $1, __global const float* halo_textures)");
  program.code = helpers + opencl_from_hlsl(code);
  return program;
}

// A cube of n entries a side for scene-linear inputs: a sixteenth of its cells for -1..0 (a
// resampled or denoised render's small negatives), one for 0..2^-12, the rest 2^-12..2^14 by
// stops; the cell edges fall on 0 and 2^-12.
Shaper cube_log_shaper(int n) {
  const int cells = n - 1, negative = std::max(1, cells / 16);
  return {.kind = Shaper::Kind::log,
          .lo = -12,
          .hi = 14,
          .toe = 1.0f / float(cells - negative),
          .neg = float(negative) / float(cells),
          .neg_hi = 0};
}

// Display-referred or encoded inputs (sRGB, ACEScct): 0..1 evenly.
constexpr Shaper kUnitShaper{.kind = Shaper::Kind::linear, .lo = 0, .hi = 1};

// The cube= parameter: 0 for auto.
int cube_of(const Args& args) {
  return args.is_auto("cube") ? 0 : args.integer("cube");
}

// cube_size: 0 for auto (65, or 129 where 65 leaves more than half an 8-bit code).
ColorTransformStage::Plan plan_for(const LoadedConfig& c, OCIO::ConstProcessorRcPtr processor,
                                   const OCIO::ColorSpace& source, int cube_size,
                                   std::string what) {
  // Scene-linear sources: curves by stops over both signs, the cube by stops; display-referred
  // or encoded ones (sRGB, ACEScct): 0..1 evenly.
  const bool linear = linear_light(*c.config, source);
  const auto shaper = [&](int n) { return linear ? cube_log_shaper(n) : kUnitShaper; };
  Steps steps = device_steps(*c.config, *processor, linear ? kSignedLogShaper : kUnitShaper);
  std::optional<std::pair<int, Shaper>> finer;
  if (cube_size == 0) cube_size = 65, finer.emplace(129, shaper(129));
  return {.bake = {.exact = cpu_transform(processor->getDefaultCPUProcessor()),
                   .shaper = shaper(cube_size),
                   .cube_size = cube_size,
                   .finer = finer,
                   .matrix = steps.matrix,
                   .split = std::move(steps.split)},
          .what = std::move(what) + " (" + c.where + ")",
          .key = fmt::format("ocio {} {} {}{}", c.where, processor->getCacheID(), cube_size,
                             finer ? " auto" : ""),
          // A matrix runs as one on the device, in OpenColorIO's own order: exact.
          .program = steps.matrix ? DeviceProgram() : device_program(*processor)};
}

std::unique_ptr<Stage> make_ocio(const Args& args) {
  const LoadedConfig c = config_of(args);
  auto from = colour_space(args, c, "from");
  auto to = colour_space(args, c, "to");
  try {
    auto processor = c.config->getProcessor(from, to);
    return std::make_unique<ColorTransformStage>(
        args.spec_text(),
        plan_for(c, processor, *from, cube_of(args),
                 fmt::format("OpenColorIO: {} -> {}", from->getName(), to->getName())));
  } catch (const OCIO::Exception& e) {
    throw Error(ErrorKind::Usage, fmt::format("filter '{}': {}", args.spec_text(), e.what()));
  }
}

void add_new(std::vector<std::string>& names, const char* name) {
  if (name && *name && std::find(names.begin(), names.end(), name) == names.end())
    names.emplace_back(name);
}

// The display's views: the active ones first (the config's active_views, which a viewer's menu
// shows), then every other view the config defines for it, which OpenColorIO processes as well
// (Blender's XYZ display's DCI).
std::vector<std::string> views(const OCIO::Config& config, const std::string& display) {
  std::vector<std::string> names;
  for (int i = 0; i < config.getNumViews(display.c_str()); ++i)
    add_new(names, config.getView(display.c_str(), i));
  for (const auto type : {OCIO::VIEW_DISPLAY_DEFINED, OCIO::VIEW_SHARED})
    for (int i = 0; i < config.getNumViews(type, display.c_str()); ++i)
      add_new(names, config.getView(type, display.c_str(), i));
  return names;
}

// The displays: the active ones first, then the others the config defines.
std::vector<std::string> displays(const OCIO::Config& config) {
  std::vector<std::string> names;
  for (int i = 0; i < config.getNumDisplays(); ++i) add_new(names, config.getDisplay(i));
  for (int i = 0; i < config.getNumDisplaysAll(); ++i) add_new(names, config.getDisplayAll(i));
  return names;
}

std::vector<std::string> looks(const OCIO::Config& config) {
  std::vector<std::string> names;
  for (int i = 0; i < config.getNumLooks(); ++i) add_new(names, config.getLookNameByIndex(i));
  return names;
}

// look=NAME[,NAME...]: the config's looks by name (ignoring case), in order, as OpenColorIO's
// look list ("" for none); a Usage error naming the config's looks.
std::string picked_looks(const Args& args, const OCIO::Config& config, const std::string& where) {
  const std::string& given = args.text("look");
  if (given.empty() || given == "none") return "";
  const std::vector<std::string> names = looks(config);
  std::string list;
  for (std::size_t start = 0; start <= given.size();) {
    const std::size_t end = std::min(given.find(',', start), given.size());
    const std::string one = given.substr(start, end - start);
    const auto found = std::find_if(names.begin(), names.end(),
                                    [&](const std::string& n) { return lower(n) == lower(one); });
    if (found == names.end())
      args.fail("look",
                fmt::format("no look '{}' in {} (have {})", one, where,
                            names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
    list += (list.empty() ? "" : ",") + *found;
    start = end + 1;
  }
  return list;
}

// A display or view by name, ignoring case; a Usage error naming the choices.
std::string pick(const Args& args, const std::string& key, const std::vector<std::string>& names,
                 const std::string& fallback, const std::string& where) {
  const std::string& given = args.text(key);
  if (given == "auto") return fallback;
  for (const auto& n : names)
    if (lower(n) == lower(given)) return n;
  args.fail(key, fmt::format("no {} '{}' {} (have {})", key, given, where, fmt::join(names, ", ")));
}

std::unique_ptr<Stage> make_display(const Args& args) {
  const LoadedConfig c = config_of(args);
  auto from = colour_space(args, c, "from");
  const OCIO::Config& config = *c.config;
  const std::string display =
      pick(args, "display", displays(config), config.getDefaultDisplay(), "in " + c.where);
  const std::string view =
      pick(args, "view", views(config, display), config.getDefaultView(display.c_str()),
           fmt::format("for display '{}' in {}", display, c.where));
  const std::string look = picked_looks(args, config, c.where);
  try {
    auto transform = OCIO::DisplayViewTransform::Create();
    transform->setSrc(from->getName());
    transform->setDisplay(display.c_str());
    transform->setView(view.c_str());
    // Looks through OpenColorIO's viewing pipeline, as Blender's Look menu applies them: each
    // in its process space, before the view.
    OCIO::ConstProcessorRcPtr processor;
    if (look.empty()) {
      processor = config.getProcessor(transform);
    } else {
      auto pipeline = OCIO::LegacyViewingPipeline::Create();
      pipeline->setDisplayViewTransform(transform);
      pipeline->setLooksOverrideEnabled(true);
      pipeline->setLooksOverride(look.c_str());
      processor = pipeline->getProcessor(c.config);
    }
    return std::make_unique<ColorTransformStage>(
        args.spec_text(),
        plan_for(c, processor, *from, cube_of(args),
                 fmt::format("OpenColorIO: {} to display '{}', view '{}'{}", from->getName(),
                             display, view, look.empty() ? "" : ", looks '" + look + "'")));
  } catch (const OCIO::Exception& e) {
    throw Error(ErrorKind::Usage, fmt::format("filter '{}': {}", args.spec_text(), e.what()));
  }
}

Param config_param() {
  return {.name = "config",
          .type = ParamType::Text,
          .fallback = "auto",
          .doc =
              "an OpenColorIO config file; auto: $OCIO, else halo's built-in config "
              "(builtin: that one always)"};
}

Param cube_param() {
  return {.name = "cube",
          .type = ParamType::Integer,
          .fallback = "auto",
          .doc =
              "entries a side of the table a device interpolates when channels mix and "
              "OpenColorIO has no GPU program for the transform (auto: 65, or 129 where 65 "
              "leave more than half an 8-bit code)",
          .min = 17,
          .max = 129,
          .allow_auto = true};
}

const std::vector<std::string> kColourNotes = {
    "the built-in config: Linear Rec.709 (sRGB) (alias linear, the scene_linear role), sRGB "
    "Encoded Rec.709 (srgb), ACES2065-1, ACEScg, ACEScct, Raw; display sRGB with the views "
    "'ACES 1.0 - SDR Video' (filmic, the default) and Standard",
    "names are a config's colour spaces, aliases or roles (scene_linear, ...); displays and "
    "views ignore case",
    "reference: OpenColorIO's CPU processor; device: OpenColorIO's own GPU program for the "
    "transform, LUT files as its textures (within float rounding of the CPU's: --verify holds "
    "it to 1e-4), or a 3x4 matrix when the transform is one (exact); a transform with dynamic "
    "properties runs as curves or a cube (cube=) baked from the CPU's results (-v shows which "
    "and its largest error; --verify holds it to 2e-3, half an 8-bit code)",
    "non-finite samples: +-Inf and magnitudes past 2^32 are clamped to +-2^32 (a baked table: "
    "to its range) before the transform, on the reference too; a pixel with a NaN sample "
    "comes out NaN in all three colours",
    "pointwise on the values as stored (an EXR's are premultiplied); RGB(A), or grey as R = G "
    "= B keeping the result's green"};

}  // namespace

std::string ocio_version() {
  return std::string("OpenColorIO ") + OCIO::GetVersion();
}

FilterDef ocio_filter() {
  return {.name = "ocio",
          .summary = "convert between colour spaces of an OpenColorIO config",
          .params = {{.name = "from",
                      .type = ParamType::Text,
                      .fallback = "",
                      .doc = "the image's colour space"},
                     {.name = "to",
                      .type = ParamType::Text,
                      .fallback = "",
                      .doc = "the colour space wanted"},
                     config_param(),
                     cube_param(),
                     border_param()},
          .notes = kColourNotes,
          .example = "ocio:from=ACEScg:to=linear",
          .make = make_ocio,
          .mixes_neighbours = false,
          .swept = false};  // RGB only, within the table's error: tests/engine/ocio_test.cpp
}

FilterDef display_filter() {
  return {.name = "display",
          .summary =
              "scene values to a display's through a view of an OpenColorIO config "
              "(a render to a viewable PNG or JPEG)",
          .params = {{.name = "view",
                      .type = ParamType::Text,
                      .fallback = "auto",
                      .doc = "the view (auto: the display's default); any view the config "
                             "defines for the display, active or not"},
                     {.name = "look",
                      .type = ParamType::Text,
                      .fallback = "none",
                      .doc = "looks of the config applied before the view, comma-separated, "
                             "as Blender's Look menu (its Filmic contrasts: "
                             "look=Medium High Contrast); none by default"},
                     {.name = "display",
                      .type = ParamType::Text,
                      .fallback = "auto",
                      .doc = "the display (auto: the config's default)"},
                     {.name = "from",
                      .type = ParamType::Text,
                      .fallback = "scene_linear",
                      .doc = "the image's colour space"},
                     config_param(),
                     cube_param(),
                     border_param()},
          .notes = kColourNotes,
          .example = "display:view=Standard",
          .make = make_display,
          .mixes_neighbours = false,
          .swept = false};
}

}  // namespace halo
