// The structural similarity index (SSIM) of Wang, Bovik, Sheikh and Simoncelli, "Image
// Quality Assessment: From Error Visibility to Structural Similarity" (IEEE TIP 2004), with
// the paper's settings: an 11x11 Gaussian window of sigma 1.5, K1 0.01, K2 0.03, population
// (co)variances. Computed as scikit-image's structural_similarity(gaussian_weights=True,
// use_sample_covariance=False) computes it, so that figures agree with what users already
// run: the window is truncated at 3.5 sigma (radius 5), the image is mirrored at its edges
// (d c b a | a b c d), and the mean leaves out the 5 pixels along each edge.
#pragma once

#include <vector>

#include "core/image.hpp"

namespace halo {

struct Ssim {
  double mean = 0;               // over the channels' means
  std::vector<double> channels;  // each channel's mean SSIM
};

// The smallest width and height SSIM is defined on: one whole window.
constexpr int kSsimMinSize = 11;

// SSIM of `a` against `b` (same size and channels; Error(NotComparable) else, and for images
// under kSsimMinSize on a side) for samples whose range is `data_range` (1 for 8/16-bit
// images read as [0,1]). A NaN sample makes its channel's SSIM NaN. In double precision.
Ssim ssim(const Image& a, const Image& b, double data_range);
class Device;

// ssim() on an OpenCL device in strips of rows whose largest buffer stays within `strip_bytes`:
// each centre's SSIM in float there (the constants C1 and C2 keep the variances' rounding
// small), their sums in double here.
Ssim ssim_device(Device& device, const Image& a, const Image& b, double data_range,
                 std::size_t strip_bytes = std::size_t(256) << 20);

// The host memory ssim() takes beside the images: each core's rows of moments.
std::size_t ssim_bytes(int width);

}  // namespace halo
