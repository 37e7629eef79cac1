// The OpenEXR header, walked by halo before OpenEXR reads it: OpenEXR allocates what an
// attribute declares (a 400-byte file declaring a 1.8 GB string attribute took 1.8 GB inside
// Imf::TypedAttribute::readValueFrom), so every declared size is checked against the bytes the
// file has, and each part's data window against the resource limits, before any of it is read.
#pragma once

#include <memory>

#include "core/checked_file.hpp"

namespace halo {

// BadData naming the file and the attribute for a header that is cut short, malformed, or that
// declares more bytes than the file holds; check_image_size's error for a data window over the
// limits. Returns normally for a header OpenEXR may be given.
void check_exr_header(const std::shared_ptr<const CheckedFile>& file);

}  // namespace halo
