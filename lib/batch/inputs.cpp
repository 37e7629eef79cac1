// Command-line arguments to the files of a batch.
#include "batch/inputs.hpp"
#include "core/text.hpp"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

// "render.exr[R,G,B]" -> path and "[R,G,B]"; only when the whole text is not itself a file.
std::pair<std::string, std::string> split_channels(const std::string& text) {
  std::error_code ec;
  if (text.size() > 2 && text.back() == ']' && !fs::exists(text, ec)) {
    const auto open = text.rfind('[');
    if (open != std::string::npos && open > 0) return {text.substr(0, open), text.substr(open)};
  }
  return {text, ""};
}

// The last run of digits in the file's stem: "shot_v2.0042.exr" -> "0042".
std::string frame_of(const fs::path& path) {
  const std::string stem = path.stem().string();
  std::size_t end = stem.size();
  while (end > 0 && !std::isdigit(static_cast<unsigned char>(stem[end - 1]))) --end;
  std::size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(stem[begin - 1]))) --begin;
  return stem.substr(begin, end - begin);
}

bool hidden(const fs::path& path) {
  const std::string name = path.filename().string();
  return !name.empty() && name[0] == '.';  // also the .halo-* temporaries of unfinished writes
}

std::vector<InputFile> list_folder(const std::string& folder, const std::string& channels,
                                   bool recursive) {
  std::vector<std::string> found;
  std::size_t subfolders = 0;
  std::error_code ec;
  const auto take = [&](const fs::directory_entry& entry) {
    if (entry.is_directory(ec)) {
      ++subfolders;
      return;
    }
    if (!hidden(entry.path()) && is_image_extension(lower(entry.path().extension().string())))
      found.push_back(entry.path().string());
  };
  if (recursive) {
    fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec),
        end;
    for (; !ec && it != end; it.increment(ec)) {
      if (it->is_directory(ec) && hidden(it->path())) it.disable_recursion_pending();
      take(*it);
    }
  } else {
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) take(*it);
  }
  if (ec) throw Error(ErrorKind::NoInput, folder + ": cannot list the folder: " + ec.message());
  if (found.empty())
    throw Error(ErrorKind::NoInput,
                folder + ": no images in the folder (png, exr, tif, jpg, pfm, ...)" +
                    (subfolders && !recursive ? "; it has subfolders: add --recursive" : ""));
  std::sort(found.begin(), found.end());
  std::vector<InputFile> files;
  for (const auto& path : found) files.push_back({path, channels, folder, frame_of(path)});
  return files;
}

// A frame-number placeholder in the file name: a run of '#' (one digit each, zero-padded) or
// printf's %d / %0Nd.
struct Sequence {
  std::string dir, prefix, suffix;
  int padding = 0;  // digits with leading zeros; 0: as many as the number needs

  std::string name(long frame) const {
    return prefix + fmt::format("{:0{}d}", frame, padding) + suffix;
  }
};

std::optional<Sequence> parse_sequence(const std::string& path) {
  const fs::path p(path);
  const std::string name = p.filename().string();
  static const std::regex placeholder(R"((#+)|%(0\d+)?d)");
  std::smatch m;
  if (!std::regex_search(name, m, placeholder)) return std::nullopt;
  Sequence s;
  s.dir = p.parent_path().string();
  s.prefix = m.prefix().str();
  s.suffix = m.suffix().str();
  s.padding = m[1].matched ? int(m[1].length()) : m[2].matched ? std::stoi(m[2].str()) : 0;
  return s;
}

// The frames of `s` on disk, by number, with their digits as written.
std::map<long, std::string> frames_on_disk(const Sequence& s, std::error_code& ec) {
  const fs::path dir = s.dir.empty() ? fs::path(".") : fs::path(s.dir);
  std::map<long, std::string> found;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= s.prefix.size() + s.suffix.size() || !name.starts_with(s.prefix) ||
        !name.ends_with(s.suffix))
      continue;
    const std::string digits =
        name.substr(s.prefix.size(), name.size() - s.prefix.size() - s.suffix.size());
    if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) continue;
    // shot.####.exr is shot.0042.exr and shot.12345.exr, not shot.042.exr.
    const bool padded = int(digits.size()) == s.padding;
    const bool wider = int(digits.size()) > s.padding && (digits[0] != '0' || digits.size() == 1);
    if (padded || wider) found.emplace(std::stol(digits), digits);
  }
  return found;
}

