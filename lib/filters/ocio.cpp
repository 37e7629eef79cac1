// OpenColorIO stages: `ocio` converts between two colour spaces of a config, `display` turns
// scene values into a display's through one of its views (a render to a viewable image). The
// config is config=FILE, else $OCIO, else halo's built-in one (presets/ocio/config.ocio, built
// into the program). OpenColorIO's CPU processor is the reference; devices run it baked
// (filters/color_lut.hpp).
#include <map>
#include <mutex>
#include <sstream>

#include <OpenColorIO/OpenColorIO.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/settings.hpp"
#include "core/text.hpp"
#include "filters/color_lut.hpp"

namespace OCIO = OCIO_NAMESPACE;

namespace halo {

extern const char* const kBuiltinOcioConfig;  // generated from presets/ocio/config.ocio

namespace {

constexpr const char* kBuiltinName = "halo's built-in config";

struct LoadedConfig {
  OCIO::ConstConfigRcPtr config;
  std::string where;  // the file, or kBuiltinName
};

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
      config = OCIO::Config::CreateFromFile(file.c_str());
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

ColorTransformStage::Plan plan_for(const LoadedConfig& c, OCIO::ConstProcessorRcPtr processor,
                                   const OCIO::ColorSpace& source, int cube_size,
                                   std::string what) {
  // Scene-linear sources: curves by stops over both signs, the cube by stops; display-referred
  // or encoded ones (sRGB, ACEScct): 0..1 evenly.
  const bool linear = linear_light(*c.config, source);
  Steps steps = device_steps(*c.config, *processor, linear ? kSignedLogShaper : kUnitShaper);
  return {.bake = {.exact = cpu_transform(processor->getDefaultCPUProcessor()),
                   .shaper = linear ? cube_log_shaper(cube_size) : kUnitShaper,
                   .cube_size = cube_size,
                   .matrix = steps.matrix,
                   .split = std::move(steps.split)},
          .what = std::move(what) + " (" + c.where + ")",
          .key = fmt::format("ocio {} {} {}", c.where, processor->getCacheID(), cube_size)};
}

std::unique_ptr<Stage> make_ocio(const Args& args) {
  const LoadedConfig c = config_of(args);
  auto from = colour_space(args, c, "from");
  auto to = colour_space(args, c, "to");
  try {
    auto processor = c.config->getProcessor(from, to);
    return std::make_unique<ColorTransformStage>(
        args.spec_text(),
        plan_for(c, processor, *from, args.integer("cube"),
                 fmt::format("OpenColorIO: {} -> {}", from->getName(), to->getName())));
  } catch (const OCIO::Exception& e) {
    throw Error(ErrorKind::Usage, fmt::format("filter '{}': {}", args.spec_text(), e.what()));
  }
}

std::vector<std::string> views(const OCIO::Config& config, const std::string& display) {
  std::vector<std::string> names;
  for (int i = 0; i < config.getNumViews(display.c_str()); ++i)
    names.emplace_back(config.getView(display.c_str(), i));
  return names;
}

std::vector<std::string> displays(const OCIO::Config& config) {
  std::vector<std::string> names;
  for (int i = 0; i < config.getNumDisplays(); ++i) names.emplace_back(config.getDisplay(i));
  return names;
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
  try {
    auto transform = OCIO::DisplayViewTransform::Create();
    transform->setSrc(from->getName());
    transform->setDisplay(display.c_str());
    transform->setView(view.c_str());
    auto processor = config.getProcessor(transform);
    return std::make_unique<ColorTransformStage>(
        args.spec_text(), plan_for(c, processor, *from, args.integer("cube"),
                                   fmt::format("OpenColorIO: {} to display '{}', view '{}'",
                                               from->getName(), display, view)));
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
          .fallback = "65",
          .doc = "entries a side of the table a device interpolates when channels mix",
          .min = 17,
          .max = 129};
}

const std::vector<std::string> kColourNotes = {
    "the built-in config: Linear Rec.709 (sRGB) (alias linear, the scene_linear role), sRGB "
    "Encoded Rec.709 (srgb), ACES2065-1, ACEScg, ACEScct, Raw; display sRGB with the views "
    "'ACES 1.0 - SDR Video' (filmic, the default) and Standard",
    "names are a config's colour spaces, aliases or roles (scene_linear, ...); displays and "
    "views ignore case",
    "reference: OpenColorIO's CPU processor; device: a 3x4 matrix when the transform is one, "
    "three 4097-entry curves when no channel feeds another, else a cube (cube=); -v shows "
    "which, with its largest error on 20,000 probes, and --verify allows twice that",
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
                      .doc = "the view (auto: the display's default)"},
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
