// Pairing for `halo compare` (compare/pairs.hpp).
#include "compare/pairs.hpp"

#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "batch/inputs.hpp"
#include "io/image_io.hpp"
#include "io/standard_streams.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

// Relative image paths under a folder, sorted.
std::map<std::string, std::string> images_under(const std::string& folder, bool recursive) {
  std::map<std::string, std::string> found;
  for (const auto& file : expand_inputs({folder}, {.recursive = recursive}).files)
    found.emplace(fs::path(file.path).lexically_relative(folder).string(), file.path);
  return found;
}

// --diff-out never replaces what is compared: the same file or folder however named (./a.png,
// a link to it), by device and inode.
void refuse_diff_over_input(const std::string& diff_out,
                            std::initializer_list<std::string> inputs) {
  if (diff_out.empty()) return;
  for (const std::string& input : inputs) {
    if (!is_standard_input(input) && same_file(diff_out, input))
      throw Error(ErrorKind::CantCreate,
                  "--diff-out " + diff_out + ": refusing to overwrite the input " + input);
  }
}

// "diff.exr" for frame 0004: "diff.0004.exr".
std::string frame_file(const std::string& path, const std::string& digits) {
  if (path.empty()) return path;
  const fs::path p(path);
  return (p.parent_path() / (p.stem().string() + "." + digits + p.extension().string())).string();
}

// Two frame sequences (shot.####.exr): the frames of a (on disk, or --frames), each paired
// with b's frame of the same number; a frame b lacks is a pair with a missing file.
std::vector<Pair> sequence_pairs(const PairingOptions& o) {
  const InputList in_a = expand_inputs({o.a}, {.frames = o.frames});
  std::string asked;
  for (const InputFile& f : in_a.files) asked += (asked.empty() ? "" : ",") + f.frame;
  const InputList in_b = expand_inputs({o.b}, {.frames = asked});
  std::vector<Pair> pairs;
  for (std::size_t i = 0; i < in_a.files.size() && i < in_b.files.size(); ++i) {
    const std::string& digits = in_a.files[i].frame;
    pairs.push_back({in_a.files[i].path, in_b.files[i].path, "", "", frame_file(o.diff_out, digits),
                     frame_file(o.exposure_map, digits)});
    pairs.back().frame = std::stol(digits);
  }
  return pairs;
}

}  // namespace

std::vector<Pair> pairs_of(const PairingOptions& o) {
  if (is_standard_input(o.a) && is_standard_input(o.b))
    throw Error(ErrorKind::Usage, "compare: only one of the two images can be standard input");
  std::error_code ec;
  const bool named_a = fs::exists(o.a, ec), named_b = fs::exists(o.b, ec);
  const bool sequence_a = !named_a && is_sequence_pattern(o.a);
  const bool sequence_b = !named_b && is_sequence_pattern(o.b);
  if (sequence_a != sequence_b)
    throw Error(ErrorKind::Usage, "compare: give two frame sequences (" + (sequence_a ? o.a : o.b) +
                                      " is one, " + (sequence_a ? o.b : o.a) + " is not)");
  if (sequence_a) return sequence_pairs(o);
  if (!o.frames.empty())
    throw Error(ErrorKind::Usage, "compare: --frames needs two frame sequences (shot.####.exr)");
  if (o.temporal)
    throw Error(ErrorKind::Usage,
                "compare: --metrics temporal needs two frame sequences (shot.####.exr)");
  const bool folder_a = fs::is_directory(o.a, ec), folder_b = fs::is_directory(o.b, ec);
  if (folder_a != folder_b)
    throw Error(ErrorKind::Usage, "compare: give two files or two folders (" + o.a + " is " +
                                      (folder_a ? "a folder" : "not a folder") + ", " + o.b +
                                      " is " + (folder_b ? "a folder" : "not a folder") + ")");
  refuse_diff_over_input(o.diff_out, {o.a, o.b});  // the file, or the folder
  refuse_diff_over_input(o.exposure_map, {o.a, o.b});
  if (!folder_a) return {{o.a, o.b, "", "", o.diff_out, o.exposure_map}};
  auto in_a = images_under(o.a, o.recursive), in_b = images_under(o.b, o.recursive);
  for (const auto& [rel, path] : in_b) in_a.emplace(rel, (fs::path(o.a) / rel).string());
  std::vector<Pair> pairs;
  for (const auto& [rel, path] : in_a) {
    const auto under = [&rel](const std::string& folder) {
      return folder.empty() ? "" : (fs::path(folder) / rel).string();
    };
    pairs.push_back(
        {path, (fs::path(o.b) / rel).string(), "", "", under(o.diff_out), under(o.exposure_map)});
    refuse_diff_over_input(pairs.back().diff_out, {pairs.back().a, pairs.back().b});
    refuse_diff_over_input(pairs.back().exposure_map, {pairs.back().a, pairs.back().b});
  }
  for (const std::string& folder : {o.diff_out, o.exposure_map})
    if (!folder.empty()) fs::create_directories(folder, ec);
  return pairs;
}

