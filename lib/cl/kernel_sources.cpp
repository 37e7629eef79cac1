// Access to the kernels embedded from kernels/*.cl, with their #include lines expanded, so each
// .cl file stays valid standalone OpenCL C (compilable with -I kernels) and ships in the binary.
#include <map>
#include <set>
#include <string_view>

#include "cl/program_cache.hpp"
#include "core/error.hpp"

namespace halo {

namespace cl_detail {
const std::map<std::string_view, std::string_view>& embedded_kernels();
}

static void expand(const std::string& file, std::set<std::string>& seen, std::string& out) {
  const auto& sources = cl_detail::embedded_kernels();
  const auto it = sources.find(file);
  if (it == sources.end())
    throw Error(ErrorKind::Internal, "kernel source " + file + " is not embedded");
  if (!seen.insert(file).second) return;  // each file once, like an include guard
  const std::string_view text = it->second;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const auto line = text.substr(start, end - start);
    constexpr std::string_view directive = "#include \"";
    if (line.starts_with(directive)) {
      const auto close = line.find('"', directive.size());
      expand(std::string(line.substr(directive.size(), close - directive.size())), seen, out);
    } else {
      out.append(line);
      out.push_back('\n');
    }
    start = end + 1;
  }
}

std::string kernel_source(const std::string& file, const std::string& generated) {
  std::set<std::string> seen;
  std::string out;
  expand(file, seen, out);
  if (generated.empty()) return out;
  constexpr std::string_view marker = "/* generated code */\n";
  const auto at = out.find(marker);
  if (at == std::string::npos)
    throw Error(ErrorKind::Internal, "kernel source " + file + " has no place for generated code");
  return out.replace(at, marker.size(), "#define HALO_GENERATED\n" + generated + "\n");
}

}  // namespace halo
