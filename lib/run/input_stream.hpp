// An input image and the guide files its pipeline names, opened for streaming: every header is
// read and checked (channels, sizes) before any pixel, and read() then delivers the image's
// rows with the same rows of every guide, in order, for lib/pipeline/stream.hpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "filters/guided/guides.hpp"
#include "io/image_io.hpp"
#include "pipeline/stream.hpp"

namespace halo {

class InputStream {
 public:
  // Guides of each set: "auto" takes the input's own layers (Blender ViewLayer.Normal.X, ...;
  // io/guides.hpp finds them), "off" nothing, anything else is a file[channels].
  // shrink: the input may be decoded at 1/shrink of its size (open_reader), for a pipeline
  // whose first stages shrink it anyway (Pipeline::decode_shrink); guides never are.
  // The input's file is opened_file(input): InputRef::file where an earlier reader opened it.
  InputStream(const InputRef& input, const std::vector<GuideSources>& guide_sets, int shrink = 1);
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  const StreamInput& input() const { return input_; }
  const ImageHeader& header() const;
  const std::shared_ptr<const CheckedFile>& file() const { return files_[0].file; }
  const ChannelChoice& channels() const { return choice_; }
  SampleType stored() const { return header().stored; }

 private:
  // A guide read from one of the files: which set, which guide (0 normal, 1 depth, 2 albedo),
  // from which file, and its channels there.
  struct GuidePart {
    std::size_t set;
    int which;
    std::size_t file;
    std::vector<int> picked;
  };
  struct File {
    std::string path;
    std::shared_ptr<const CheckedFile> file;
    std::unique_ptr<ImageReader> reader;
    int lo = 0, hi = 0;  // the channels read: those of the image and guides it holds
  };

  void add_guides(std::size_t set, const GuideSources& sources);
  std::size_t file_for(const std::string& path);
  void read(HostStrip& strip, Span rows);
  void rewind();  // every reader opened again, at row 0

  std::vector<File> files_;  // the input first
  int shrink_ = 1;
  ChannelChoice choice_;
  std::vector<GuidePart> parts_;
  std::vector<bool> unit_normals_;  // per guide set: GuideSources::unit_normals
  StreamInput input_;
  std::shared_ptr<const HostStrip> kept_;  // the whole input, decoded already (take_decoded)
};

}  // namespace halo
