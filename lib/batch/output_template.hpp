// -o for many inputs: a template whose {fields} are taken from each input's name.
//   {stem}   name without extension      shot.0042     {ext}    extension with the dot  .exr
//   {name}   file name                   shot.0042.exr {frame}  frame number digits     0042
//   {dir}    the input's folder          renders/a     {reldir} folder below the folder argument
// {{ and }} are literal braces. A text without fields names one file (single input only).
#pragma once

#include <string>
#include <vector>

#include "batch/inputs.hpp"

namespace halo {

class OutputTemplate {
 public:
  // Error(Usage) for an unknown field or an unmatched brace, naming the field and listing the
  // known ones.
  explicit OutputTemplate(std::string text);

  bool has_fields() const { return has_fields_; }
  const std::string& text() const { return text_; }
  // Error(Usage) when {frame} is used and the input's name has no digits.
  std::string expand(const InputFile& input) const;

 private:
  struct Part {
    bool field = false;
    std::string text;  // literal text, or the field's name
  };
  std::string text_;
  std::vector<Part> parts_;
  bool has_fields_ = false;
};

}  // namespace halo
