// Guide lookup by channel name and loading through read_image.
#include "io/guides.hpp"

#include <algorithm>
#include <cctype>

#include "core/error.hpp"

namespace halo {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

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

Image read_guide(const std::string& what, const std::string& source, const std::string& input_path,
                 const std::vector<std::string>& found, std::string& described) {
  if (source == "off") return {};
  InputRef ref;
  if (source == "auto") {
    if (found.empty()) return {};
    ref = {input_path, found};
  } else {
    ref = parse_input_ref(source);
  }
  LoadedImage loaded;
  try {
    loaded = read_image(ref);
  } catch (const Error& e) {
    throw Error(e.kind(), what + " guide: " + e.what());
  }
  std::string channels;
  for (const auto& c : loaded.channel_names) channels += (channels.empty() ? "" : ",") + c;
  described += (described.empty() ? "" : "; ") + what + " from " + ref.path + "[" + channels + "]";
  Image image = to_image(loaded.pixels);
  if (loaded.pixels.alpha) {  // a channel list never means alpha here
    Image plain(image.width(), image.height(), image.channels());
    plain.data() = image.data();
    return plain;
  }
  return image;
}

}  // namespace

GuideChannels find_guide_channels(const std::vector<std::string>& names) {
  GuideChannels g;
  g.normal = triple(names, {"normal.x", "n.x"}, "xyz");
  g.depth = single(names, {"depth.z", "z", "depth"});
  g.albedo = triple(names, {"diffcol.r", "albedo.r"}, "rgb");
  return g;
}

Guides load_guides(const GuideSources& sources, const std::string& input_path,
                   const LoadedImage& input) {
  const GuideChannels found = find_guide_channels(input.file_channels);
  std::string described;
  Image normal = read_guide("normal", sources.normal, input_path, found.normal, described);
  Image depth = read_guide("depth", sources.depth, input_path, found.depth, described);
  Image albedo = read_guide("albedo", sources.albedo, input_path, found.albedo, described);
  try {
    return prepare_guides(std::move(normal), std::move(depth), std::move(albedo),
                          input.pixels.width, input.pixels.height, described);
  } catch (const Error& e) {
    throw Error(e.kind(), input_path + ": " + e.what());
  }
}

}  // namespace halo
