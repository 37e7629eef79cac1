// The channels of an input that the filters do not touch, read in step with the output rows
// and put back beside the filtered ones, so that a multilayer EXR comes out with every layer
// (depth, normals, AOVs) under its own name and only the filtered channels replaced. Stages
// that move pixels (mirrors, turns, crop, resize, orient) move these channels too, with the
// same arithmetic: they run on them on the reference, as a stream of their own on a thread,
// so that a compositor finds every layer where the colour went.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/image_io.hpp"
#include "pipeline/pipeline.hpp"

namespace halo {

class MovedRows;

class CarriedLayers {
 public:
  // `picked`: the channels the filters read, as chosen from `file`; `geometry`:
  // the chain's stages that move pixels (empty: none), which the other channels go through,
  // their strips taking `share` of the file's memory.
  CarriedLayers(const std::shared_ptr<const CheckedFile>& file, const ChannelChoice& picked,
                const Pipeline& geometry, double share);
  ~CarriedLayers();

  // Whether the file has channels besides the picked ones.
  bool any() const { return names_.size() > picked_.size(); }
  // Lays the output out for filtered rows of `channels` channels: as many as were picked take
  // their places under their names; a different count (a filter that makes grey from colour)
  // takes the first picked channel's place, named in the picked channels' layer (Combined.R,
  // .G, .B, .A become Combined.Y, .A). Returns the name that another channel already has, which
  // leaves no layout; empty when laid out.
  std::string fit(int channels);
  // How many channels the filters leave alone.
  int carried() const { return int(others_.size()); }
  // Whether they go through stages of their own (the chain moves pixels).
  bool moved() const { return moved_ != nullptr; }
  // The output's channels, in order, once fit() chose them.
  const std::vector<std::string>& names() const { return out_names_; }
  // The output rows `rows` (the next ones, in order) of every channel as float: the filtered
  // samples (float) where fit() put them, the other channels in their file's order.
  const PixelBuffer& merge(Span rows, const PixelBuffer& filtered);

 private:
  std::vector<int> picked_;
  std::vector<std::string> picked_names_;
  bool picked_alpha_ = false;  // the last picked channel is alpha
  std::vector<int> others_;
  std::vector<std::string> names_;       // the file's channels
  std::vector<std::string> out_names_;   // the output's channels
  std::vector<int> filtered_at_;         // where each filtered channel goes in the output
  std::vector<int> others_at_;           // where each other channel goes
  std::unique_ptr<ImageReader> reader_;  // the other channels as stored, without geometry
  std::unique_ptr<MovedRows> moved_;     // the other channels after the geometry
  PixelBuffer rows_;
  std::vector<float> carried_rows_;
};

// The stages of `pipeline` that move pixels (StageTraits::moves_samples, resizes), shared
// (or bound to `file` where they depend on it, as orient does): what the carried channels go
// through.
Pipeline moving_stages(const Pipeline& pipeline, const FileFacts& file);

}  // namespace halo
