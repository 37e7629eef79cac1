// What a filter is: a parameter table, and a Stage (one parsed spec) that computes rows of its
// output either as the plain CPU reference or enqueued on an OpenCL device. Both paths get the
// same host-computed weights, so they differ only by device arithmetic.
//
// A Stage is an immutable plan (parameters, weights, kernels, its vertical reach), shared by
// every file, strip and thread; what one run needs and produces (guides, histogram counts,
// discontinuity flags) lives in that run's StageRun.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cl/device.hpp"
#include "core/image.hpp"
#include "core/placement.hpp"
#include "kernels/contract.h"
#include "spec/params.hpp"

namespace halo {

struct Guides;
struct GuideSources;
class FrameSequence;
struct DeviceGuides;
struct Histogram;
class HistogramTotals;

enum class Border {
  zero = BORDER_ZERO,
  clamp = BORDER_CLAMP,
  reflect = BORDER_REFLECT,
  wrap = BORDER_WRAP
};

Border parse_border(const std::string& name);
// Index standing in for coordinate i of a line of n pixels, -1 for "zero"; kernels/common.cl
// holds the device twin.
int border_index(int i, int n, Border border);

// Discontinuity flags of a whole image, one byte a pixel, filled strip by strip.
struct FlagImage {
  int width = 0, height = 0;
  std::vector<std::uint8_t> bits;  // row-major, width * height

  bool empty() const { return bits.empty(); }
};

// A statistic of a stage's whole input that every row of its result depends on (denoise's
// autoexposure), measured before the first strip (ScansInput).
class InputScan {
 public:
  virtual ~InputScan() = default;
  // The input's next rows, consecutive from the top and each once, as the stage sees them.
  virtual void add(const Image& rows) = 0;
};

// A result a stage measures over a whole run beside its output rows, for the caller to report
// or write: the histogram's counts, a guided stage's discontinuity flags, or any measurement
// as text (`summary`, which `halo run` prints after the file as it is).
struct SideOutput {
  std::string name;                      // "histogram", "flags", or the measurement's
  const Histogram* histogram = nullptr;  // set for "histogram"
  const FlagImage* flags = nullptr;      // set for "flags"
  std::string summary;                   // lines of text, each ending in a newline
};

// What one run of a stage keeps from strip to strip and measures (a histogram's counts and
// device totals, bilateral's flags, separable's carried rows, the denoise network's tensors).
// The stage makes and reads it (StageRun::state_as); the executor only merges the lanes',
// finishes it and compares it with the reference run's, through this interface.
class StageState {
 public:
  virtual ~StageState() = default;
  // Folds in the state another lane kept while it ran other strips of the same image.
  virtual void merge(StageState& other);
  // After the run's last strip: results kept on the device come back.
  virtual void finish(Device& device);
  // How this (device) run's side results differ from the reference run's ("" when alike).
  virtual std::string mismatch(const StageState& reference) const;
  virtual std::vector<SideOutput> side_outputs() const;
};

// One run of one stage: an image on one device, or on the reference. It holds what the executor
// owns; the stage's own part is `state`.
struct StageRun {
  StageRun();
  ~StageRun();
  StageRun(StageRun&&) noexcept;
  StageRun& operator=(StageRun&&) noexcept;

  // The rows of the strip at hand that no other strip has: what measurements count (a stage
  // also computes rows for the strips' overlap, which a neighbour counts).
  Span own;
  // Guided stages: the guides of the rows at hand (a strip's, or the whole image's), and their
  // upload when an executor shares one among stages (else the stage uploads `guides` itself).
  const Guides* guides = nullptr;
  const DeviceGuides* device_guides = nullptr;
  std::unique_ptr<DeviceGuides> uploaded;
  // Whether the caller wants side images (discontinuity flags: --verify, --write-flags);
  // measurements such as histograms are always kept.
  bool keep_flags = false;
  // Rows the stage computes for a full strip of the run (0: not known): buffers that strips
  // reuse, such as the rows pass's ring, are sized for every strip at once.
  int strip_rows = 0;
  // Stages that scan their input (ScansInput): what the scan found over the whole input, when
  // the run is strip by strip; null when the stage sees the whole image and measures it itself.
  std::shared_ptr<const InputScan> scan;
  // The stage's own state for this run, made on its first strip.
  std::unique_ptr<StageState> state;

