// Shrinking any decoder's image by averaging blocks (io/box_shrink.hpp).
#include "io/box_shrink.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.hpp"

namespace halo {

namespace {

int blocks(int n, int factor) {
  return (n + factor - 1) / factor;
}

class BoxShrinkReader : public ImageReader {
 public:
  BoxShrinkReader(std::unique_ptr<ImageReader> inner, int factor)
      : inner_(std::move(inner)),
        factor_(factor),
        natural_(pixel_type(inner_->header().stored)),
        channels_(int(inner_->header().channels.size())),
        alpha_(inner_->header().alpha && channels_ >= 2 && natural_ != PixelType::f32) {
    const ImageHeader& h = inner_->header();
    header_ = h;
    header_.width = blocks(h.width, factor);
    header_.height = blocks(h.height, factor);
    header_.shrink = h.shrink * factor;
    header_.decode_rows = blocks(h.decode_rows, factor);
    header_.tile_width = blocks(h.tile_width, factor);
    header_.tile_height = blocks(h.tile_height, factor);
    row_.resize((std::size_t(h.width) * std::size_t(channels_) * sample_size(natural_) + 7) / 8);
    sums_.resize(std::size_t(header_.width) * std::size_t(channels_));
    if (alpha_) weighted_.resize(sums_.size());
  }

  void read_rows(int count, int first, int n, PixelType type, std::byte* out) override {
    if (first < 0 || n < 1 || first + n > channels_)
      throw Error(ErrorKind::Internal, "shrink_by_blocks: channels out of range");
    if (type != PixelType::f32 && type != natural_)
      throw Error(ErrorKind::Internal, "shrink_by_blocks: samples asked for in another type");
    const std::size_t row_bytes = std::size_t(header_.width) * std::size_t(n) * sample_size(type);
    for (int r = 0; r < count; ++r, out += row_bytes) {
      sum_block_row();
      store(first, n, type, out);
    }
  }

 private:
  // Sums the next row of blocks: `factor` of the decoder's rows, fewer at the bottom.
  void sum_block_row() {
    const int height = inner_->header().height;
    rows_ = std::min(factor_, height - next_row_);
    if (rows_ <= 0) throw Error(ErrorKind::Internal, "shrink_by_blocks: read past the last row");
    std::fill(sums_.begin(), sums_.end(), 0.0);
    std::fill(weighted_.begin(), weighted_.end(), 0.0);
    for (int i = 0; i < rows_; ++i) {
      inner_->read_rows(1, 0, channels_, natural_, reinterpret_cast<std::byte*>(row_.data()));
      switch (natural_) {
        case PixelType::u8:
          add_row(reinterpret_cast<const std::uint8_t*>(row_.data()));
          break;
        case PixelType::u16:
          add_row(reinterpret_cast<const std::uint16_t*>(row_.data()));
          break;
        case PixelType::f32:
          add_row(reinterpret_cast<const float*>(row_.data()));
          break;
      }
    }
    next_row_ += rows_;
  }

  template <class T>
  void add_row(const T* row) {
    const int width = inner_->header().width, c = channels_;
    for (int bx = 0, x = 0; bx < header_.width; ++bx) {
      double* sum = sums_.data() + std::size_t(bx) * std::size_t(c);
      double* weighted = alpha_ ? weighted_.data() + std::size_t(bx) * std::size_t(c) : nullptr;
      for (const int end = std::min(width, x + factor_); x < end; ++x) {
        const T* px = row + std::size_t(x) * std::size_t(c);
        for (int k = 0; k < c; ++k) sum[k] += double(px[k]);
        if (weighted) {
          const double a = double(px[c - 1]);
          for (int k = 0; k + 1 < c; ++k) weighted[k] += double(px[k]) * a;
        }
      }
    }
  }

  // Block bx's average of channel k, in the decoder's units: colour over alpha's sum where
  // straight alpha weights it and the block is not all clear.
  double average(int bx, int k) const {
    const std::size_t at = std::size_t(bx) * std::size_t(channels_);
    if (alpha_ && k + 1 < channels_)
      if (const double alpha_sum = sums_[at + std::size_t(channels_) - 1]; alpha_sum > 0)
        return weighted_[at + std::size_t(k)] / alpha_sum;
    const int block_width = std::min(factor_, inner_->header().width - bx * factor_);
    return sums_[at + std::size_t(k)] / (double(block_width) * rows_);
  }

  // Channels [first, first + n) of the averages as `type`: codes rounded for 8 and 16-bit files
  // (widened to floats as the file's own reader widens codes), floats as they are.
  void store(int first, int n, PixelType type, std::byte* out) const {
    const bool codes = natural_ != PixelType::f32;
    const double top = natural_ == PixelType::u8 ? 255.0 : codes ? 65535.0 : 1.0;
    for (int bx = 0; bx < header_.width; ++bx)
      for (int k = 0; k < n; ++k) {
        double v = average(bx, first + k);
        if (codes) v = std::clamp(std::nearbyint(v), 0.0, top);
        put_sample(out, std::size_t(bx) * std::size_t(n) + std::size_t(k), type, v, float(top));
      }
  }

  std::unique_ptr<ImageReader> inner_;
  const int factor_;
  const PixelType natural_;  // the decoder's rows as read: its codes, or floats
  const int channels_;
  const bool alpha_;  // straight alpha to weight colour by (8 and 16-bit files)
  int next_row_ = 0, rows_ = 0;
  std::vector<std::uint64_t> row_;       // one decoder row (8-byte aligned for any sample type)
  std::vector<double> sums_, weighted_;  // per block and channel
};

}  // namespace

std::unique_ptr<ImageReader> shrink_by_blocks(std::unique_ptr<ImageReader> reader, int factor) {
  if (factor < 2) return reader;
  return std::make_unique<BoxShrinkReader>(std::move(reader), factor);
}

}  // namespace halo