std::vector<InputFile> expand_sequence(const Sequence& s, const std::string& pattern,
                                       const std::string& channels, const std::string& frames) {
  const auto join = [&](const std::string& name) {
    return s.dir.empty() ? name : (fs::path(s.dir) / name).string();
  };
  std::error_code ec;
  const std::map<long, std::string> found = frames_on_disk(s, ec);
  std::vector<InputFile> files;
  if (!frames.empty()) {  // the frames asked for, missing ones included: the batch reports them
    const std::vector<long> asked = parse_frames(frames);
    // ... unless the range is a typo far larger than the sequence: refused at once, not
    // reported frame by frame (2 million missing frames took 17 s and 1.5 GB to list).
    constexpr std::size_t kMostMissing = 10'000;
    const std::size_t missing = std::size_t(std::count_if(
        asked.begin(), asked.end(), [&](long frame) { return !found.contains(frame); }));
    if (missing > kMostMissing)
      throw Error(ErrorKind::NoInput,
                  fmt::format("{}: --frames '{}' asks for {} frames, {} of which do not exist "
                              "(the sequence has {}{}); more than {} missing frames are refused",
                              pattern, frames, asked.size(), missing, found.size(),
                              found.empty() ? ""
                                            : fmt::format(", {}-{}", found.begin()->first,
                                                          found.rbegin()->first),
                              kMostMissing));
    for (long frame : asked)
      files.push_back(
          {join(s.name(frame)), channels, "", fmt::format("{:0{}d}", frame, s.padding)});
    return files;
  }
  if (found.empty())
    throw Error(ErrorKind::NoInput, pattern + ": no file of the sequence exists" +
                                        (ec ? " (" + ec.message() + ")" : ""));
  for (const auto& [frame, digits] : found)
    files.push_back({join(s.prefix + digits + s.suffix), channels, "", digits});
  return files;
}

std::vector<InputFile> expand_glob(const std::string& pattern, const std::string& channels) {
  glob_t matches{};
  const int status = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &matches);
  std::vector<InputFile> files;
  std::error_code ec;
  for (std::size_t i = 0; status == 0 && i < matches.gl_pathc; ++i)
    if (!fs::is_directory(matches.gl_pathv[i], ec))
      files.push_back({matches.gl_pathv[i], channels, "", frame_of(matches.gl_pathv[i])});
  ::globfree(&matches);
  if (files.empty()) throw Error(ErrorKind::NoInput, pattern + ": no file matches");
  return files;
}

bool has_glob_characters(const std::string& text) {
  return text.find_first_of("*?[") != std::string::npos;
}

long parse_number(const std::string& text, const std::string& whole) {
  long value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0)
    throw Error(ErrorKind::Usage,
                "--frames '" + whole + "': expected frames like 1-100, 1-100x5 or 1,4,9-12");
  return value;
}

}  // namespace

bool is_sequence_pattern(const std::string& path) {
  return parse_sequence(path).has_value();
}

std::string same_name_key(const std::string& path) {
  const fs::path given(path);
  std::error_code ec;
  const fs::path folder = fs::weakly_canonical(
      given.has_parent_path() ? given.parent_path() : fs::current_path(ec), ec);
  return ec ? given.lexically_normal().string() : (folder / given.filename()).string();
}

std::string same_file_key(const std::string& path) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path).lexically_normal().string() : canonical.string();
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return same_name_key(a) == same_name_key(b) || (fs::equivalent(a, b, ec) && !ec);
}

namespace {

// Who a path is, as same_file asks: its name's key, and the file it reaches where one exists
// (through a link, or a hard link's other name).
struct FileIdentity {
  std::string name;
  std::optional<std::pair<dev_t, ino_t>> inode;
};

FileIdentity identity_of(const std::string& path) {
  FileIdentity id{same_name_key(path), std::nullopt};
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) id.inode = std::pair{st.st_dev, st.st_ino};
  return id;
}

// Paths seen so far, found again by name or by file: each path is looked at once, so a
// command writing a file for each of thousands of parts checks them in n log n.
class SeenFiles {
 public:
  const std::string* find(const FileIdentity& id) const {
    if (auto it = by_name_.find(id.name); it != by_name_.end()) return &it->second;
    if (id.inode)
      if (auto it = by_inode_.find(*id.inode); it != by_inode_.end()) return &it->second;
    return nullptr;
  }
  void add(const FileIdentity& id, const std::string& label) {
    by_name_.emplace(id.name, label);
    if (id.inode) by_inode_.emplace(*id.inode, label);
  }

