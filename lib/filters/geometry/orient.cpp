// orient: the image put upright as its file's EXIF Orientation says (a camera's JPEG stored
// sideways), by the mirrors and quarter turns of lib/filters/geometry/mirror.cpp; the output's
// Orientation becomes 1. `halo run --auto-orient` puts this stage first. Bound to each file
// (BoundToFile); without a file, or for Orientation 1, the image passes unchanged.
#include <fmt/format.h>

#include "filters/filter.hpp"
#include "filters/registry.hpp"

namespace halo {

namespace {

// The stages that put an image stored with EXIF Orientation 1..8 upright, in order (EXIF 2.32,
// 4.6.4 A: the stored 0th row and column are the visual ... 5: left, top (a transpose);
// 7: right, bottom (a transverse)). A quarter turn clockwise then a flop is the transpose.
std::vector<std::string> orientation_specs(int orientation) {
  switch (orientation) {
    case 2:
      return {"flop"};
    case 3:
      return {"rotate:angle=180"};
    case 4:
      return {"flip"};
    case 5:
      return {"rotate:angle=90", "flop"};
    case 6:
      return {"rotate:angle=90"};
    case 7:
      return {"rotate:angle=270", "flop"};
    case 8:
      return {"rotate:angle=270"};
    default:
      return {"rotate:angle=0"};  // a copy
  }
}

class OrientStage : public Stage, public BoundToFile {
 public:
  OrientStage(std::string spec, int orientation)
      : Stage(std::move(spec)), orientation_(orientation) {
    for (const auto& s : orientation_specs(orientation)) steps_.push_back(make_stage(s));
  }

  StageTraits traits() const override {
    return {.resizes = orientation_ >= 5,
            .moves_samples = true,
            .cost = {.reference_ns = 4, .device_ns = 1}};
  }
  ImageDesc describe(const ImageDesc& in) const override {
    ImageDesc out = orientation_ >= 5 ? resized(in, {in.size.height, in.size.width}) : in;
    out.upright = true;
    return out;
  }
  std::string whole_image_reason(PixelType) const override {
    return orientation_ == 1 ? "" : "putting the image upright moves rows across the image";
  }
  Span input_rows(Span out, Size in) const override {
    return orientation_ == 1 ? out : Span{0, in.height};
  }
  std::vector<std::string> details(const StageRun&) const override {
    std::string steps;
    for (const auto& s : steps_) steps += (steps.empty() ? "" : ", then ") + s->spec();
    return {fmt::format("EXIF Orientation {}: {}", orientation_,
                        orientation_ == 1 ? "already upright" : steps)};
  }
  std::unique_ptr<Stage> for_file(const FileFacts& file) const override {
    if (file.orientation == orientation_ || file.orientation < 1 || file.orientation > 8)
      return nullptr;
    return std::make_unique<OrientStage>(spec(), file.orientation);
  }

  Image reference_rows(const Image& in, Span out, StageRun& run) const override {
    if (orientation_ == 1) return steps_[0]->reference_rows(in, out, run);
    Image image = steps_[0]->reference(in);
    for (std::size_t i = 1; i < steps_.size(); ++i) image = steps_[i]->reference(image);
    return image;
  }

  DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                           StageRun& run) const override {
    if (orientation_ == 1) return steps_[0]->enqueue_rows(device, in, out, run);
    DeviceImage image = steps_[0]->enqueue(device, in);
    for (std::size_t i = 1; i < steps_.size(); ++i) image = steps_[i]->enqueue(device, image);
    return image;
  }

 private:
  int orientation_;
  std::vector<std::unique_ptr<Stage>> steps_;
};

}  // namespace

FilterDef orient_filter() {
  return {
      .name = "orient",
      .summary =
          "put the image upright as its file's EXIF Orientation says; the output's "
          "Orientation becomes 1",
      .params = {border_param()},  // accepted like every filter's; unused
      .notes = {"halo run --auto-orient puts it before the other filters",
                "mirrors and quarter turns: samples moved, exact; Orientation 1 (or no "
                "EXIF) passes the image unchanged, streamed"},
      .example = "orient",
      .make = [](const Args& args) { return std::make_unique<OrientStage>(args.spec_text(), 1); },
      .mixes_neighbours = false};
}

}  // namespace halo
