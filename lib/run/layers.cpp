// Layers carried around the filters.
#include "run/layers.hpp"

#include <cstring>

#include "core/error.hpp"

namespace halo {

CarriedLayers::CarriedLayers(const std::string& path, const ChannelChoice& picked)
    : reader_(open_reader(path)), picked_(picked.picked), names_(reader_->header().channels) {}

CarriedLayers::~CarriedLayers() = default;

const PixelBuffer& CarriedLayers::merge(Span rows, const PixelBuffer& filtered) {
  if (filtered.type != PixelType::f32 || !fits(filtered.channels))
    throw Error(ErrorKind::Internal, "carried layers: filtered rows do not fit");
  const int width = filtered.width, all = int(names_.size());
  if (rows_.width != width || rows_.height < rows.count())
    rows_ = PixelBuffer::uninitialized(width, rows.count(), all, PixelType::f32);
  rows_.height = rows.count();
  reader_->read_rows(rows.count(), 0, all, PixelType::f32, rows_.bytes.data());
  float* out = rows_.samples<float>();
  const float* in = filtered.samples<float>();
  const int n = filtered.channels;
  for (std::size_t p = 0; p < std::size_t(width) * rows.count(); ++p)
    for (int k = 0; k < n; ++k) out[p * all + picked_[k]] = in[p * n + k];
  return rows_;
}

}  // namespace halo
