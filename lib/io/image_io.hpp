// Whole images in and out of files (io/codec.hpp reads and writes them by rows), and which of a
// file's channels an input uses.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/image.hpp"
#include "core/limits.hpp"
#include "io/codec.hpp"

namespace halo {

struct LoadedImage {
  PixelBuffer pixels;
  SampleType stored = SampleType::f32;
  std::vector<std::string> channel_names;  // of the selected channels, as in the file
  std::vector<std::string> file_channels;  // every channel the file has
  int subimages = 1;                       // the file's parts; InputRef's part is read
  std::shared_ptr<MemoryHold> hold;        // the pixels' bytes, taken from --max-memory
};

// "path" or "path[ch1,ch2,...]" to pick channels by name (e.g. a layer of a multilayer EXR).
struct InputRef {
  std::string path;
  std::vector<std::string> channels;
  ImagePart part;  // which image of a multi-part or mipmapped file
  // The file as opened and checked already, read instead of opening `path` again; null: the
  // reader opens `path`.
  std::shared_ptr<const CheckedFile> file;
};
InputRef parse_input_ref(const std::string& text);
// The file `input` names: InputRef::file where it was opened already, else opened and checked
// now (CheckedFile::open's errors).
std::shared_ptr<const CheckedFile> opened_file(const InputRef& input);

// The channels an input uses. Without a channel list: RGB(A) when present (also one layer's
// "Layer.R/G/B/A" in multilayer EXR), else all channels when there are at most four. Usage
// error for a channel the file does not have.
struct ChannelChoice {
  std::vector<int> picked;         // indices into the file's channels
  std::vector<std::string> names;  // their names
  bool alpha = false;              // the last one is alpha
};
ChannelChoice choose_channels(const ImageHeader& header, const InputRef& input);

// Reads the next `count` rows of the reader's channels `picked`, interleaved, as `type`.
void read_picked(ImageReader& reader, const std::vector<int>& picked, int count, PixelType type,
                 std::byte* out);

// Errors: NoInput for missing or unreadable files, BadData for corrupt, truncated or unsupported
// ones. memory: where the samples go (nullptr: the heap; a batch on a GPU passes page-locked
// memory).
LoadedImage read_image(const InputRef& input, std::pmr::memory_resource* memory = nullptr);

// Writes atomically (temporary file, then rename). Samples are converted to `type`, which must
// be storable. CantCreate or Io errors name the file.
void write_image(const std::string& path, const PixelBuffer& pixels, SampleType type,
                 const WriteOptions& options = {});

// An output written strip by strip: created (as a temporary beside it) at the first rows,
// whose channel count the filters decide, and renamed into place by commit(); dropped
// without commit(), it leaves nothing behind.
class OutputImage {
 public:
  // metadata: stored as far as the format holds it (an ICC profile only when it fits the
  // channels the filters produce).
  OutputImage(std::string path, int width, int height, SampleType type, WriteOptions options,
              Metadata metadata = {});
  ~OutputImage();
  // Names for the channels (before the first rows), for formats that keep names (EXR).
  void name_channels(std::vector<std::string> names) { channel_names_ = std::move(names); }
  // Each channel's stored type (before the first rows), for formats that mix them (EXR: half
  // beside float); unset, every channel is `type`.
  void type_channels(std::vector<SampleType> types) { channel_types_ = std::move(types); }
  // The input's data and display windows (before the first rows), for formats that keep them
  // (EXR, TIFF); a warning says when the output's format cannot.
  void place(const Placement& placement);
  // The image rows `rows`, in order, as samples of pixel_type(type).
  void write(Span rows, const PixelBuffer& pixels);
  void commit();

 private:
  std::string path_;
  int width_, height_;
  SampleType type_;
  WriteOptions options_;
  Metadata metadata_;
  std::vector<std::string> channel_names_;
  std::vector<SampleType> channel_types_;
  Placement placement_;
  std::unique_ptr<class AtomicOutput> file_;
  std::unique_ptr<ImageWriter> writer_;
};

}  // namespace halo
