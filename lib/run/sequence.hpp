// The frames around a file of a sequence, read from their files as the file itself is: what
// temporal denoising (lib/filters/denoise/temporal.hpp) blends each frame with.
#pragma once

#include <string>

#include "filters/denoise/temporal.hpp"
#include "io/image_io.hpp"
#include "pipeline/stream.hpp"

namespace halo {

// Where the frame number of `path` is: the last run of digits in its file name (not its
// folder's), as [at, at + count); count 0 when there is none.
struct FrameDigits {
  std::size_t at = 0, count = 0;
};
FrameDigits frame_digits(const std::string& path);

// The frame number of a file is the last run of digits in its name (not its folder's):
// shot.0041.exr is frame 41 of shot.####.exr, and frame 40 is shot.0040.exr (the same digits,
// zero-padded to the same width; wider where the number needs it).
class FileSequence : public FrameSequence {
 public:
  // path: the file; channels: the selection it is read with ("[R,G,B]", or empty).
  FileSequence(std::string path, std::string channels);

  std::string name(int offset) const override;
  long number(int offset) const override;
  bool exists(int offset) const override;
  SequenceFrame read(int offset, const GuideSources& sources, int keep) const override;
  std::shared_future<void> read_ahead(int offset, const GuideSources& sources) const override;

 private:
  std::string path_, channels_;
  std::size_t digits_at_ = std::string::npos, digits_ = 0;  // in path_
  long number_ = -1;
};

// The file `input` decoded whole with `sources`, shared with the windows of temporal denoising
// (FileSequence::read): decoded here unless a window has it or is decoding it. `decoded`:
// whether it was decoded here.
std::shared_ptr<const HostStrip> shared_decode(const InputRef& input, const GuideSources& sources,
                                               bool* decoded);

}  // namespace halo
