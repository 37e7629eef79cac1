// What a filter is: a parameter table, and a Stage (one parsed spec) that runs either as the
// plain CPU reference or enqueued on an OpenCL device. Both paths get the same host-computed
// weights, so they differ only by device arithmetic.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cl/device.hpp"
#include "core/image.hpp"
#include "spec/params.hpp"

namespace halo {

struct Histogram;

enum class Border { zero = 0, clamp = 1, reflect = 2, wrap = 3 };

Border parse_border(const std::string& name);
// Index standing in for coordinate i of a line of n pixels, -1 for "zero"; kernels/common.cl
// holds the device twin.
int border_index(int i, int n, Border border);

class Stage {
 public:
  explicit Stage(std::string spec) : spec_(std::move(spec)) {}
  virtual ~Stage() = default;

  const std::string& spec() const { return spec_; }
  // What the stage resolved to (the kernel it runs, rank-1 decisions), for --verbose.
  virtual std::vector<std::string> details() const { return {}; }
  virtual Image reference(const Image& in) const = 0;
  virtual DeviceImage enqueue(Device& device, const DeviceImage& in) const = 0;

  // Stages that measure rather than change the image (histogram) keep their last result;
  // mismatch() says how the device's result differs from the reference's, "" if it does not.
  virtual const Histogram* result() const { return nullptr; }
  virtual std::string mismatch() const { return ""; }

 private:
  std::string spec_;
};

struct FilterDef {
  std::string name;
  std::string summary;
  std::vector<Param> params;
  std::vector<std::string> notes;  // kernels used, cost, for `halo filters`
  std::string example;             // a typical spec, shown in `halo filters`
  std::function<std::unique_ptr<Stage>(const Args&)> make;
};

// border_index for coordinates -r .. n-1+r, indexed from 0: what a reference's taps look up.
std::vector<int> border_table(int n, int r, Border border);

// Work-groups needed to cover n items, `per` at a time.
inline int ceil_div(int n, int per) {
  return (n + per - 1) / per;
}

// Weights as both paths use them: each value divided by scale, rounded once to float.
std::vector<float> scaled_weights(const std::vector<double>& values, double scale);
// scale=auto: the sum of the values, or 1 when they sum to 0 (edge and emboss kernels).
double sum_or_one(const std::vector<double>& values);

// Copies the alpha plane (if any) from in to out unchanged.
void copy_alpha(const Image& in, Image& out);
void copy_alpha(Device& device, const DeviceImage& in, DeviceImage& out);

}  // namespace halo
