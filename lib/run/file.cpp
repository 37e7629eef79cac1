// One file through a pipeline: the plan from its headers, then the stream into its output.
#include "run/file.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "core/limits.hpp"
#include "filters/registry.hpp"
#include "io/codec.hpp"
#include "io/metadata.hpp"
#include "pipeline/strips.hpp"
#include "run/input_stream.hpp"
#include "run/layers.hpp"
#include "run/sequence.hpp"
#include "spec/spec.hpp"

namespace halo {

namespace {

// The type each of `channels` has in the input (half stays half beside float, as oiiotool
// keeps it), `otherwise` for a channel the input does not have.
std::vector<SampleType> stored_types(const ImageHeader& input,
                                     const std::vector<std::string>& channels,
                                     SampleType otherwise) {
  std::vector<SampleType> types;
  for (const std::string& name : channels) {
    const auto at = std::find(input.channels.begin(), input.channels.end(), name);
    const std::size_t k = std::size_t(at - input.channels.begin());
    types.push_back(at == input.channels.end()       ? otherwise
                    : k < input.channel_types.size() ? input.channel_types[k]
                                                     : input.stored);
  }
  return types;
}

// Whether a stage turns colour into luminance (gray=1, emboss's default): such a chain keeps
// alpha apart, as before, since one grey plane cannot be divided back into colour.
bool makes_gray(const Spec& parsed, const FilterDef& def) {
  for (const auto& param : def.params)
    if (param.name == "gray") {
      std::string value = param.fallback;
      for (const auto& [key, given] : parsed.options)
        if (key == "gray") value = given;
      return value == "1" || value == "true" || value == "yes";
    }
  return false;
}

// The output's metadata: the input's (unless stripped), what halo did (Software and a line of
// ImageHistory, as oiiotool records it), then the attributes asked for.
Metadata output_metadata(const Metadata& input, const FileRunOptions& o) {
  Metadata m = o.strip_metadata ? Metadata{} : input;
  m.set_text("Software", o.software);
  std::string line = "halo run";
  for (const auto& spec : o.specs) line += " -f " + spec;
  const std::string* history = m.text("ImageHistory");
  m.set_text("ImageHistory", history && !history->empty() ? *history + "\n" + line : line);
  std::vector<Attribute> exif_attribs;  // attributes that an EXIF block holds
  for (const auto& text : o.attribs) {
    const Attribute a = parse_attrib(text);
    m.set(a);
    Metadata probe;
    probe.set(a);
    if (!exif_from_text(probe).empty() || a.name.starts_with("Exif:")) exif_attribs.push_back(a);
  }
  // The input's EXIF block is kept whole; what an attribute sets in it is written into it
  // (through OpenImageIO, loaded only then), so JPEG and PNG outputs do not keep the old value
  // there.
  if (!m.exif.empty() && !exif_attribs.empty())
    m.exif = oiio_codecs().update_exif(m.exif, exif_attribs);
  return m;
}

// -v: what each stage resolved to, with the guides of this input.
void log_details(const Pipeline& pipeline, const InputStream& in, const std::string& path) {
  for (std::size_t i = 0; i < pipeline.stages().size(); ++i) {
    StageRun described;
    Guides guides;  // only which guides exist and where from matter to details()
    const int set = pipeline.guide_set(i);
    if (set >= 0) {
      const auto& shape = in.input().guide_shapes[set];
      if (shape.normal) guides.normal = Image(1, 1, shape.normal);
      if (shape.depth) guides.depth = Image(1, 1, shape.depth);
      if (shape.albedo) guides.albedo = Image(1, 1, shape.albedo);
      if (shape.motion) guides.motion = Image(1, 1, shape.motion);
      guides.described = shape.described;
      described.guides = &guides;
      if (!guides.any_geometry())
        spdlog::info("{}: no normal or depth guides in {}; self-guided",
                     pipeline.stages()[i]->spec(), path);
    }
    for (const auto& detail : pipeline.stages()[i]->details(described))
      spdlog::info("{}: {}", pipeline.stages()[i]->spec(), detail);
  }
}

// Where the output's pixels lie: the input's data and display windows as the stages moved
// them (ImageDesc::placement); an input without a frame keeps what it says while the size is
// kept; nothing once a stage changed the size in a way the windows cannot follow.
std::optional<Placement> output_placement(const Pipeline& pipeline, const ImageDesc& out,
                                          Placement input) {
  if (input.full_width > 0) return out.placement;
  if (!pipeline.resizes()) return input;
  return std::nullopt;
}

// An output converted to another colour profile (icc) is tagged with it; PNG's colour chunks
// described the input's encoding and go. An output put upright says so.
void describe_output(Metadata& metadata, const ImageDesc& out) {
  if (out.icc) {
    metadata.icc = *out.icc;
    metadata.png_colour = {};
  }
  if (out.upright) mark_upright(metadata);
}

// What stages bound to a file need to know of it (BoundToFile).
FileFacts file_facts(const Metadata& m) {
  return {.icc = m.icc,
          .gamma = m.png_colour.gamma,
          .chrm = m.png_colour.chrm,
          .has_chrm = m.png_colour.has_chrm,
          .srgb = m.png_colour.srgb_intent >= 0,
          .orientation = orientation(m)};
}

// `pipeline` for one file: after an `orient` stage (--auto-orient), its stages bound to the
// file where they depend on it (BoundToFile; each told where its input lies in the frame, as
// the stages before it moved it), the others shared with `pipeline`, then `last` if given.
// Nothing when it is `pipeline` as it is.
std::optional<Pipeline> for_file(const Pipeline& pipeline, bool auto_orient,
                                 const Metadata& metadata, ImageDesc given,
                                 std::unique_ptr<Stage> last,
                                 std::shared_ptr<const FrameSequence> sequence) {
  FileFacts facts = file_facts(metadata);
  facts.sequence = std::move(sequence);
  Pipeline result;
  bool changed = auto_orient || last;
  if (auto_orient) {
    auto orient = make_stage(implied::upright());
    auto upright = halo::for_file(*orient, facts);
    result.append(upright ? std::move(upright) : std::move(orient));
    given = result.stages().back()->describe(given);
  }
  for (const auto& stage : pipeline.stages()) {
    facts.placement = given.placement;
    auto bound = halo::for_file(*stage, facts);
    changed = changed || bound;
    result.append(bound ? std::shared_ptr<const Stage>(std::move(bound)) : stage);
    given = result.stages().back()->describe(given);
  }
  if (!changed) return std::nullopt;
  if (last) result.append(std::move(last));
  return result;
}

// The input as the first stage sees it: its size and, in a frame, where it lies.
ImageDesc input_desc(const InputStream& in) {
  ImageDesc given{{in.input().width, in.input().height}};
  if (in.header().placement.full_width > 0) given.placement = in.header().placement;
  return given;
}

}  // namespace

std::vector<StageSpec> with_colour_stages(std::vector<StageSpec> specs,
                                          const ColourChoices& choices, AlphaForm alpha) {
  // Each spec parsed once; the questions are answered by its definition.
  std::vector<std::size_t> mixing;  // the specs whose stages mix neighbours
  bool placed = false;  // a stage places alpha itself, makes grey, or keeps it apart (denoise)
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const Spec parsed = parse_spec(specs[i].text);
    const FilterDef* def = find_filter(parsed.name);
    if (!def) continue;  // an unknown name, refused when the pipeline is built
    if (def->mixes_neighbours) mixing.push_back(i);
    placed = placed || def->handles_alpha || (def->guided && !def->filters_alpha) ||
             makes_gray(parsed, *def);
  }
  if (alpha != AlphaForm::none && !choices.straight_alpha && !placed && !mixing.empty()) {
    const bool associated = alpha == AlphaForm::associated;
    specs.insert(specs.begin() + std::ptrdiff_t(mixing.back() + 1),
                 {implied::unpremultiply(associated), "associated alpha"});
    specs.insert(specs.begin() + std::ptrdiff_t(mixing.front()),
                 {implied::premultiply(associated), "associated alpha"});
  }
  if (choices.linear) {
    specs.insert(specs.begin(), {implied::decode_curve(), "--linear"});
    specs.push_back({implied::encode_curve(), "--linear"});
  }
  return specs;
}

