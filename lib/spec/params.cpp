// Typing and range checks of spec values against a filter's parameter table.
#include "spec/params.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace halo {

namespace {

bool parse_real(const std::string& text, double& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && std::isfinite(value);
}

// Every number reaches the kernels as a float: one past float's range would be infinite there
// (rotate:background=1e39 filled with NaN).
constexpr double kLargestFloat = std::numeric_limits<float>::max();

std::string past_float(const std::string& value) {
  return "'" + value + "' is past the largest magnitude a float holds (3.4e38)";
}

std::string format_number(double v) {
  char buffer[32];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, ptr);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == ',') {
      items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  return items;
}

}  // namespace

std::string Param::describe() const {
  std::string range;
  const bool bounded = std::isfinite(min) || std::isfinite(max);
  switch (type) {
    case ParamType::Number:
    case ParamType::Integer:
      range = type == ParamType::Integer ? "integer" : "number";
      if (bounded) {  // appended piece by piece: "a" + std::string trips GCC 12's -Wrestrict
        range += ' ';
        range += std::isfinite(min) ? format_number(min) : "-inf";
        range += "..";
        range += std::isfinite(max) ? format_number(max) : "inf";
      }
      if (allow_auto) range += " or auto";
      break;
    case ParamType::Numbers:
      range = "list of numbers";
      break;
    case ParamType::Choice:
      for (const auto& c : choices) range += (range.empty() ? "" : "|") + c;
      break;
    case ParamType::Flag:
      range = "0|1";
      break;
    case ParamType::File:  // `choices`: the words it takes besides a file, where not auto|off
      range = "file[channels]";
      for (const auto& c : choices.empty() ? std::vector<std::string>{"auto", "off"} : choices)
        range += "|" + c;
      break;
    case ParamType::Text:
      range = "name";
      break;
  }
  return range + (fallback.empty() ? ", required" : ", default " + fallback);
}

Param border_param() {
  return {.name = "border",
          .type = ParamType::Choice,
          .fallback = "clamp",
          .doc =
              "pixels outside the image: zero, clamp (repeat edge), reflect (mirror about the "
              "edge pixel, dcb|abcd|cba), wrap",
          .choices = {"zero", "clamp", "reflect", "wrap"}};
}

Param gray_param(const char* fallback) {
  return {.name = "gray",
          .type = ParamType::Flag,
          .fallback = fallback,
          .doc = "convert to luminance first (Rec.601 for 8/16-bit data, Rec.709 for float)"};
}

Args::Args(const Spec& spec, const std::vector<Param>& table) : spec_text_(spec.text) {
  for (const auto& [key, value] : spec.options) {
    const Param* param = nullptr;
    for (const auto& p : table)
      if (p.name == key) param = &p;
    if (!param) {
      std::string known;
      for (const auto& p : table) known += (known.empty() ? "" : ", ") + p.name;
      fail(key, "unknown key (" + spec.name + " takes " + known + ")");
    }
    values_[key] = value;
    given_[key] = true;
  }
  for (const auto& p : table) {
    if (!values_.count(p.name)) {
      if (p.fallback.empty()) fail(p.name, "required");
      values_[p.name] = p.fallback;
    }
    const auto& value = values_[p.name];
    switch (p.type) {
      case ParamType::Number:
      case ParamType::Integer: {
        if (p.allow_auto && value == "auto") break;
        double v = 0;
        if (!parse_real(value, v)) fail(p.name, "'" + value + "' is not a number");
        if (std::fabs(v) > kLargestFloat) fail(p.name, past_float(value));
        if (p.type == ParamType::Integer && v != std::floor(v))
          fail(p.name, "'" + value + "' is not a whole number");
        if (v < p.min || v > p.max)
          fail(p.name, "'" + value + "' is out of range " + format_number(p.min) + ".." +
                           format_number(p.max));
        break;
      }
      case ParamType::Numbers:
        if (p.allow_auto && value == "auto") break;
        for (const auto& item : split_commas(value)) {
          double v = 0;
          if (!parse_real(item, v)) fail(p.name, "'" + item + "' is not a number");
          if (std::fabs(v) > kLargestFloat) fail(p.name, past_float(item));
        }
        break;
      case ParamType::Choice: {
        bool ok = false;
        for (const auto& c : p.choices) ok = ok || c == value;
        if (!ok) fail(p.name, "'" + value + "' is not one of " + p.describe());
        break;
      }
      case ParamType::Flag:
        if (value != "0" && value != "1" && value != "true" && value != "false" && value != "yes" &&
            value != "no")
          fail(p.name, "'" + value + "' is not 0 or 1");
        break;
      case ParamType::File:
        if (value.empty()) fail(p.name, "needs a file name, auto or off");
        break;
      case ParamType::Text:
        break;
    }
  }
}

void Args::unmapped(const std::string& name) const {
  throw Error(ErrorKind::Internal,
              "filter '" + spec_text_ + "': " + name + "=" + text(name) + " maps to no value");
}

void Args::fail(const std::string& key, const std::string& why) const {
  throw Error(ErrorKind::Usage, "filter '" + spec_text_ + "': key '" + key + "': " + why);
}

const std::string& Args::text(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end())
    throw Error(ErrorKind::Internal, "filter '" + spec_text_ + "' has no parameter " + name);
  return it->second;
}

double Args::number(const std::string& name) const {
  double v = 0;
  parse_real(text(name), v);
  return v;
}

int Args::integer(const std::string& name) const {
  return int(number(name));
}

std::vector<double> Args::numbers(const std::string& name) const {
  std::vector<double> list;
  for (const auto& item : split_commas(text(name))) {
    double v = 0;
    parse_real(item, v);
    list.push_back(v);
  }
  return list;
}

bool Args::flag(const std::string& name) const {
  const auto& v = text(name);
  return v == "1" || v == "true" || v == "yes";
}

}  // namespace halo
