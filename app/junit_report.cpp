#include "app/junit_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/record.hpp"

namespace halo {

namespace {

// U+FFFE and U+FFFF (EF BF BE, EF BF BF): valid UTF-8 that XML 1.0 cannot hold either.
void replace_nonchars(std::string& utf8) {
  for (std::size_t at = utf8.find("\xEF\xBF"); at != std::string::npos;
       at = utf8.find("\xEF\xBF", at + 3))
    if (at + 2 < utf8.size() && (utf8[at + 2] == '\xBE' || utf8[at + 2] == '\xBF'))
      utf8[at + 2] = '\xBD';
}

// Text as XML 1.0 character data or attribute value: valid UTF-8 (invalid bytes become
// U+FFFD, as JSON reports do), markup characters escaped, and control characters and the
// noncharacters U+FFFE and U+FFFF, which XML 1.0 cannot hold at all, replaced by U+FFFD.
std::string xml_text(const std::string& text) {
  const std::string utf8 = nlohmann::json::parse(json_text(nlohmann::json(text), -1));
  std::string out;
  for (const char c : utf8) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\t':
      case '\n':
        out += c;
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += "\xEF\xBF\xBD";
        else
          out += c;
    }
  }
  replace_nonchars(out);
  return out;
}

}  // namespace

void write_junit(const std::string& path, const std::string& suite,
                 const std::vector<JunitCase>& cases) {
  std::size_t failures = 0, errors = 0;
  double seconds = 0;
  for (const auto& c : cases) {
    failures += !c.failure.empty();
    errors += !c.error.empty();
    seconds += c.seconds;
  }
  write_atomically(path, [&](std::ostream& out) {
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out << fmt::format("<testsuites tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                       cases.size(), failures, errors, seconds);
    out << fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
        xml_text(suite), cases.size(), failures, errors, seconds);
    for (const auto& c : cases) {
      out << fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"",
                         xml_text(suite), xml_text(c.name), c.seconds);
      if (c.failure.empty() && c.error.empty() && c.details.empty()) {
        out << "/>\n";
        continue;
      }
      out << ">\n";
      if (!c.error.empty())
        out << fmt::format("      <error message=\"{}\"/>\n", xml_text(c.error));
      else if (!c.failure.empty())
        out << fmt::format("      <failure message=\"{}\">{}</failure>\n", xml_text(c.failure),
                           xml_text(c.details));
      if (c.failure.empty() && !c.details.empty())
        out << fmt::format("      <system-out>{}</system-out>\n", xml_text(c.details));
      out << "    </testcase>\n";
    }
    out << "  </testsuite>\n</testsuites>\n";
  });
}

}  // namespace halo
