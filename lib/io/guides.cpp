// Guide lookup by channel name and loading through read_image.
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

// Planes [first, first + count) of `all` as an image of their own (never alpha).
Image planes_of(const Image& all, int first, int count) {
  Image out(all.width(), all.height(), count);
  const auto from = all.data().begin() + std::ptrdiff_t(first) * all.plane_size();
  std::copy(from, from + std::ptrdiff_t(count) * all.plane_size(), out.data().begin());
  return out;
}

LoadedImage read_guide_file(const std::string& what, const InputRef& ref) {
  try {
    return read_image(ref);
  } catch (const Error& e) {
    throw Error(e.kind(), what + " guide: " + e.what());
  }
}

std::string describe(const std::string& what, const std::string& path,
                     const std::vector<std::string>& channels) {
  std::string list;
  for (const auto& c : channels) list += (list.empty() ? "" : ",") + c;
  return what + " from " + path + "[" + list + "]";
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
  struct Wanted {
    const char* what;
    const std::string& source;
    const std::vector<std::string>& found;
    Image image;
  };
  Wanted wanted[] = {{"normal", sources.normal, found.normal, {}},
                     {"depth", sources.depth, found.depth, {}},
                     {"albedo", sources.albedo, found.albedo, {}}};
  // Guides in the input's own layers come from one more read of it, all channels at once.
  InputRef layers{input_path, {}};
  for (const auto& w : wanted)
    if (w.source == "auto")
      layers.channels.insert(layers.channels.end(), w.found.begin(), w.found.end());
  const Image from_input =
      layers.channels.empty() ? Image() : to_image(read_guide_file("input", layers).pixels);
  std::string described;
  int next_plane = 0;
  for (auto& w : wanted) {
    if (w.source == "off" || (w.source == "auto" && w.found.empty())) continue;
    if (w.source == "auto") {
      w.image = planes_of(from_input, next_plane, int(w.found.size()));
      next_plane += int(w.found.size());
      described += (described.empty() ? "" : "; ") + describe(w.what, input_path, w.found);
      continue;
    }
    const InputRef ref = parse_input_ref(w.source);
    const LoadedImage loaded = read_guide_file(w.what, ref);
    const Image image = to_image(loaded.pixels);
    w.image = planes_of(image, 0, image.channels());
    described += (described.empty() ? "" : "; ") + describe(w.what, ref.path, loaded.channel_names);
  }
  try {
    return prepare_guides(std::move(wanted[0].image), std::move(wanted[1].image),
                          std::move(wanted[2].image), input.pixels.width, input.pixels.height,
                          described);
  } catch (const Error& e) {
    throw Error(e.kind(), input_path + ": " + e.what());
  }
}

}  // namespace halo