  // The state as the stage's own type, made on first use.
  template <class State>
  State& state_as() {
    if (!state) state = std::make_unique<State>();
    return static_cast<State&>(*state);
  }
  // The side outputs of this run (none before the stage made its state), and the one named.
  std::vector<SideOutput> side_outputs() const;
  std::optional<SideOutput> side_output(const std::string& name) const;
  // After the last strip: the state's device-resident results come back.
  void finish(Device& device);
};

// How a device run's side results differ from the reference run's ("" when identical).
std::string side_results_mismatch(const StageRun& device, const StageRun& reference);
// Folds another lane's run of the same stage into `into`.
void merge_runs(StageRun& into, StageRun& other);

// What a stage may need to know of the file it runs on (BoundToFile): how its colour is
// encoded (icc's from=auto: its ICC profile, else PNG's gAMA, cHRM and sRGB chunks) and how it
// is stored turned (orient: EXIF Orientation).
struct FileFacts {
  std::string icc;
  double gamma = 0;              // PNG gAMA: the encoding's exponent (0.45455); 0: none
  std::array<double, 8> chrm{};  // PNG cHRM: white, red, green, blue as CIE x, y
  bool has_chrm = false;
  bool srgb = false;    // PNG sRGB chunk
  int orientation = 1;  // EXIF Orientation, 1..8
  // Where the stage's input lies in its frame (an EXR's windows as the stages before it moved
  // them); nothing for an input without a frame.
  std::optional<Placement> placement;
  // The frames around this one, where its name has a frame number (temporal denoising).
  std::shared_ptr<const FrameSequence> sequence;
};

// What a stage costs per output sample (one colour channel of a pixel), in nanoseconds on one
// core of the 2-core development machine (AMD EPYC, AVX-512): the plain CPU reference, and an
// OpenCL CPU device's (PoCL's) kernels. Measured on photos at the defaults (docs/performance.md,
// "Choosing the device"); --device auto compares them (pipeline/device_choice.hpp).
struct StageCost {
  double reference_ns = 10;
  double device_ns = 2;
};

// What a stage's run holds beside the strips it reads and writes, which strip planning adds up
// (the largest over the chain: stages run one after another on a strip).
struct StageMemory {
  // Float buffers of a strip's size it holds at once on a device, its input and result
  // included (a two-pass filter: input, temporary, result, and the one the executor keeps).
  int strip_buffers = 4;
  // The share of the file's memory budget (--max-memory over -j) its own working set takes
  // (the denoise network's tiles and tensors: half); strips are planned in the rest.
  double budget_share = 0;
  // Float planes of the whole image it holds beside its strips (temporal denoising's window
  // of frames), counted before any strip is planned.
  int image_planes = 0;
};

// What a stage declares of itself, for planning a pipeline and its strips.
struct StageTraits {
  // Rows above and below an output row that the stage reads (guides included): a strip's
  // output rows [a, b) need its input rows [a - reach, b + reach).
  int reach = 0;
  // Changes the image's size (crop, pad, resize, turns): it computes its result's rows only,
  // in an image of its output's width and height (describe), reading the input rows
  // input_rows names; stages after it see that size.
  bool resizes = false;
  // Only moves samples (mirrors, turns by 90, orient): a decoder's shrink passes through it to
  // the next stage (Pipeline::decode_shrink).
  bool moves_samples = false;
  // Only multiplies colour by alpha (premultiply): a shrink that averages colour weighted by
  // alpha (DecodeShrink::blocks) passes through it, the same as shrinking after it.
  bool associates_alpha = false;
  // Measures the image (histogram): none may come before a stage that resizes, whose strips
  // read only the rows the output shows.
  bool measures = false;
  // Recomputes many rows at each strip's edges (a large reach): wants strips as tall as the
  // memory limits allow instead of cache-sized ones.
  bool tall_strips = false;
  // Reads other frames of its file's sequence from their files, as they are stored
  // (denoise:temporal): no stage may come before it, or its input and theirs would differ.
  bool reads_frames = false;
  // Per output sample, for --device auto's estimates.
  StageCost cost;
  StageMemory memory;
};

// An image as planning sees it pass from stage to stage (Pipeline::describe folds the chain).
struct ImageDesc {
  Size size;
  // Where its top-left pixel lies in the pipeline's input, while only windows were cut out of
  // it or margins added around it (crop, pad): an output that keeps EXR's windows moves its
  // data window by it, inside the same display window. Nothing once another stage changed the
  // size otherwise (the windows no longer fit).
  std::optional<std::array<int, 2>> origin = std::array<int, 2>{0, 0};
  // The data and display windows (EXR) as the stages moved them: a crop's or pad's data window
  // moves inside the same frame, a mirror mirrors it in the frame, a quarter turn turns both,
  // a resize scales both, a turn by another angle keeps the frame and makes the data window
  // the turned box (as oiiotool does). Nothing when the input has no frame, or once a stage
  // changed the size in a way the windows cannot say (orient's transposing orientations).
  std::optional<Placement> placement;
  // The ICC profile a stage converted the colour to (the output is tagged with it in place of
  // the input's); nothing while the colour is the input's.
  std::optional<std::string> icc;
  // A stage put the image upright (orient): the output's EXIF Orientation becomes 1.
  bool upright = false;
};

class Stage {
 public:
  explicit Stage(std::string spec) : spec_(std::move(spec)) {}
  virtual ~Stage() = default;

