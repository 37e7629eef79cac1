// Every filter halo knows, and the step from a spec's text to a runnable stage.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "filters/filter.hpp"

namespace halo {

const std::vector<FilterDef>& filter_registry();
const FilterDef* find_filter(const std::string& name);
// Parses and validates a spec; Usage errors name the spec and the key.
std::unique_ptr<Stage> make_stage(const std::string& text);

// The specs of the stages halo run adds around the user's, asked for by what they do: colour
// times alpha before the filters that mix neighbours and divided back after them; the sRGB
// curve (or a PNG's gamma) decoded first and encoded last (--linear); the image put upright
// as its file says (--auto-orient); colour over a background, alpha dropped, for a format
// that stores none.
namespace implied {
// associated: the colour is premultiplied already (float files); alpha only joins the filters.
std::string premultiply(bool associated = false);
std::string unpremultiply(bool associated = false);
std::string decode_curve();
std::string encode_curve();
std::string upright();
std::string flatten(const std::string& background);
}  // namespace implied

}  // namespace halo
