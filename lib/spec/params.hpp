// Parameter tables: each filter declares its parameters once (name, type, default, range, doc);
// the table drives parsing, validation, `halo filters` and the help text.
#pragma once

#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "spec/spec.hpp"

namespace halo {

enum class ParamType {
  Number,   // a finite real; with allow_auto also the word "auto"
  Integer,  // a whole number
  Numbers,  // comma-separated reals
  Choice,   // one of `choices`
  Flag,     // 0/1, true/false, yes/no
  File,     // a file name, optionally with a channel list "f.exr[A,B]"; or auto or off
  Text,     // a name the filter looks up itself (a colour space, a view)
};

struct Param {
  std::string name;
  ParamType type = ParamType::Number;
  std::string fallback;  // default, written as in a spec
  std::string doc;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;
  bool allow_auto = false;

  // How the parameter reads in `halo filters`: type, range or choices, default.
  std::string describe() const;
};

// The border parameter every filter takes.
Param border_param();
// gray=0|1: filter the luminance instead of each colour channel.
Param gray_param(const char* fallback = "0");

// The validated values of one spec against its filter's table.
class Args {
 public:
  Args(const Spec& spec, const std::vector<Param>& table);

  const std::string& spec_text() const { return spec_text_; }
  bool given(const std::string& name) const { return given_.count(name) != 0; }
  bool is_auto(const std::string& name) const { return text(name) == "auto"; }
  double number(const std::string& name) const;
  int integer(const std::string& name) const;
  std::vector<double> numbers(const std::string& name) const;
  bool flag(const std::string& name) const;
  const std::string& text(const std::string& name) const;
  // A Choice parameter as the value its table maps it to: {{"fast", Quality::fast}, ...}, one
  // entry per choice the parameter's table lists (an Internal error names one left out).
  template <class Value>
  Value choice(const std::string& name,
               std::initializer_list<std::pair<const char*, Value>> values) const {
    const std::string& given = text(name);
    for (const auto& [key, value] : values)
      if (given == key) return value;
    unmapped(name);
  }

  // A Usage error naming the spec and the key, for checks the table cannot express.
  [[noreturn]] void fail(const std::string& key, const std::string& why) const;

 private:
  [[noreturn]] void unmapped(const std::string& name) const;

  std::string spec_text_;
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> given_;
};

}  // namespace halo