  const std::string& spec() const { return spec_; }
  virtual StageTraits traits() const = 0;
  // The image the stage makes of `in`: its size, window, colour profile, orientation.
  virtual ImageDesc describe(const ImageDesc& in) const { return in; }
  // The input rows that output rows `out` read, for an input of size `in`: `out` widened by
  // the reach unless the stage resizes.
  virtual Span input_rows(Span out, Size in) const { return out.widened(reach(), in.height); }
  // Why the stage cannot run strip by strip on images of this source type ("" when it can).
  virtual std::string whole_image_reason(PixelType source) const;
  // What the stage resolved to (the kernel it runs, rank-1 decisions), for --verbose.
  virtual std::vector<std::string> details(const StageRun& run) const;

  // Computes the image rows `out` from `in`, whose rows must include input_rows(out) (within
  // the image). The result has in's rows; only `out` among them is defined (a stage that
  // resizes: an image of its output's size holding rows `out`). A stage that carries rows
  // (CarriesRows) takes on the device an `in` that starts below them, and its result then
  // holds the rows `out`.
  virtual Image reference_rows(const Image& in, Span out, StageRun& run) const = 0;
  // The same computed in `image` itself, which the caller then drops as input (the host's
  // strips): true when done, false to call reference_rows. For stages whose output sample is
  // a function of the input's at the same place (pointwise), which then copy no strip.
  virtual bool reference_in_place(Image& /*image*/, Span /*out*/, StageRun&) const { return false; }
  virtual DeviceImage enqueue_rows(Device& device, const DeviceImage& in, Span out,
                                   StageRun& run) const = 0;

  // Shorthands of the declarations above.
  int reach() const { return traits().reach; }
  bool resizes() const { return traits().resizes; }
  Size output_size(Size in) const { return describe(ImageDesc{in}).size; }
  // Where output row y's share of the input begins (row ownership across strips: an
  // increasing map into the input's rows 0..height): y moved by the window the stage cuts or
  // pads (describe's origin), else proportional.
  int input_row(int y, Size in, Size out) const;
  std::vector<std::string> details() const { return details(StageRun()); }
  // Guided stages (Guided): where their guides come from; nullptr for the others.
  const GuideSources* guide_sources() const;

