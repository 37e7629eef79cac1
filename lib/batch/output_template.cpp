// Output name templates.
#include "batch/output_template.hpp"

#include <filesystem>
#include <set>

#include "core/error.hpp"

namespace halo {

namespace fs = std::filesystem;

namespace {

const std::set<std::string>& known_fields() {
  static const std::set<std::string> fields = {"stem", "name", "ext", "dir", "reldir", "frame"};
  return fields;
}

std::string folder_of(const fs::path& path) {
  const std::string dir = path.parent_path().string();
  return dir.empty() ? "." : dir;
}

// The input's folder relative to the folder argument it was found under ("." at the top).
std::string relative_folder(const InputFile& input) {
  if (input.root.empty()) return ".";
  const std::string rel =
      fs::path(input.path).parent_path().lexically_relative(input.root).string();
  return rel.empty() ? "." : rel;
}

}  // namespace

OutputTemplate::OutputTemplate(std::string text) : text_(std::move(text)) {
  std::string literal;
  for (std::size_t i = 0; i < text_.size(); ++i) {
    const char c = text_[i];
    if ((c == '{' || c == '}') && i + 1 < text_.size() && text_[i + 1] == c) {
      literal += c;
      ++i;
    } else if (c == '{') {
      const auto close = text_.find('}', i);
      if (close == std::string::npos)
        throw Error(ErrorKind::Usage, "-o '" + text_ + "': '{' without '}' (write {{ for a brace)");
      const std::string field = text_.substr(i + 1, close - i - 1);
      if (!known_fields().count(field))
        throw Error(ErrorKind::Usage, "-o '" + text_ + "': unknown field {" + field +
                                          "} (known: {stem} {name} {ext} {dir} {reldir} {frame})");
      if (!literal.empty()) parts_.push_back({false, std::move(literal)});
      literal.clear();
      parts_.push_back({true, field});
      has_fields_ = true;
      i = close;
    } else if (c == '}') {
      throw Error(ErrorKind::Usage, "-o '" + text_ + "': '}' without '{' (write }} for a brace)");
    } else {
      literal += c;
    }
  }
  if (!literal.empty()) parts_.push_back({false, std::move(literal)});
}

std::string OutputTemplate::expand(const InputFile& input) const {
  const fs::path path(input.path);
  std::string out;
  for (const Part& part : parts_) {
    if (!part.field)
      out += part.text;
    else if (part.text == "stem")
      out += path.stem().string();
    else if (part.text == "name")
      out += path.filename().string();
    else if (part.text == "ext")
      out += path.extension().string();
    else if (part.text == "dir")
      out += folder_of(path);
    else if (part.text == "reldir")
      out += relative_folder(input);
    else if (part.text == "frame") {
      if (input.frame.empty())
        throw Error(ErrorKind::Usage,
                    "-o '" + text_ + "': " + input.path + " has no frame number for {frame}");
      out += input.frame;
    }
  }
  return fs::path(out).lexically_normal().string();
}

}  // namespace halo