FilePlan::FilePlan(const FileNames& names, const RunPipelines& pipelines, const FileRunOptions& o)
    : input_(std::make_unique<InputStream>(parse_input_ref(names.input + names.channels),
                                           pipelines.plain.guide_sets())),
      shared_(&pipelines.plain) {
  const InputStream& probe = *input_;
  // Straight alpha is what 8/16-bit files (PNG, TIFF) store; float files (EXR) hold colour
  // premultiplied already.
  if (probe.input().alpha)
    shared_ = pixel_type(probe.stored()) == PixelType::f32 ? &pipelines.associated_alpha
                                                           : &pipelines.straight_alpha;
  // A format without alpha (JPEG) takes the colour over the background instead of refusing.
  flattens_ = probe.input().alpha && !stores_alpha(names.output);
  own_ = for_file(*shared_, o.auto_orient, probe.header().metadata, input_desc(probe),
                  flattens_ ? make_stage(implied::flatten(o.background)) : nullptr,
                  std::make_shared<FileSequence>(names.input, names.channels));
  moving_ = moving_stages(this->pipeline(), file_facts(probe.header().metadata));
  const SampleType requested = o.type.value_or(probe.stored());
  type_ = storable_type(names.output, requested);
  if (type_ != requested)
    spdlog::info("{}: writing {} samples (the format cannot store {})", names.output,
                 to_string(type_), to_string(requested));
  log_details(this->pipeline(), probe, names.input);
  const Size stored{probe.input().width, probe.input().height};
  // The input read at 1/shrink of its size, when the first stages shrink it anyway: decoded
  // smaller where its decoder can, else through averaged blocks. Not an image placed in a
  // larger frame (an EXR's data window), whose coordinates would no longer fit it.
  const ImageHeader& header = probe.header();
  const DecodeShrink how = header.can_shrink ? DecodeShrink::dct : DecodeShrink::blocks;
  const bool shrinks_whole = header.shrinks_whole;  // read before the input is opened again
  int shrink = 1;
  if (this->pipeline().guide_sets().empty() &&
      !header.placement.placed(stored.width, stored.height))
    shrink = this->pipeline().decode_shrink(stored, how);
  samples_ = double(stored.width) * stored.height / (shrink * shrink) *
             (probe.input().channels - (probe.input().alpha ? 1 : 0));
  if (shrink > 1) {
    if (how == DecodeShrink::dct)
      spdlog::info("{}: decoded at 1/{} of its size (the first stages shrink it more)", names.input,
                   shrink);
    else
      spdlog::info(
          "{}: read at 1/{} of its size, blocks of {}x{} pixels averaged (the first "
          "stages shrink it more)",
          names.input, shrink, shrink, shrink);
    // A decoder shrinks from its first row only (libjpeg's scale is set before decoding).
    InputRef ref = parse_input_ref(names.input + names.channels);
    ref.file = input_->file();
    input_ = std::make_unique<InputStream>(ref, this->pipeline().guide_sets(), shrink);
    // Blocks (libjpeg's DCT blocks, halo's averaged ones) that the factor does not divide
    // leave a partial last block: the image spans stored/shrink of the shrunk pixels.
    if (!shrinks_whole) own_ = this->pipeline().read_shrunk(stored, shrink);
  }
  describe(names, o);
}

