// Temporal denoising (denoise:temporal=N): each frame of a sequence denoised alone by OIDN's
// network (denoise.cpp), then averaged with its N denoised neighbours on each side, followed
// into it through the render's motion vectors. A neighbour's pixel counts where the depth,
// normals and albedo say the same surface is seen there (against frame t's 3x3 neighbourhood,
// so antialiased edges pass), weighted by how alike its 5x5 patch is to frame t's in a
// tone-mapped display space. Why this form and not others (accumulating noisy inputs before
// the network, recursion on the previous output): docs/denoising.md, "Temporal denoising".
//
// The frames around the one a stage runs on come from its file's sequence (FrameSequence, read
// by lib/run); each frame is denoised once per device and kept while a frame in flight needs
// it. Device side: kernels/temporal.cl.
#pragma once

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "filters/filter.hpp"
#include "filters/guided/guides.hpp"

namespace halo {

// A frame of a sequence, read whole from its file: the colour as the pipeline's first stage
// sees it, and the guides a stage asked for (shared with the decode they came from).
struct SequenceFrame {
  Image image;
  std::shared_ptr<const Guides> guides;
};

// The frames around the one a file holds (FileFacts::sequence): its name with the frame number
// moved by `offset` (shot.0041.exr -> shot.0040.exr for -1), and each read as the file itself
// is (its channels picked the same way).
class FrameSequence {
 public:
  virtual ~FrameSequence() = default;
  // The frame `offset` frames from this one; "" when the name has no frame number or the number
  // would be negative.
  virtual std::string name(int offset) const = 0;
  // Its frame number (the file's own for offset 0).
  virtual long number(int offset) const = 0;
  // Whether it exists (a regular file; a neighbour that does not is not used).
  virtual bool exists(int offset) const = 0;
  // Reads it whole with the guides `sources` names; Error naming the file when it cannot. A
  // later frame (offset > 0) is kept decoded for its own run, `keep` such frames at most.
  virtual SequenceFrame read(int offset, const GuideSources& sources, int keep) const = 0;
  // Starts reading it on another thread, for a read() soon (the next frame a window takes,
  // decoded while this one is filtered); the caller waits for it before its run ends (a thread
  // left decoding at exit would outlive what it uses). Nothing where it does not exist.
  virtual std::shared_future<void> read_ahead(int /*offset*/,
                                              const GuideSources& /*sources*/) const {
    return {};
  }
};

// How frames are blended: N neighbours each side, the patch distance's scale, the patch.
struct TemporalParams {
  int radius = 2;
  float sigma = 0.065f;
  int patch_radius = 2;  // 5x5
  bool zero_motion = false;
};

// A frame of the window: its per-frame denoised colour (and alpha, its last plane, where the
// image has it: colour is premultiplied, so alpha is averaged with the same weights) and its
// guides; on a device also both packed there once (kernels/temporal.cl's layout), for every window
// that holds the frame.
struct FrameShape {
  int width = 0, height = 0, planes = 0;
  bool normal = false, depth = false, albedo = false;
  int motion = 0;   // channels: 2 (towards the previous frame), 4, or 0
  int colours = 0;  // of the planes, those of colour (an alpha plane follows them)
};
struct DenoisedFrame {
  Image colour;
  Guides guides;
  // On a device: the pack, and the shape of what it holds (the host's images then let go).
  cl::Buffer pack;
  FrameShape packed;

  FrameShape shape() const;
};

// The frame packed on `device` (its colour, then the guide planes, zero where absent).
cl::Buffer upload_frame(Device& device, const DenoisedFrame& frame);

// Frame `window[centre]` blended with the others (null: a frame that does not exist). Every
// frame has the same size; a frame followed past its neighbour needs its motion (unless
// zero_motion). The result has the centre's planes: colour, and alpha where it has it.
Image temporal_blend_reference(const std::vector<const DenoisedFrame*>& window, int centre,
                               const TemporalParams& params);
// The same on `device`, into `result` (the centre's denoised image there, whole).
void temporal_blend_device(Device& device, const std::vector<const DenoisedFrame*>& window,
                           int centre, const TemporalParams& params, DeviceImage& result);

// denoise:temporal=N around `per_frame` (the stage with the same parameters, temporal=0).
std::unique_ptr<Stage> make_temporal_denoise(std::string spec,
                                             std::shared_ptr<const Stage> per_frame,
                                             TemporalParams params, GuideSources sources);

}  // namespace halo
