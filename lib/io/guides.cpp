// Guide lookup by channel name.
#include "io/guides.hpp"
#include "core/text.hpp"

#include <algorithm>
#include <cctype>

#include "core/error.hpp"

namespace halo {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A lower-case name matches a pattern when equal to it or, for patterns with a dot
// ("depth.z"), when it ends in "." + pattern (a layer prefix): a bare "z" must not take
// "Normal.Z".
bool matches(const std::string& name, const std::string& pattern) {
  return name == pattern ||
         (pattern.find('.') != std::string::npos && ends_with(name, "." + pattern));
}

// The channel whose lower-case name is `want`, or "".
std::string named(const std::vector<std::string>& names, const std::string& want) {
  for (const auto& n : names)
    if (lower(n) == want) return n;
  return "";
}

// A triple stem+{a,b,c} where the first matches one of the patterns (a whole name or a tail
// after a layer prefix).
std::vector<std::string> triple(const std::vector<std::string>& names,
                                const std::vector<std::string>& tails, const std::string& abc) {
  for (const auto& n : names) {
    const std::string l = lower(n);
    for (const auto& tail : tails) {
      if (!matches(l, tail)) continue;
      const std::string stem = l.substr(0, l.size() - 1);
      std::vector<std::string> found = {n};
      for (char c : abc.substr(1)) {
        const std::string other = named(names, stem + c);
        if (other.empty()) break;
        found.push_back(other);
      }
      if (found.size() == 3) return found;
    }
  }
  return {};
}

std::vector<std::string> single(const std::vector<std::string>& names,
                                const std::vector<std::string>& tails) {
  for (const auto& n : names) {
    const std::string l = lower(n);
    for (const auto& tail : tails)
      if (matches(l, tail)) return {n};
  }
  return {};
}

}  // namespace

GuideChannels find_guide_channels(const std::vector<std::string>& names) {
  GuideChannels g;
  g.normal = triple(names, {"normal.x", "n.x"}, "xyz");
  g.depth = single(names, {"depth.z", "z", "depth"});
  g.albedo = triple(names, {"diffcol.r", "albedo.r"}, "rgb");
  return g;
}

std::vector<std::string> find_motion_channels(const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (matches(lower(n), "vector.x")) {
      const std::string stem = lower(n).substr(0, n.size() - 1);
      const std::string y = named(names, stem + "y");
      if (y.empty()) continue;
      const std::string z = named(names, stem + "z"), w = named(names, stem + "w");
      if (z.empty() || w.empty()) return {n, y};
      return {n, y, z, w};
    }
  return {};
}

}  // namespace halo
