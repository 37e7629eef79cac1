// Running one file through a pipeline, as `halo run` does: the chain completed with the colour
// stages halo adds, a plan made from the file's headers before any pixel (the pipeline bound to
// the file, the output's sample type, a smaller decode), then the file streamed into its output
// with its metadata, placement and carried EXR layers. The command line, the jobs of a batch,
// the device pool and the reports stay with the app.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cl/device.hpp"
#include "io/image_io.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/stream.hpp"

namespace halo {

class InputStream;

// What halo adds around the user's stages.
struct ColourChoices {
  bool linear = false;          // --linear: linear first, srgb last
  bool straight_alpha = false;  // --straight-alpha: colour filtered as stored
};

// How a file holds alpha: straight (8/16-bit files: colour as seen) or associated (float
// files, EXR: colour premultiplied already).
enum class AlphaForm { none, straight, associated };

// The stages halo adds around the user's: for images with alpha, premultiply before the first
// stage that mixes neighbours and unpremultiply after the last, so alpha is filtered with the
// colour (unless straight alpha is asked for, a stage makes grey, the chain places them
// itself, or a guided stage keeps alpha apart: denoise; for associated alpha the pair only
// lets alpha through the filters, no sample changes); with `linear`, linear first and srgb last
// (float data passes them unchanged).
std::vector<StageSpec> with_colour_stages(std::vector<StageSpec> specs,
                                          const ColourChoices& choices, AlphaForm alpha);

// A run's pipeline in the forms its files need, each checked once before any file is read.
struct RunPipelines {
  const Pipeline& plain;             // images without alpha
  const Pipeline& straight_alpha;    // 8/16-bit images with alpha
  const Pipeline& associated_alpha;  // float images with alpha
};

// What a run asks of every file it writes.
struct FileRunOptions {
  std::vector<std::string> specs;    // as run, for the output's ImageHistory line
  std::string software;              // the output's Software attribute ("halo 1.0.0")
  bool strip_metadata = false;       // the input's metadata left out
  std::vector<std::string> attribs;  // NAME=VALUE set on the output
  bool auto_orient = false;          // an orient stage first
  bool drop_layers = false;          // an EXR output keeps only the filtered channels
  std::string background = "0";      // a format without alpha: colour over this (flatten)
  std::optional<SampleType> type;    // of the output's samples; none: the input's
  // strip_rows 0: chosen from the memory budget; verify: only where the file runs on a device;
  // keep_flags, in_flight and lanes are the file's own (FileNames, the device, workers).
  StreamOptions stream;
  WriteOptions encoding;  // threads 0: this file's share of the cores
  int workers = 1;        // files at once: each takes its share of memory, lanes and cores
};

// One file: its input and the channels picked from it ("[R,G,B]", empty: the colour ones), its
// output, whether the guided stages' discontinuity flags are kept for writing (write_flags).
struct FileNames {
  std::string input;
  std::string channels;
  std::string output;
  bool keep_flags = false;
};

// A file's plan, from its headers: the opened input, which pipeline runs it (the run's, the one
// for images with alpha, or one bound to the file: --auto-orient, icc, flatten for an output
// that cannot store alpha), the stages its other layers go through, the output as the chain
// describes it (size, placement, metadata, sample type), the decode size and the colour samples
// the work counts (what `--device auto` weighs). run_file only streams it.
class FilePlan {
 public:
  FilePlan(const FileNames& names, const RunPipelines& pipelines, const FileRunOptions& options);
  ~FilePlan();
  FilePlan(const FilePlan&) = delete;
  FilePlan& operator=(const FilePlan&) = delete;

  // The input, opened once by the plan (again only to decode it at 1/shrink); a second run of
  // the file (the reference after a device failed) reads it again from its first row.
  InputStream& input();

  const Pipeline& pipeline() const { return own_ ? *own_ : *shared_; }
  // The pipeline's stages that move pixels, for the file's other channels (CarriedLayers).
  const Pipeline& moving() const { return moving_; }
  SampleType type() const { return type_; }
  // The output image: its size (the chain folded over the decoded input), its placement in an
  // EXR's windows where it keeps one, and its metadata (ICC tag, Orientation, history).
  Size output_size() const { return output_size_; }
  const std::optional<Placement>& placement() const { return placement_; }
  const Metadata& metadata() const { return metadata_; }
  // The input's channels besides the picked ones, which an EXR output carries (and the share
  // of the file's memory the picked ones' strips keep while they do); none: carried is false.
  bool carries_layers() const { return carries_layers_; }
  double picked_share() const { return picked_share_; }
  // Whether the output's format cannot store the input's alpha, so flatten ends the pipeline.
  bool flattens() const { return flattens_; }
  double samples() const { return samples_; }

 private:
  void describe(const FileNames& names, const FileRunOptions& options);

  std::unique_ptr<InputStream> input_;
  bool read_ = false;  // input() was handed out: the next reads start over
  const Pipeline* shared_;
  std::optional<Pipeline> own_;
  Pipeline moving_;
  SampleType type_ = SampleType::f32;
  bool flattens_ = false;
  double samples_ = 0;
  Size output_size_;
  std::optional<Placement> placement_;
  Metadata metadata_;
  bool carries_layers_ = false;
  double picked_share_ = 1;
};

// Streams the file through its plan on `device` (nullptr: the reference) into its output,
// written atomically.
StreamResult run_file(const FileNames& names, FilePlan& plan, const FileRunOptions& options,
                      Device* device);

// Writes the discontinuity flags of the first guided stage that computed any; a Usage error
// when none did.
void write_flags(const Pipeline& pipeline, const std::vector<StageRun>& runs,
                 const std::string& path);

}  // namespace halo