void FilePlan::describe(const FileNames& names, const FileRunOptions& o) {
  const InputStream& in = *input_;
  const ImageDesc described = pipeline().describe(input_desc(in));
  output_size_ = described.size;
  metadata_ = output_metadata(in.header().metadata, o);
  describe_output(metadata_, described);
  // Stages such as crop change the image's size; the input's data and display windows then
  // no longer fit it.
  placement_ = output_placement(pipeline(), described, in.header().placement);
  // An EXR output keeps the input's other channels (layers) beside the filtered ones; the
  // stages that move pixels move them too, in a stream that takes their share of the memory.
  const std::size_t all = in.header().channels.size(), picked = in.channels().picked.size();
  carries_layers_ = !o.drop_layers && extension(names.output) == ".exr" &&
                    pixel_type(type_) == PixelType::f32 && all > picked;
  if (carries_layers_ && !moving_.stages().empty()) picked_share_ = double(picked) / double(all);
}

FilePlan::~FilePlan() = default;

InputStream& FilePlan::input() {
  if (read_) input_->input().rewind();
  read_ = true;
  return *input_;
}

// A run in one strip reads the filtered channels to the end before the carried layers' reader
// starts, which then decodes every chunk again unless the first reader's are kept: the bytes
// to keep for that (every channel as float at most; 0 when there is no such second reader).
// They are reserved with the file's strips when both fit its budget (a 1080p 11-channel ZIP
// EXR through a whole-image box on the reference: 0.75 -> 0.63 s, +55 MB).
std::size_t decoded_to_keep(InputStream& in, const std::optional<CarriedLayers>& layers,
                            bool whole) {
  if (!whole || !layers || layers->carried() == 0 || layers->moved()) return 0;
  const StreamInput& input = in.input();
  return std::size_t(input.width) * std::size_t(input.height) * in.header().channels.size() *
         sizeof(float);
}

