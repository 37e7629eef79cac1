// Layers carried around the filters, and moved by the stages that move pixels.
#include "run/layers.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "filters/registry.hpp"
#include "pipeline/stream.hpp"
#include "pipeline/strips.hpp"

namespace halo {

namespace {

// Thrown into the carried channels' stream when the file's own stream stopped first.
struct Cancelled {};

std::vector<int> other_channels(std::size_t all, const std::vector<int>& picked) {
  std::vector<int> others;
  for (int c = 0; c < int(all); ++c)
    if (std::find(picked.begin(), picked.end(), c) == picked.end()) others.push_back(c);
  return others;
}

// "ViewLayer.Combined." for ViewLayer.Combined.R, .G, .B; "" when the names share no layer.
std::string layer_of(const std::vector<std::string>& names) {
  const std::size_t dot = names.front().rfind('.');
  if (dot == std::string::npos) return {};
  const std::string layer = names.front().substr(0, dot + 1);
  for (const auto& name : names)
    if (name.size() <= layer.size() || name.compare(0, layer.size(), layer) != 0) return {};
  return layer;
}

}  // namespace

// The carried channels through the geometry stages on the reference, streamed on a thread of
// their own; their output rows wait in a short queue until the file's stream writes the same
// rows. Both streams deliver rows in order, in strips of their own heights.
class MovedRows {
 public:
  // share: the part of the file's memory these channels' strips may take.
  MovedRows(const std::shared_ptr<const CheckedFile>& file, std::vector<int> channels,
            const Pipeline& geometry, double share)
      : reader_(open_reader(file)), channels_(std::move(channels)), geometry_(geometry) {
    const ImageHeader& h = reader_->header();
    input_.width = h.width;
    input_.height = h.height;
    input_.channels = int(channels_.size());
    input_.type = PixelType::f32;
    input_.read = [this](HostStrip& strip, Span rows) {
      const std::size_t row0 = std::size_t(rows.first - strip.rows.first);
      read_picked(*reader_, channels_, rows.count(), PixelType::f32,
                  strip.pixels.bytes.data() + row0 * input_.width * input_.channels * 4);
    };
    StripLimits limits = strip_limits(nullptr);
    limits.host_bytes = std::size_t(double(limits.host_bytes) * share);
    try {
      options_.strip_rows = choose_strip_rows(geometry_, input_, PixelType::f32, limits);
    } catch (const Error& e) {
      throw Error(e.kind(),
                  file->path() + ": the layers beside the filtered channels: " + e.what());
    }
    worker_ = std::thread([this] { run(); });
  }

  ~MovedRows() {
    {
      std::lock_guard lock(mutex_);
      cancelled_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }

  // Copies the output rows `rows` (the next ones, in order) into `out`, interleaved.
  void take(Span rows, float* out) {
    const std::size_t row_floats = std::size_t(input_width()) * channels_.size();
    std::unique_lock lock(mutex_);
    for (int y = rows.first; y < rows.last; ++y) {
      changed_.wait(lock, [&] { return !strips_.empty() || done_; });
      if (strips_.empty()) {
        if (error_) std::rethrow_exception(error_);
        throw Error(ErrorKind::Internal, "carried layers: their stream ended early");
      }
      auto& [span, pixels] = strips_.front();
      std::memcpy(out + std::size_t(y - rows.first) * row_floats,
                  pixels.samples<float>() + std::size_t(y - span.first) * row_floats,
                  row_floats * sizeof(float));
      if (y + 1 == span.last) {
        strips_.pop_front();
        changed_.notify_all();
      }
    }
  }

 private:
  int input_width() const { return geometry_.output_size({input_.width, input_.height}).width; }

  void run() {
    try {
      const StreamOutput keep = [this](Span rows, const PixelBuffer& pixels) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return strips_.size() < kQueued || cancelled_; });
        if (cancelled_) throw Cancelled{};
        strips_.emplace_back(rows, pixels);
        changed_.notify_all();
      };
      stream_reference(geometry_, input_, PixelType::f32, keep, options_);
    } catch (const Cancelled&) {
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    done_ = true;
    changed_.notify_all();
  }

