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

}  // namespace halo
