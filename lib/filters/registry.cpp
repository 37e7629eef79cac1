// The explicit list of filters: adding one is one line here plus its own source, kernel and test.
#include "filters/registry.hpp"

#include "core/error.hpp"

namespace halo {

FilterDef conv_filter();
FilterDef emboss_filter();
FilterDef sharpen_filter();
FilterDef edge_filter();
FilterDef box_filter();
FilterDef gaussian_filter();
FilterDef sep_filter();
FilterDef histogram_filter();
FilterDef bilateral_filter();
FilterDef atrous_filter();
FilterDef denoise_filter();
FilterDef unsharp_filter();
FilterDef linear_filter();
FilterDef srgb_filter();
FilterDef premultiply_filter();
FilterDef unpremultiply_filter();
FilterDef exposure_filter();
FilterDef mul_filter();
FilterDef add_filter();
FilterDef clamp_filter();
FilterDef fixnan_filter();
FilterDef tonemap_filter();
FilterDef median_filter();
FilterDef dilate_filter();
FilterDef erode_filter();
FilterDef flop_filter();
FilterDef flip_filter();
FilterDef rotate_filter();
FilterDef crop_filter();
FilterDef pad_filter();
FilterDef resize_filter();
FilterDef thumbnail_filter();
FilterDef ocio_filter();
FilterDef display_filter();
FilterDef icc_filter();
FilterDef orient_filter();
FilterDef flatten_filter();

const std::vector<FilterDef>& filter_registry() {
  static const std::vector<FilterDef> filters = {
      conv_filter(),      emboss_filter(),  sharpen_filter(),     unsharp_filter(),
      edge_filter(),      box_filter(),     gaussian_filter(),    sep_filter(),
      bilateral_filter(), atrous_filter(),  denoise_filter(),     histogram_filter(),
      linear_filter(),    srgb_filter(),    premultiply_filter(), unpremultiply_filter(),
      exposure_filter(),  mul_filter(),     add_filter(),         clamp_filter(),
      fixnan_filter(),    tonemap_filter(), median_filter(),      dilate_filter(),
      erode_filter(),     flop_filter(),    flip_filter(),        rotate_filter(),
      crop_filter(),      pad_filter(),     resize_filter(),      thumbnail_filter(),
      ocio_filter(),      display_filter(), icc_filter(),         orient_filter(),
      flatten_filter(),
  };
  return filters;
}

const FilterDef* find_filter(const std::string& name) {
  for (const auto& f : filter_registry())
    if (f.name == name) return &f;
  return nullptr;
}

std::unique_ptr<Stage> make_stage(const std::string& text) {
  const Spec spec = parse_spec(text);
  const FilterDef* def = find_filter(spec.name);
  if (!def) {
    std::string known;
    for (const auto& f : filter_registry()) known += (known.empty() ? "" : ", ") + f.name;
    throw Error(ErrorKind::Usage, "filter '" + spec.text + "': unknown filter '" + spec.name +
                                      "' (have " + known + "; see halo filters)");
  }
  return def->make(Args(spec, def->params));
}

namespace implied {

std::string premultiply(bool associated) {
  return associated ? "premultiply:associated=1" : "premultiply";
}
std::string unpremultiply(bool associated) {
  return associated ? "unpremultiply:associated=1" : "unpremultiply";
}
std::string decode_curve() {
  return "linear:curve=auto";
}
std::string encode_curve() {
  return "srgb:curve=auto";
}
std::string upright() {
  return "orient";
}
std::string flatten(const std::string& background) {
  return "flatten:background=" + background;
}

}  // namespace implied

}  // namespace halo