  static constexpr std::size_t kQueued = 2;  // strips waiting for the file's stream

  std::unique_ptr<ImageReader> reader_;
  std::vector<int> channels_;
  const Pipeline& geometry_;
  StreamInput input_;
  StreamOptions options_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<Span, PixelBuffer>> strips_;
  bool cancelled_ = false, done_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

CarriedLayers::CarriedLayers(const std::shared_ptr<const CheckedFile>& file,
                             const ChannelChoice& picked, const Pipeline& geometry, double share)
    : picked_(picked.picked), picked_names_(picked.names), picked_alpha_(picked.alpha) {
  auto reader = open_reader(file);
  names_ = reader->header().channels;
  others_ = other_channels(names_.size(), picked_);
  if (others_.empty()) return;
  if (geometry.stages().empty())
    reader_ = std::move(reader);
  else
    moved_ = std::make_unique<MovedRows>(file, others_, geometry, share);
}

CarriedLayers::~CarriedLayers() = default;

std::string CarriedLayers::fit(int channels) {
  filtered_at_.clear();
  others_at_.clear();
  if (std::size_t(channels) == picked_.size()) {
    out_names_ = names_;
    filtered_at_ = picked_;
    others_at_ = others_;
    return {};
  }
  const std::string layer = layer_of(picked_names_);
  std::vector<std::string> made = standard_names(channels, picked_alpha_);
  for (auto& name : made) name = layer + name;
  out_names_.clear();
  const int first = *std::min_element(picked_.begin(), picked_.end());
  for (int c = 0; c < int(names_.size()); ++c) {
    if (c == first)
      for (const auto& name : made) {
        filtered_at_.push_back(int(out_names_.size()));
        out_names_.push_back(name);
      }
    if (std::find(picked_.begin(), picked_.end(), c) != picked_.end()) continue;
    if (std::find(made.begin(), made.end(), names_[c]) != made.end()) return names_[c];
    others_at_.push_back(int(out_names_.size()));
    out_names_.push_back(names_[c]);
  }
  return {};
}

const PixelBuffer& CarriedLayers::merge(Span rows, const PixelBuffer& filtered) {
  if (filtered.type != PixelType::f32 || filtered_at_.size() != std::size_t(filtered.channels))
    throw Error(ErrorKind::Internal, "carried layers: filtered rows do not fit");
  const int width = filtered.width, all = int(out_names_.size()), n = filtered.channels;
  const int carried = int(others_.size());
  if (rows_.width != width || rows_.height < rows.count())
    rows_ = PixelBuffer::uninitialized(width, rows.count(), all, PixelType::f32);
  rows_.height = rows.count();
  const std::size_t pixels = std::size_t(width) * rows.count();
  carried_rows_.resize(pixels * carried);
  if (moved_)
    moved_->take(rows, carried_rows_.data());
  else if (carried > 0)
    read_picked(*reader_, others_, rows.count(), PixelType::f32,
                reinterpret_cast<std::byte*>(carried_rows_.data()));
  float* out = rows_.samples<float>();
  const float* in = filtered.samples<float>();
  for (std::size_t p = 0; p < pixels; ++p) {
    for (int k = 0; k < n; ++k) out[p * all + filtered_at_[k]] = in[p * n + k];
    for (int k = 0; k < carried; ++k) out[p * all + others_at_[k]] = carried_rows_[p * carried + k];
  }
  return rows_;
}

Pipeline moving_stages(const Pipeline& pipeline, const FileFacts& file) {
  Pipeline moving;
  for (const auto& stage : pipeline.stages()) {
    if (!stage->traits().moves_samples && !stage->resizes()) continue;
    auto bound = for_file(*stage, file);
    moving.append(bound ? std::shared_ptr<const Stage>(std::move(bound)) : stage);
  }
  return moving;
}

}  // namespace halo