namespace {

// A file for one part of a pair's output: "diff.png" -> "diff-subimage1-mip2.png".
std::string part_file(const std::string& path, const ImagePart& part, bool subimages, bool mips) {
  if (path.empty()) return path;
  std::string suffix;
  if (subimages) suffix += "-subimage" + std::to_string(part.subimage);
  if (mips) suffix += "-mip" + std::to_string(part.miplevel);
  fs::path p(path);
  return (p.parent_path() / (p.stem().string() + suffix + p.extension().string())).string();
}

}  // namespace

std::vector<Pair> every_part(const std::vector<Pair>& pairs) {
  std::vector<Pair> parts;
  for (const Pair& pair : pairs) {
    std::vector<int> levels_a, levels_b;
    std::shared_ptr<const CheckedFile> file_a, file_b;
    try {
      file_a = opened_file(parse_input_ref(pair.read_a.empty() ? pair.a : pair.read_a));
      levels_a = mip_levels(file_a);
      file_b = opened_file(parse_input_ref(pair.read_b.empty() ? pair.b : pair.read_b));
      levels_b = mip_levels(file_b);
    } catch (const Error& e) {
      parts.push_back(pair);
      if (e.kind() != ErrorKind::NoInput) parts.back().refused = e;
      continue;
    }
    if (levels_a.size() != levels_b.size()) {
      Pair p = pair;
      p.refused = Error(ErrorKind::NotComparable,
                        fmt::format("not comparable: {} has {} subimages, {} has {}", pair.a,
                                    levels_a.size(), pair.b, levels_b.size()));
      parts.push_back(p);
      continue;
    }
    const bool subimages = levels_a.size() > 1;
    for (int s = 0; s < int(levels_a.size()); ++s) {
      const bool mips = levels_a[s] > 1 || levels_b[s] > 1;
      std::string label = subimages ? "subimage " + std::to_string(s) : "";
      if (levels_a[s] != levels_b[s]) {
        Pair p = pair;
        p.part = {.subimage = s};
        p.part_label = label.empty() ? "MIP levels" : label;
        p.refused = Error(ErrorKind::NotComparable,
                          fmt::format("not comparable: {} has {} MIP levels, {} has {}", pair.a,
                                      levels_a[s], pair.b, levels_b[s]));
        p.idiff_incomparable = 3;
        parts.push_back(p);
        continue;
      }
      for (int m = 0; m < levels_a[s]; ++m) {
        Pair p = pair;
        p.file_a = file_a, p.file_b = file_b;
        p.part = {.subimage = s, .miplevel = m};
        p.part_label = label;
        if (mips) p.part_label += (label.empty() ? "" : ", ") + fmt::format("MIP level {}", m);
        p.diff_out = part_file(pair.diff_out, p.part, subimages, mips);
        p.exposure_map = part_file(pair.exposure_map, p.part, subimages, mips);
        parts.push_back(p);
      }
    }
  }
  return parts;
}

}  // namespace halo