 private:
  std::map<std::string, std::string> by_name_;
  std::map<std::pair<dev_t, ino_t>, std::string> by_inode_;
};

}  // namespace

void refuse_clobbering(const std::vector<WrittenFile>& written,
                       const std::vector<std::string>& inputs) {
  SeenFiles read, made;
  for (const std::string& input : inputs)
    if (input != "-") read.add(identity_of(input), input);
  for (const WrittenFile& w : written) {
    if (w.path.empty() || w.path == "-") continue;
    const FileIdentity id = identity_of(w.path);
    if (const std::string* input = read.find(id))
      throw Error(ErrorKind::Usage,
                  w.option + " " + w.path + ": refusing to overwrite the input " + *input);
    if (const std::string* other = made.find(id))
      throw Error(ErrorKind::Usage, *other + " and " + w.option + " name the same file: " + w.path);
    made.add(id, w.option);
  }
}

bool is_image_extension(const std::string& extension) {
  const auto& known = image_extensions();
  return std::find(known.begin(), known.end(), extension) != known.end();
}

std::vector<long> parse_frames(const std::string& text) {
  constexpr std::size_t kMaxFrames = 10'000'000;  // a typo, not a shot
  std::vector<long> frames;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    if (dash == std::string::npos) {
      frames.push_back(parse_number(item, text));
    } else {
      const std::size_t x = item.find('x', dash);
      const long first = parse_number(item.substr(0, dash), text);
      const long last =
          parse_number(item.substr(dash + 1, x == std::string::npos ? x : x - dash - 1), text);
      const long step = x == std::string::npos ? 1 : parse_number(item.substr(x + 1), text);
      if (first > last || step == 0)
        throw Error(ErrorKind::Usage, "--frames '" + text + "': range " + item +
                                          " is empty (first > last, or step 0)");
      for (long f = first;; f += step) {
        frames.push_back(f);
        if (frames.size() > kMaxFrames)
          throw Error(ErrorKind::Usage, "--frames '" + text + "': more than 10 million frames");
        if (last - f < step) break;  // the next would pass last (and f + step could overflow)
      }
    }
    start = comma + 1;
  }
  return frames;
}

InputList expand_inputs(const std::vector<std::string>& arguments, const InputOptions& options) {
  InputList list;
  bool any_sequence = false;
  std::set<std::string> seen;
  const auto add = [&](std::vector<InputFile> files) {
    for (auto& file : files)
      if (seen.insert(same_name_key(file.path)).second) list.files.push_back(std::move(file));
  };
  for (const std::string& argument : arguments) {
    const auto [path, channels] = split_channels(argument);
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      add(list_folder(path, channels, options.recursive));
    } else if (fs::exists(path, ec) || fs::is_symlink(path, ec)) {
      add({{path, channels, "", frame_of(path)}});
      list.single = arguments.size() == 1;
    } else if (const auto sequence = parse_sequence(path)) {
      any_sequence = true;
      add(expand_sequence(*sequence, path, channels, options.frames));
    } else if (has_glob_characters(path)) {
      add(expand_glob(path, channels));
    } else {
      add({{path, channels, "", frame_of(path)}});  // missing: reported when it is read
      list.single = arguments.size() == 1;
    }
  }
  if (!options.frames.empty() && !any_sequence)
    throw Error(ErrorKind::Usage,
                "--frames needs a sequence pattern among the inputs (shot.####.exr or "
                "shot.%04d.exr)");
  return list;
}

Shard parse_shard(const std::string& text) {
  Shard shard;
  const auto slash = text.find('/');
  const auto number = [&](const std::string& part, int& value) {
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    return !part.empty() && ec == std::errc() && ptr == part.data() + part.size();
  };
  if (slash == std::string::npos || !number(text.substr(0, slash), shard.index) ||
      !number(text.substr(slash + 1), shard.count) || shard.count < 1 || shard.index < 1 ||
      shard.index > shard.count)
    throw Error(ErrorKind::Usage,
                "--shard '" + text + "': expected K/N with 1 <= K <= N, e.g. 2/8");
  return shard;
}

std::vector<InputFile> take_shard(const std::vector<InputFile>& files, const Shard& shard) {
  std::vector<InputFile> mine;
  for (std::size_t i = std::size_t(shard.index - 1); i < files.size();
       i += std::size_t(shard.count))
    mine.push_back(files[i]);
  return mine;
}

}  // namespace halo