  // The whole image at once (a stage that resizes: the whole output).
  Image reference(const Image& in, StageRun& run) const;
  Image reference(const Image& in) const;
  DeviceImage enqueue(Device& device, const DeviceImage& in, StageRun& run) const;
  DeviceImage enqueue(Device& device, const DeviceImage& in) const;

 private:
  // The rows a whole-image call computes: the input's `in`, or a resizing stage's whole output.
  Span whole_output(Span in, Size size) const;

  std::string spec_;
};

// The image a stage that resizes makes: of size `size`, its windows no longer the input's.
ImageDesc resized(const ImageDesc& in, Size size);

// Optional facets: a stage that has one derives from it beside Stage, and the pipeline asks
// for it with facet<F>(stage).
template <class Facet>
const Facet* facet(const Stage& stage) {
  return dynamic_cast<const Facet*>(&stage);
}

// Stages that read guide images (bilateral, atrous, denoise).
class Guided {
 public:
  virtual ~Guided() = default;
  virtual const GuideSources& sources() const = 0;
};

// Stages whose every output row depends on their whole input (denoise's autoexposure, a
// histogram measured before the first strip): a scan to fill with the input's rows before the
// first strip, for an input of this size and source type; nullptr when they need none. Only a
// pipeline's first stage can be streamed so (Pipeline::whole_image_reason).
class ScansInput {
 public:
  virtual ~ScansInput() = default;
  virtual std::shared_ptr<InputScan> scan(int width, int height, PixelType source) const = 0;
};

// Stages that, run strip after strip on `device` with one StageRun, keep what they computed
// from the input rows two strips share (in their StageState), so that a later strip's input
// needs only the rows the one before did not have (StripPlan's carried form).
class CarriesRows {
 public:
  virtual ~CarriesRows() = default;
  virtual bool carries_rows(const Device& device) const = 0;
};

// Stages that depend on the file they run on (icc's from=auto, orient, linear/srgb's
// curve=auto): the stage for that file; nullptr when this one serves.
class BoundToFile {
 public:
  virtual ~BoundToFile() = default;
  virtual std::unique_ptr<Stage> for_file(const FileFacts& file) const = 0;
};

// How an input can be shrunk while it is read: `dct` by 2, 4 or 8 in the decoder (libjpeg's
// DCT scaling, libwebp's scaler); `blocks` by any whole factor, averaging blocks of pixels
// with colour weighted by alpha (shrink_by_blocks in lib/io, for every other format).
enum class DecodeShrink { dct, blocks };

// Stages that shrink their input anyway (thumbnail): the largest factor `how` allows by which
// the input of size `in` may be shrunk as it is read, when that leaves the output's size as it
// would be and at least twice the output's pixels each way (a JPEG decoded at 1/8 through DCT
// scaling, a PNG's blocks averaged, as vipsthumbnail does); 1: none.
class ShrinksOnLoad {
 public:
  virtual ~ShrinksOnLoad() = default;
  virtual int decode_shrink(Size in, DecodeShrink how) const = 0;
  // The stage for its input of size `in` read at 1/shrink, each side rounded up: where
  // `shrink` does not divide a side, the last block holds less than a whole one, so the image
  // spans in/shrink of the shrunk pixels, not all of them, and the output maps onto that span.
  virtual std::unique_ptr<Stage> read_shrunk(Size in, int shrink) const = 0;
};

// Stages whose device arithmetic is stated to differ from the reference by more than --verify's
// tolerance on some devices (denoise's tensor cores, colour transforms' LUTs): the tolerance
// they are held to on `device` instead of the one given.
class StatesTolerance {
 public:
  virtual ~StatesTolerance() = default;
  virtual double verify_tolerance(const Device& device, double given) const = 0;
};

// `stage` bound to `file` (BoundToFile), or nullptr when it serves as it is.
std::unique_ptr<Stage> for_file(const Stage& stage, const FileFacts& file);

// The tolerance --verify holds `stage` to on `device`.
double verify_tolerance(const Stage& stage, const Device& device, double given);

struct FilterDef {
  std::string name;
  std::string summary;
  std::vector<Param> params;
  std::vector<std::string> notes;  // kernels used, cost, for `halo filters`
  std::string example;             // a typical spec, shown in `halo filters`
  std::function<std::unique_ptr<Stage>(const Args&)> make;
  // Whether an output pixel depends on other pixels: halo run premultiplies alpha around the
  // stages that do (histogram and the pointwise stages do not).
  bool mixes_neighbours = true;
  // Whether it premultiplies or divides colour by alpha itself: halo run then adds neither
  // around the chain (the user placed them).
  bool handles_alpha = false;
  // Whether its stages weigh colour against guide images (the Guided facet): they work on
  // exactly the colour channels, so halo run adds no premultiplication around the chain.
  // tests/engine/registry_test.cpp holds it to the stage its example makes.
  bool guided = false;
  // Whether its guided stages filter a plane after the colour (alpha, between premultiply and
  // unpremultiply) with the colour's own weights, demodulating and clamping only the colour:
  // halo run then puts associated alpha around them as around any filter (bilateral, atrous;
  // not the denoise network, which takes exactly 3 colour channels).
  bool filters_alpha = false;
  // Whether the registry-wide tests sweep it over every size, border, channel count and strip
  // height (tests/engine/registry_test.cpp, strips_test.cpp). The denoise network is not: a
  // tile there costs its whole receptive field (a strip of one row, 220 rows), so its own tests
  // cover the same properties on sizes it can afford.
  bool swept = true;
};

// border_index for coordinates -r .. n-1+r, indexed from 0: what a reference's taps look up.
std::vector<int> border_table(int n, int r, Border border);
// The same for rows of a strip: entry i stands for image row first - r + i, given as a row of
// `in` (image row minus in.y0()), -1 for "zero".
std::vector<int> row_table(const Image& in, Span rows, int r, Border border);

// Why a border rule cannot stream ("" when it can): wrap reads the image's other edge.
std::string border_whole_image_reason(Border border);

// Weights as both paths use them: each value divided by scale, rounded once to float.
std::vector<float> scaled_weights(const std::vector<double>& values, double scale);
// scale=auto: the sum of the values, or 1 when they sum to 0 (edge and emboss kernels).
double sum_or_one(const std::vector<double>& values);

// A window of `desc` that starts (dx, dy) from its top-left pixel becomes the image (crop, pad):
// its origin and its data window move by that much.
void move_window(ImageDesc& desc, int dx, int dy);

// Copies the alpha plane (if any) from in to out unchanged (nothing to do when out is in's
// own buffer).
void copy_alpha(const Image& in, Image& out);
void copy_alpha(Device& device, const DeviceImage& in, DeviceImage& out);

// The image a reference stage writes rows `out` of its result into: src's rows, width and
// source, `channels` planes; rows `out` unset (the stage writes every sample of them, and a
// strip's planes cost no pass over their memory), the others zero, as on the device.
Image result_like(const Image& src, int channels, bool alpha, Span out);

// The image a stage writes its result into: src's own buffer when the caller drops src after
// the stage (DeviceImage::scratch; one strip buffer less, which on a CPU device is host
// memory), else a new image like it. Only for stages whose kernels read src no more once the
// result is being written (two passes through a temporary).
DeviceImage result_for(Device& device, const DeviceImage& src);
// The same for a result holding the image rows `rows` (other rows than src's): src's buffer
// when scratch and large enough.
DeviceImage result_for(Device& device, const DeviceImage& src, Span rows);
// The result of a stage that resizes: the rows `out` of an image of size `size`, src's channels
// and source.
DeviceImage resized_result(Device& device, const DeviceImage& src, Size size, Span out);

}  // namespace halo
