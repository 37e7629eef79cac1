// JUnit XML, the test report GitHub Actions, GitLab and Jenkins show as test results: one
// suite of cases, each passed, failed (with why) or in error (could not run).
#pragma once

#include <string>
#include <vector>

namespace halo {

struct JunitCase {
  std::string name;  // "a.exr vs b.exr"
  double seconds = 0;
  std::string failure;  // non-empty: failed, with this one-line message
  std::string error;    // non-empty: could not be run
  std::string details;  // the figures, as the text report prints them
};

// The report of `cases` as the suite `suite`, written atomically to `path`. Names and texts
// are escaped, invalid UTF-8 and control characters replaced, so the file always parses.
void write_junit(const std::string& path, const std::string& suite,
                 const std::vector<JunitCase>& cases);

}  // namespace halo
