// The channels of an input that the filters do not touch, read in step with the output rows
// and put back beside the filtered ones, so that a multilayer EXR comes out with every layer
// (depth, normals, AOVs) under its own name and only the filtered channels replaced.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/image_io.hpp"

namespace halo {

class CarriedLayers {
 public:
  // `picked`: the channels the filters read, as chosen from the file at `path`.
  CarriedLayers(const std::string& path, const ChannelChoice& picked);
  ~CarriedLayers();

  // Whether the file has channels besides the picked ones.
  bool any() const { return names_.size() > picked_.size(); }
  // Whether filtered rows of `channels` channels can take the picked channels' places (a
  // filter that makes grey from colour cannot).
  bool fits(int channels) const { return std::size_t(channels) == picked_.size(); }
  // Every channel of the file, in its order: the names the output keeps.
  const std::vector<std::string>& names() const { return names_; }
  // The image rows `rows` (the next ones, in order) of every channel as float: the filtered
  // samples (float, in picked order) at the picked channels, the file's elsewhere.
  const PixelBuffer& merge(Span rows, const PixelBuffer& filtered);

 private:
  std::unique_ptr<ImageReader> reader_;
  std::vector<int> picked_;
  std::vector<std::string> names_;
  PixelBuffer rows_;
};

}  // namespace halo
