// Shrink-on-load for every format: an image read at 1/factor of its size, each factor x factor
// block of the decoder's rows averaged into one pixel, as vips's shrink and Pillow's reduce do
// before a thumbnail's resampling filter. JPEG and WebP shrink in their decoders instead.
#pragma once

#include <memory>

#include "io/codec.hpp"

namespace halo {

// `reader` read through blocks of factor x factor pixels: each side ceil(size / factor), the
// blocks at the right and bottom edges as wide and tall as the image leaves them (Pillow's
// reduce). Colour is averaged weighted by alpha where an 8 or 16-bit image has alpha (the
// average of associated colour, divided by the average alpha; the plain average where a block's
// alpha is all 0), so that premultiplying after the shrink equals shrinking the premultiplied
// image. Float files hold associated colour already (halo filters it as stored, as EXR holds
// it): their colour is averaged plainly.
// Averages are rounded to the file's codes for 8 and 16-bit samples. The decoder's rows are
// read one at a time.
std::unique_ptr<ImageReader> shrink_by_blocks(std::unique_ptr<ImageReader> reader, int factor);

}  // namespace halo