StreamResult run_file(const FileNames& names, FilePlan& plan, const FileRunOptions& o,
                      Device* device) {
  const Pipeline& pipeline = plan.pipeline();
  const SampleType type = plan.type();
  InputStream& in = plan.input();
  const StreamInput& input = in.input();
  const std::size_t picked = in.channels().picked.size();
  const double share = plan.picked_share();
  std::optional<CarriedLayers> layers;
  if (plan.carries_layers()) layers.emplace(in.file(), in.channels(), plan.moving(), 1 - share);
  StreamOptions options = o.stream;
  options.verify = o.stream.verify && device;
  options.keep_flags = names.keep_flags;
  options.in_flight = in_flight_for(device);
  options.lanes = lanes_for(device, o.workers);
  // The files of a batch draw on --max-memory as a pool: a file plans within its share, or
  // within the whole budget when its share is too little, and reserves what its strips hold.
  const auto strips_within = [&](std::size_t budget) {
    StripLimits limits = strip_limits(device);
    limits.host_bytes = std::size_t(double(budget ? budget : limits.host_bytes) * share);
    return size_strips(pipeline, input, pixel_type(type), limits);
  };
  std::optional<MemoryReservation> reservation;
  const std::string whole_why = pipeline.whole_image_reason(input.type);
  std::size_t kept = 0;  // decoded bytes kept for the carried layers' reader
  if (options.strip_rows == 0) {
    std::size_t budget = 0;  // the share
    StripSizing strips;
    try {
      strips = strips_within(0);
    } catch (const Error& e) {
      if (o.workers == 1 || e.kind() != ErrorKind::BadData)
        throw Error(e.kind(), names.input + ": " + e.what());
      budget = resource_limits().max_memory;
      try {  // the whole budget: its error names the limit that would have to rise
        strips = strips_within(budget);
      } catch (const Error& whole) {
        throw Error(whole.kind(), names.input + ": " + whole.what());
      }
      spdlog::info("{}: needs {} of --max-memory, more than its share of {} files at once",
                   names.input, size_text(strips.host_bytes), o.workers);
    }
    kept = decoded_to_keep(in, layers, !whole_why.empty() || strips.rows >= input.height);
    if (strips.host_bytes + kept > (budget ? budget : memory_per_file()) ||
        (kept > 0 && !share_decoded(*in.file(), kept)))
      kept = 0;
    if (o.workers > 1) {
      reservation.emplace(strips.host_bytes + kept, budget);
      if (reservation->waited())
        spdlog::info("{}: waited for {} of --max-memory to be free", names.input,
                     size_text(reservation->bytes()));
    }
    options.strip_rows = strips.rows;
  }
  if (kept > 0)
    spdlog::info("{}: up to {} of decoded data kept for the other channels' reader", names.input,
                 size_text(kept));
  if (!whole_why.empty())
    spdlog::info("{}: the whole image at once: {}", names.input, whole_why);
  else
    spdlog::info("{}: strips of {} rows (reach {})", names.input, options.strip_rows,
                 pipeline.reach());
  WriteOptions encoding = o.encoding;  // encoder threads: this file's share of the cores
  if (encoding.threads == 0)
    encoding.threads = std::max(1, int(std::thread::hardware_concurrency()) / o.workers);
  // An EXR keeps its compression unless --compression says otherwise, as oiiotool keeps it
  // (one halo can write: another library's newer method falls back to the default).
  const std::string& stored = in.header().compression;
  if (encoding.compression.empty() && extension(names.output) == ".exr" &&
      is_exr_compression(stored))
    encoding.compression = stored;
  spdlog::info("{}: metadata {}", names.output, plan.metadata().summary());
  const Size size = plan.output_size();
  OutputImage out(names.output, size.width, size.height, type, encoding, plan.metadata());
  if (plan.placement()) out.place(*plan.placement());
  bool first = true;
  const StreamOutput write = [&](Span rows, const PixelBuffer& pixels) {
    if (first && layers)
      if (const std::string taken = layers->fit(pixels.channels); !taken.empty())
        throw Error(ErrorKind::Usage,
                    fmt::format("{}: the filters make {} channel{} of {}, and {} already has a "
                                "channel named {}; --drop-layers writes the filtered channels "
                                "alone",
                                names.output, pixels.channels, pixels.channels == 1 ? "" : "s",
                                picked, names.input, taken));
    const auto keep_types = [&](const std::vector<std::string>& channels) {
      if (!o.type && extension(names.output) == ".exr")
        out.type_channels(stored_types(in.header(), channels, type));
    };
    if (first && layers) {
      keep_types(layers->names());
      out.name_channels(layers->names());
      spdlog::info("{}: the {} other channels of {} beside the filtered ones{}", names.output,
                   layers->carried(), names.input, layers->moved() ? ", moved with the image" : "");
    } else if (first && std::size_t(pixels.channels) == in.channels().names.size()) {
      keep_types(in.channels().names);
      out.name_channels(in.channels().names);  // ViewLayer.Combined.R stays so in an EXR
    }
    first = false;
    out.write(rows, layers ? layers->merge(rows, pixels) : pixels);
  };
  StreamResult result =
      device ? stream_device(*device, pipeline, input, pixel_type(type), write, options)
             : stream_reference(pipeline, input, pixel_type(type), write, options);
  out.commit();
  spdlog::info("{}: wrote {} ({}x{}, {})", names.input, names.output, size.width, size.height,
               to_string(type));
  return result;
}

void write_flags(const Pipeline& pipeline, const std::vector<StageRun>& runs,
                 const std::string& path) {
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (const auto flags = runs[i].side_output("flags")) {
      const SampleType type = storable_type(path, SampleType::u8);
      write_image(path, to_pixels(flags_image(*flags->flags), pixel_type(type)), type);
      spdlog::info("wrote discontinuity flags of '{}' to {}", pipeline.stages()[i]->spec(), path);
      return;
    }
  throw Error(ErrorKind::Usage,
              "--write-flags: no stage computed discontinuity flags (bilateral with normal or "
              "depth guides does)");
}

}  // namespace halo
