// Reading and writing image files: PNG, EXR, TIFF, JPEG (and whatever else the installed
// OpenImageIO reads) through OpenImageIO, PFM through halo's own code.
#pragma once

#include <string>
#include <vector>

#include "core/image.hpp"

namespace halo {

// What a file stores, which is also what `--type` asks for. Half data is widened to float in
// memory and narrowed again when written.
enum class SampleType { u8, u16, half, f32 };

SampleType parse_sample_type(const std::string& name);  // u8|u16|half|float (Usage error else)
std::string to_string(SampleType type);
PixelType pixel_type(SampleType type);  // the in-memory type that holds it

struct LoadedImage {
  PixelBuffer pixels;
  SampleType stored = SampleType::f32;
  std::vector<std::string> channel_names;  // of the selected channels, as in the file
  std::vector<std::string> file_channels;  // every channel the file has
};

// "path" or "path[ch1,ch2,...]" to pick channels by name (e.g. a layer of a multilayer EXR).
struct InputRef {
  std::string path;
  std::vector<std::string> channels;
};
InputRef parse_input_ref(const std::string& text);

// Without a channel list: RGB(A) when present (also one layer's "Layer.R/G/B/A" in multilayer
// EXR), else all channels when there are at most four. Errors: NoInput for missing or
// unreadable files, BadData for corrupt, truncated or unsupported ones. memory: where the
// samples go (nullptr: the heap; a batch on a GPU passes page-locked memory).
LoadedImage read_image(const InputRef& input, std::pmr::memory_resource* memory = nullptr);

// The nearest type the format can hold: PNG u8/u16, JPEG u8, PFM float, EXR half/float.
SampleType storable_type(const std::string& path, SampleType wanted);

// Writes atomically (temporary file, then rename). Samples are converted to `type`, which must
// be storable. CantCreate or Io errors name the file.
void write_image(const std::string& path, const PixelBuffer& pixels, SampleType type);

}  // namespace halo
