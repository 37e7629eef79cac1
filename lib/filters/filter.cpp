// Border addressing and alpha pass-through shared by all filters.
#include "filters/filter.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"
#include "filters/guided/guides.hpp"

namespace halo {

StageRun::StageRun() = default;
StageRun::~StageRun() = default;
StageRun::StageRun(StageRun&&) noexcept = default;
StageRun& StageRun::operator=(StageRun&&) noexcept = default;

void StageState::merge(StageState&) {}
void StageState::finish(Device&) {}
std::string StageState::mismatch(const StageState&) const {
  return "";
}
std::vector<SideOutput> StageState::side_outputs() const {
  return {};
}

std::vector<SideOutput> StageRun::side_outputs() const {
  return state ? state->side_outputs() : std::vector<SideOutput>();
}

std::optional<SideOutput> StageRun::side_output(const std::string& name) const {
  for (SideOutput& out : side_outputs())
    if (out.name == name) return std::move(out);
  return std::nullopt;
}

void StageRun::finish(Device& device) {
  if (state) state->finish(device);
}

std::string side_results_mismatch(const StageRun& device, const StageRun& reference) {
  return device.state && reference.state ? device.state->mismatch(*reference.state) : "";
}

void merge_runs(StageRun& into, StageRun& other) {
  if (!other.state) return;
  if (into.state)
    into.state->merge(*other.state);
  else
    into.state = std::move(other.state);
}

int Stage::input_row(int y, Size in, Size out) const {
  // A window's rows are the input's moved; a window larger than the input (a pad) starts
  // above it, and its rows outside own none.
  if (resizes())
    if (const auto origin = describe(ImageDesc{in}).origin)
      return std::clamp(y + (*origin)[1], 0, in.height);
  if (in.height == out.height) return y;
  // Proportional, rounded down: 0 -> 0 and out.height -> in.height.
  return int(std::int64_t(y) * in.height / std::max(1, out.height));
}

const GuideSources* Stage::guide_sources() const {
  const Guided* guided = facet<Guided>(*this);
  return guided ? &guided->sources() : nullptr;
}

ImageDesc resized(const ImageDesc& in, Size size) {
  ImageDesc out = in;
  out.size = size;
  out.origin.reset();
  out.placement.reset();
  return out;
}

void move_window(ImageDesc& desc, int dx, int dy) {
  if (desc.origin) desc.origin = std::array<int, 2>{(*desc.origin)[0] + dx, (*desc.origin)[1] + dy};
  if (desc.placement) desc.placement->x += dx, desc.placement->y += dy;
}

std::unique_ptr<Stage> for_file(const Stage& stage, const FileFacts& file) {
  const BoundToFile* bound = facet<BoundToFile>(stage);
  return bound ? bound->for_file(file) : nullptr;
}

double verify_tolerance(const Stage& stage, const Device& device, double given) {
  const StatesTolerance* states = facet<StatesTolerance>(stage);
  return states ? states->verify_tolerance(device, given) : given;
}

std::string Stage::whole_image_reason(PixelType) const {
  return "";
}

std::vector<std::string> Stage::details(const StageRun&) const {
  return {};
}

Span Stage::whole_output(Span in, Size size) const {
  return resizes() ? Span{0, output_size(size).height} : in;
}

Image Stage::reference(const Image& in, StageRun& run) const {
  run.own = in.span();
  return reference_rows(in, whole_output(in.span(), {in.width(), in.full_height()}), run);
}

Image Stage::reference(const Image& in) const {
  StageRun run;
  return reference(in, run);
}

DeviceImage Stage::enqueue(Device& device, const DeviceImage& in, StageRun& run) const {
  run.own = in.span();
  DeviceImage out =
      enqueue_rows(device, in, whole_output(in.span(), {in.width, in.full_height}), run);
  run.finish(device);
  return out;
}

DeviceImage Stage::enqueue(Device& device, const DeviceImage& in) const {
  StageRun run;
  return enqueue(device, in, run);
}

Border parse_border(const std::string& name) {
  if (name == "zero") return Border::zero;
  if (name == "clamp") return Border::clamp;
  if (name == "reflect") return Border::reflect;
  if (name == "wrap") return Border::wrap;
  throw Error(ErrorKind::Usage, "unknown border '" + name + "'");
}

int border_index(int i, int n, Border border) {
  if (i >= 0 && i < n) return i;
  switch (border) {
    case Border::zero:
      return -1;
    case Border::clamp:
      return std::clamp(i, 0, n - 1);
    case Border::reflect: {
      if (n == 1) return 0;
      const int period = 2 * n - 2;
      i = std::abs(i) % period;
      return i < n ? i : period - i;
    }
    case Border::wrap:
      return ((i % n) + n) % n;
  }
  return -1;
}

std::vector<int> border_table(int n, int r, Border border) {
  std::vector<int> table(n + 2 * r);
  for (int i = 0; i < int(table.size()); ++i) table[i] = border_index(i - r, n, border);
  return table;
}

std::vector<int> row_table(const Image& in, Span rows, int r, Border border) {
  std::vector<int> table(rows.count() + 2 * r);
  for (int i = 0; i < int(table.size()); ++i) {
    const int y = border_index(rows.first - r + i, in.full_height(), border);
    if (y >= 0 && (y < in.y0() || y >= in.y0() + in.height()))
      throw Error(ErrorKind::Internal, "row " + std::to_string(y) + " is not in the strip (rows " +
                                           std::to_string(in.y0()) + ".." +
                                           std::to_string(in.y0() + in.height()) + ")");
    table[i] = y < 0 ? -1 : y - in.y0();
  }
  return table;
}

std::string border_whole_image_reason(Border border) {
  return border == Border::wrap ? "border=wrap reads rows from the image's other edge" : "";
}

std::vector<float> scaled_weights(const std::vector<double>& values, double scale) {
  std::vector<float> weights;
  for (double v : values) weights.push_back(float(v / scale));
  return weights;
}

double sum_or_one(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum == 0 ? 1.0 : sum;
}

void copy_alpha(const Image& in, Image& out) {
  if (!in.alpha() || !out.alpha()) return;
  const int a_in = in.channels() - 1;
  const int a_out = out.channels() - 1;
  for (int y = 0; y < in.height(); ++y)
    std::memcpy(out.row(a_out, y), in.row(a_in, y), sizeof(float) * in.width());
}

Image result_like(const Image& src, int channels, bool alpha, Span out) {
  Image result = src.like_uninitialized(channels, alpha);
  for (int c = 0; c < channels; ++c)
    for (int y = src.y0(); y < src.span().last; ++y)
      if (y < out.first || y >= out.last)
        std::fill_n(result.row(c, y - src.y0()), src.width(), 0.0f);
  return result;
}

void copy_alpha(Device& device, const DeviceImage& in, DeviceImage& out) {
  if (!in.alpha || !out.alpha || in.buffer() == out.buffer()) return;
  const std::size_t plane = in.plane_size() * sizeof(float);
  device.copy(in.buffer, out.buffer, plane * (in.channels - 1), plane * (out.channels - 1), plane,
              "alpha");
}

DeviceImage result_for(Device& device, const DeviceImage& src) {
  if (!src.scratch) return device.image_like(src, src.channels, src.alpha);
  DeviceImage result = src;
  result.scratch = false;
  return result;
}

DeviceImage resized_result(Device& device, const DeviceImage& src, Size size, Span out) {
  DeviceImage result = device.image(size.width, out.count(), src.channels, src.alpha);
  result.y0 = out.first;
  result.full_height = size.height;
  result.source = src.source;
  return result;
}

DeviceImage result_for(Device& device, const DeviceImage& src, Span rows) {
  DeviceImage result = src;
  result.y0 = rows.first;
  result.height = rows.count();
  result.scratch = false;
  std::size_t size = 0;  // a strip's buffer is recycled: it may hold more than src's rows
  if (src.scratch)
    check(src.buffer.getInfo(CL_MEM_SIZE, &size), "clGetMemObjectInfo", "CL_MEM_SIZE");
  if (size < result.bytes())
    result.buffer = device.image(src.width, rows.count(), src.channels, src.alpha).buffer;
  return result;
}

}  // namespace halo
