// Launch shapes: the settings text, the tuned file's key and its precedence over the table.
#include <doctest/doctest.h>

#include <unistd.h>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cl/program_cache.hpp"
#include "cl/tuning.hpp"
#include "core/error.hpp"
#include "core/settings.hpp"
#include "core/text.hpp"
#include "support.hpp"
#include "tune/tuner.hpp"

using namespace halo;
namespace fs = std::filesystem;

TEST_CASE("settings text: every field by name, round trip, and bad items refused") {
  Tuning t;
  const std::string all = settings_text(t);
  CHECK(all.find("rows_w=32,rows_h=4,rows_steps=4,rows_slide=0") == 0);
  CHECK(std::count(all.begin(), all.end(), '=') == int(tuning_fields().size()));
  Tuning u;
  apply_settings(u, "box_seg=48,vec=0,hist_in_flight=3", "test");
  CHECK(u.box_seg == 48);
  CHECK(u.hist_in_flight == 3);
  CHECK(settings_text(u, &t) == "box_seg=48,hist_in_flight=3");
  Tuning back;
  apply_settings(back, settings_text(u), "test");
  CHECK(settings_text(back, &u).empty());
  for (const char* bad :
       {"warp=32", "box_seg", "box_seg=", "box_seg=0", "box_seg=-4", "box_seg=4x", "vec=-1"}) {
    INFO(bad);
    CHECK_THROWS_AS(apply_settings(u, bad, "HALO_TUNING"), Error);
  }
}

TEST_CASE("the knob table: names once, halo tune's candidates within each knob's bounds") {
  std::set<std::string> names;
  const auto& families = tune_families();
  int searched = 0;
  for (const TuningField& field : tuning_fields()) {
    INFO(field.name);
    CHECK(names.insert(field.name).second);
    CHECK(find_tuning_field(field.name) == &field);
    CHECK(Tuning{}.*(field.member) >= field.min);
    for (const KnobSearch* search : {&field.tiled, &field.vector}) {
      if (!search->family) {
        CHECK(search->values.empty());
        continue;
      }
      ++searched;
      CHECK(std::find(families.begin(), families.end(), search->family) != families.end());
      CHECK(search->values.size() >= 2);
      for (int value : search->values) CHECK(value >= field.min);
    }
  }
  CHECK(searched == 41);  // 33 knobs searched on GPUs or CPUs, 8 of them on both
  // vec on GPUs must stay 0 (the tiled kernels) and the network's shapes are not timed.
  CHECK(find_tuning_field("vec")->tiled.family == nullptr);
  CHECK(find_tuning_field("net_tile_x")->tiled.family == nullptr);
}

TEST_CASE("a tuned file overrides the table for its device only, HALO_TUNING overrides both") {
  const fs::path dir = fs::temp_directory_path() / ("halo-tuning-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const DeviceInfo own = test::device().info();  // the test device: PoCL here, a GPU there
  DeviceInfo other = own;
  other.type = own.type == "gpu" ? "cpu" : "gpu";  // same name and driver, the other type
  CHECK(tuned_file(dir, own) != tuned_file(dir, other));
  DeviceInfo new_driver = own;
  new_driver.driver_version += ".1";
  CHECK(tuned_file(dir, own) != tuned_file(dir, new_driver));

  CHECK(choose_tuning(own, dir).source.find("table row") == 0);
  fs::create_directories(tuned_file(dir, own).parent_path());
  std::ofstream(tuned_file(dir, own))
      << R"({"tuned_at": "2026-11-23T00:00:00Z", "settings": {"box_seg": 40, "conv_h": 2}})";
  const TuningChoice chosen = choose_tuning(own, dir);
  CHECK(chosen.source.find("tuned 2026-11-23T00:00:00Z") == 0);
  CHECK(chosen.tuning.box_seg == 40);
  CHECK(chosen.tuning.conv_h == 2);
  CHECK(chosen.tuning.vec == table_tuning(own).vec);  // fields it does not name: the table's
  CHECK(choose_tuning(other, dir).source.find("table row") == 0);
  CHECK(choose_tuning(own, std::nullopt).tuning.box_seg == table_tuning(own).box_seg);

  const Settings before = settings();
  Settings with_tuning = before;
  with_tuning.tuning = "box_seg=24";
  install_settings(with_tuning);
  const TuningChoice over = choose_tuning(own, dir);
  install_settings(before);
  CHECK(over.tuning.box_seg == 24);
  CHECK(over.tuning.conv_h == 2);
  CHECK(over.source.find("+ HALO_TUNING") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("knob defines: each knob's define is its name in capitals, in the kernels it lists") {
  // The kernel files any knob names, their code without comments.
  std::map<std::string, std::string> code;
  for (const auto& field : tuning_fields()) {
    std::istringstream files(field.kernels);
    for (std::string file; files >> file;)
      code.emplace(file, std::regex_replace(kernel_source(file), std::regex("//[^\n]*"), ""));
  }
  CHECK(code.size() == 5);  // separable, conv, box, histogram, denoise
  for (const auto& field : tuning_fields()) {
    const std::string define = upper(field.name);
    INFO(define);
    const std::string listed = std::string(" ") + field.kernels + " ";
    // In each file that lists it (with what it includes: common.cl reads vec for every CPU
    // form); a knob no kernel reads has no define of its name in any (one name, one concept).
    for (const auto& [file, text] : code) {
      INFO(file);
      const bool found = std::regex_search(text, std::regex("\\b" + define + "\\b"));
      if (listed.find(" " + file + " ") != std::string::npos) CHECK(found);
      if (*field.kernels == '\0') CHECK_FALSE(found);
    }
    Tuning t;
    if (*field.kernels == '\0') {
      CHECK_THROWS_AS(knob_define(t, field.member), Error);
    } else {
      CHECK(knob_define(t, field.member) == std::pair{define, std::to_string(t.*(field.member))});
      CHECK(knob_define(field.member, 7).second == "7");
    }
  }
}
