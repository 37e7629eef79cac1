// `halo devices`, `halo filters` and `halo presets`: what halo can run on and what it can run.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#define CL_USE_DEPRECATED_OPENCL_1_1_APIS  // clGetExtensionFunctionAddress, for the loader
#include <dlfcn.h>

#include <filesystem>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "filters/colour/color_lut.hpp"
#include "filters/registry.hpp"
#include "io/codec.hpp"
#include "net/denoise_net.hpp"
#include "spec/preset.hpp"

namespace halo {

extern const char* const kBuildCommit;  // build_info.cpp, stamped at every build
extern const char* const kBuildType;

namespace {

std::string bytes(std::uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(n);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} {}", v, units[u]) : fmt::format("{:.1f} {}", v, units[u]);
}

int print_devices() {
  const auto devices = list_devices();
  if (devices.empty()) {
    fmt::print(
        "no OpenCL devices (install a GPU driver, or pocl-opencl-icd for the CPU); "
        "--device ref runs the CPU reference\n");
    return 0;
  }
  int auto_pick = -1;
  for (const auto& d : devices)
    if (d.gpu && auto_pick < 0) auto_pick = d.index;
  if (auto_pick < 0) auto_pick = 0;
  for (const auto& d : devices) {
    fmt::print("{}: {}  [{}{}]\n", d.index, d.name, d.type, d.index == auto_pick ? ", auto" : "");
    fmt::print("   platform   {} ({})\n", d.platform_name, d.vendor);
    fmt::print("   compute    {} units, work-groups up to {}\n", d.compute_units, d.max_work_group);
    fmt::print("   memory     {} global, {} local, {} largest buffer\n", bytes(d.global_memory),
               bytes(d.local_memory), bytes(d.max_allocation));
    fmt::print("   version    {}, driver {}\n", d.version, d.driver_version);
    const TuningChoice tuning = choose_tuning(d, default_cache_dir());
    fmt::print("   tuning     {}\n", tuning.source);
    if (spdlog::should_log(spdlog::level::info))  // -v
      fmt::print("              {}\n", settings_text(tuning.tuning));
  }
  return 0;
}

void print_filter(const FilterDef& f) {
  fmt::print("{:<10} {}\n", f.name, f.summary);
  for (const auto& p : f.params) fmt::print("  {:<8} {:<36} {}\n", p.name, p.describe(), p.doc);
  for (const auto& note : f.notes) fmt::print("  {}\n", note);
  fmt::print("  example: halo run in.png -f {} -o out.png\n", f.example);
}

// ocl-icd's own query (clGetICDLoaderInfoOCLICD, an extension function of the loader): its
// name and version (CL_ICDL_NAME 3, CL_ICDL_VERSION 2); else the library's file.
std::string icd_loader() {
  using Query = cl_int (*)(cl_uint, std::size_t, void*, std::size_t*);
  const auto query =
      reinterpret_cast<Query>(clGetExtensionFunctionAddress("clGetICDLoaderInfoOCLICD"));
  char name[128] = {}, version[64] = {};
  if (query && query(3, sizeof name - 1, name, nullptr) == CL_SUCCESS &&
      query(2, sizeof version - 1, version, nullptr) == CL_SUCCESS)
    return fmt::format("{} {}", name, version);
  Dl_info where{};
  if (::dladdr(reinterpret_cast<void*>(&clGetPlatformIDs), &where) && where.dli_fname)
    return std::filesystem::canonical(where.dli_fname).string();
  return "an OpenCL loader";
}

}  // namespace

std::string version_text() {
  std::string text =
      fmt::format("halo {} (commit {}, {} build)\n", HALO_VERSION, kBuildCommit, kBuildType);
  std::vector<cl::Platform> platforms;
  std::string found;
  if (cl::Platform::get(&platforms) == CL_SUCCESS)
    for (const auto& p : platforms) {
      std::string name, version;
      p.getInfo(CL_PLATFORM_NAME, &name);
      p.getInfo(CL_PLATFORM_VERSION, &version);
      found += fmt::format("{}{} ({})", found.empty() ? "" : "; ", name.c_str(), version.c_str());
    }
  text += fmt::format("OpenCL: {}; platforms: {}\n", icd_loader(),
                      found.empty() ? "none (--device ref runs the reference)" : found);
  text += "codecs: " + codec_versions() + "\n";
  text += "colour: " + ocio_version() + ", " + lcms_version() + "\n";
  const auto [folder, networks] = DenoiseNet::installed();
  text += folder.empty() ? "denoise: OIDN's weights not installed (scripts/fetch-weights)"
                         : fmt::format("denoise: {} of OIDN's networks in {}", networks, folder);
  return text;
}

Command add_devices_command(CLI::App& app) {
  app.add_subcommand("devices", "list OpenCL platforms and devices (index for --device)");
  return print_devices;
}

Command add_filters_command(CLI::App& app) {
  auto name = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("filters",
                                 "every filter with its parameters, defaults, ranges "
                                 "and kernels");
  cmd->add_option("name", *name, "show one filter");
  cmd->footer(
      "Spec grammar: name[:key=value]...; lists are comma-separated, e.g.\n"
      "  conv:k=0,-1,0,-1,5,-1,0,-1,0:border=reflect");
  return [name] {
    if (name->empty()) {
      fmt::print("Spec grammar: name[:key=value]...; lists are comma-separated.\n\n");
      for (const auto& f : filter_registry()) print_filter(f), fmt::print("\n");
      return 0;
    }
    const FilterDef* f = find_filter(*name);
    if (!f)
      throw halo::Error(ErrorKind::Usage, "unknown filter '" + *name + "' (see halo filters)");
    print_filter(*f);
    return 0;
  };
}

Command add_presets_command(CLI::App& app) {
  app.add_subcommand("presets", "list presets (files of specs, one per line) for --preset");
  return [] {
    const auto presets = list_presets();
    if (presets.empty()) fmt::print("no presets found\n");
    for (const auto& p : presets)
      fmt::print("{:<16} {}  ({})\n", p.name, p.summary, p.path.string());
    return 0;
  };
}

}  // namespace halo
