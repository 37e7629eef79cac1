// OpenCL device discovery and selection; DeviceContext: what every queue on a chosen device
// shares (its context, compiled programs and launch shapes); Device: one worker's queues on it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cl/cl.hpp"
#include "cl/cl_error.hpp"
#include "cl/program_cache.hpp"
#include "cl/tuning.hpp"
#include "core/image.hpp"
#include "kernels/contract.h"

namespace halo {

struct DeviceInfo {
  int index = 0;  // position in `halo devices`, across all platforms
  cl::Platform platform;
  cl::Device device;
  std::string platform_name;
  std::string name;
  std::string vendor;
  std::string version;         // OpenCL version the device reports
  std::string driver_version;  // part of the program cache key
  bool gpu = false;
  std::string type;  // gpu, cpu, accelerator
  unsigned compute_units = 0;
  std::uint64_t global_memory = 0;
  std::uint64_t local_memory = 0;
  std::uint64_t max_allocation = 0;
  std::size_t max_work_group = 0;
  bool fp64 = false;           // cl_khr_fp64: double arithmetic in kernels
  bool int64_atomics = false;  // cl_khr_int64_base_atomics: 64-bit histogram totals
  int nv_compute_major = 0;    // NVIDIA's compute capability (major), 0 elsewhere

  // Tensor cores through inline PTX (mma.sync with TF32 or half operands): NVIDIA from Ampere on.
  bool tensor_cores() const { return nv_compute_major >= 8; }

  // Local memory a kernel's tiles may take: drivers keep a little for themselves.
  std::uint64_t local_budget() const { return local_memory > 1024 ? local_memory - 1024 : 0; }
};

// How halo uses a device, decided here once from what it reports and its launch shapes; strip
// planning, the filters, --device auto's defaults and the tuner read it instead of each asking
// whether the device is a GPU.
struct DeviceProfile {
  // Buffers live in memory of the device's own across a bus (GPUs): strips and tensors are
  // bounded by it, transfers cost time, and small strips waste launches. Else they are the
  // host's memory (CPU runtimes) and count against --max-memory.
  bool own_memory = false;
  // The CPU kernel form: each work-item computes Tuning::vec pixels of a row in vectors; a
  // separable stage then carries the rows two strips share.
  bool vector_kernels = false;
  // Tensor cores through inline PTX (denoise's tf32 and fp16 paths).
  bool tensor_cores = false;
  // Strips one worker keeps in flight on its queues: on a device of its own memory a second
  // lane's transfers overlap the first's kernels; a CPU runtime already uses every core.
  int lanes = 1;
  // Strips read ahead of the one computing: a CPU runtime's cores are the reader's too.
  int in_flight = 2;
  // Bytes a strip of float planes aims at (0: the host's cache-sized default): GPUs want
  // launches of 16 MiB and more.
  std::size_t strip_bytes = 0;
  // A `halo tune` run's default image: 8K on GPUs, 1080p on CPUs (minutes otherwise).
  int tune_width = 1920, tune_height = 1080;
};

DeviceProfile device_profile(const DeviceInfo& info, const Tuning& tuning);

// What --device auto assumes of a device before opening it (pipeline/device_choice.cpp), from
// its kind ("gpu", "cpu", as DeviceInfo::type) and compute units: what its start costs when
// none was measured yet, how many of the host's cores its kernels are worth, what a sample
// costs across a bus, and what its runtime adds to a run beyond the start measured.
struct DeviceCosts {
  double start_seconds = 0;
  double parallel = 1;
  double transfer_ns = 0;  // a sample, both ways; 0: the host's own memory
  double runtime_seconds = 0;
};
DeviceCosts device_costs(const std::string& type, unsigned compute_units);
inline DeviceCosts device_costs(const DeviceInfo& info) {
  return device_costs(info.type, info.compute_units);
}

// Every device of every platform; empty when there is no OpenCL platform at all.
std::vector<DeviceInfo> list_devices();

// Resolves --device: auto (a GPU, else any device), gpu, cpu, an index N, or a substring of the
// device or platform name. Throws Error(NoDevice) saying what exists when nothing matches.
// "ref" is not a device; callers handle it before asking.
DeviceInfo select_device(const std::string& choice);

// NoDevice error when `info` is PoCL and the file size limit (ulimit -f) is under 64 MiB: PoCL
// compiles kernels through files, and LLVM ends the process mid-compile ("LLVM ERROR", exit 1)
// when a write fails. Under --device auto the run takes the reference instead.
void check_compile_room(const DeviceInfo& info);

// Planar float32 image resident on a device, laid out as halo::Image (same pitch): a whole
// image, or a strip holding the image rows [y0, y0 + height) of an image full_height tall.
struct DeviceImage {
  cl::Buffer buffer;
  int width = 0;
  int height = 0;  // rows held
  int y0 = 0;
  int full_height = 0;
  int channels = 0;
  bool alpha = false;
  int pitch = 0;
  PixelType source = PixelType::f32;  // as halo::Image::source()
  // Set by a caller that drops the image once the stage it is given to has read it (the
  // streaming lane): that stage may write its result into the same buffer (result_for).
  bool scratch = false;

  int color_channels() const { return channels - (alpha ? 1 : 0); }
  Span span() const { return {y0, y0 + height}; }
  std::size_t plane_size() const { return std::size_t(pitch) * height; }
  std::size_t bytes() const { return plane_size() * channels * sizeof(float); }
};

// A device opened for work: one OpenCL context, the programs compiled for it (and cached in
// cache_dir) and its launch shapes. Shared by every Device (queue pair) working on it.
class DeviceContext {
 public:
  DeviceContext(DeviceInfo info, std::optional<std::filesystem::path> cache_dir);

  const DeviceInfo& info() const { return info_; }
  const cl::Context& context() const { return context_; }
  ProgramCache& programs() { return *programs_; }
  // Launch shapes for this device's kernels (cl/tuning.hpp): the table's row, or what
  // `halo tune` stored; set_tuning is for halo tune's candidates (later kernels use them).
  const TuningChoice& tuning() const { return tuning_; }
  void set_tuning(TuningChoice tuning) { tuning_ = std::move(tuning); }

 private:
  DeviceInfo info_;
  TuningChoice tuning_;
  cl::Context context_;
  std::unique_ptr<ProgramCache> programs_;
};

// One worker's queues on a DeviceContext. Kernels are enqueued in order on a profiling queue
// (or, while OutOfOrder lives, on an out-of-order one); each enqueue is recorded with its label
// so --timings and benchmarks can read the device times. Buffers of one Device may not be used
// on another without ordering, so each is used by one thread at a time; two of them let one
// image's transfers overlap another's kernels.
class Device {
 public:
  explicit Device(std::shared_ptr<DeviceContext> shared);
  // A context of its own (one worker, tests, benchmarks).
  Device(DeviceInfo info, std::optional<std::filesystem::path> cache_dir);

  // The context, for another worker's Device on it.
  const std::shared_ptr<DeviceContext>& shared() const { return shared_; }
  const DeviceInfo& info() const { return shared_->info(); }
  ProgramCache& programs() { return shared_->programs(); }
  const Tuning& tuning() const { return shared_->tuning().tuning; }
  DeviceProfile profile() const { return device_profile(info(), tuning()); }
  const std::string& tuning_source() const { return shared_->tuning().source; }
  void set_tuning(const Tuning& tuning, const std::string& source) {
    shared_->set_tuning({tuning, source});
  }

  // Kernels and constant buffers are made once per queue and handed out again: a strip asks
  // for the same ones as the strip before it, and creating them cost more than running them
  // on small strips (NVIDIA). A kernel's arguments are set anew by each user before its launch.
  cl::Kernel kernel(const std::string& file, const std::string& name, const Defines& defines,
                    const std::string& generated = "");
  cl::Buffer buffer(std::size_t bytes, const std::string& what);
  // A read-only buffer holding a copy of host data (weights for __constant arguments).
  cl::Buffer constants(const std::vector<float>& values, const std::string& what);
  DeviceImage image(int width, int height, int channels, bool alpha);
  // The same width, rows and source as `like`, with other channels.
  DeviceImage image_like(const DeviceImage& like, int channels, bool alpha);

  // Enqueues a kernel; global sizes are rounded up to multiples of local. Failures name the
  // kernel and both sizes. bytes: what the kernel must move at least (read once + write once),
  // for the bandwidth that --timings and benchmarks report.
  // Every enqueue returns its event and waits for the events in `after` (needed only on the
  // out-of-order queue, harmless on the in-order one).
  cl::Event launch(cl::Kernel& kernel, const std::string& label, cl::NDRange global,
                   cl::NDRange local, std::size_t bytes = 0,
                   const std::vector<cl::Event>& after = {});
  // Both transfers block until the host memory is no longer needed.
  cl::Event write(cl::Buffer& buffer, const void* data, std::size_t bytes, const std::string& label,
                  const std::vector<cl::Event>& after = {});
  cl::Event read(const cl::Buffer& buffer, void* data, std::size_t bytes, const std::string& label,
                 const std::vector<cl::Event>& after = {});
  void copy(const cl::Buffer& from, cl::Buffer& to, std::size_t from_offset, std::size_t to_offset,
            std::size_t bytes, const std::string& label);
  // write() into `buffer` from byte `offset` on: one part of a buffer filled from its own
  // host memory, with no copy gathering the parts first.
  cl::Event write_at(cl::Buffer& buffer, std::size_t offset, const void* data, std::size_t bytes,
                     const std::string& label);
  cl::Event fill_zero(cl::Buffer& buffer, std::size_t bytes, const std::string& label,
                      const std::vector<cl::Event>& after = {});

  // CPU devices keep their buffers in host memory: host code can fill and read them in place
  // (mapped) instead of copying them in and out. Only on the in-order queue, whose order a
  // blocking map keeps.
  bool shares_host_memory() const { return info().type == "cpu" && !use_async_; }
  // Maps `bytes` of `buffer` (blocking: after everything enqueued before), calls fn with the
  // host pointer, unmaps. fn's wall time is recorded as a timing under `label`, with `moved`
  // bytes, so --timings shows host conversions next to the kernels they replace.
  void on_host(const cl::Buffer& buffer, std::size_t bytes, cl_map_flags flags,
               const std::string& label, std::size_t moved, const std::function<void(void*)>& fn);

  // Page-locked host memory (CL_MEM_ALLOC_HOST_PTR, mapped for writing and reading): DMA reads
  // and writes it without the driver's staging copy that pageable memory needs.
  class Pinned {
   public:
    Pinned(cl::CommandQueue queue, cl::Buffer buffer, void* data)
        : queue_(std::move(queue)), buffer_(std::move(buffer)), data_(data) {}
    ~Pinned() { queue_.enqueueUnmapMemObject(buffer_, data_), queue_.finish(); }
    Pinned(const Pinned&) = delete;
    Pinned& operator=(const Pinned&) = delete;
    void* data() const { return data_; }

   private:
    cl::CommandQueue queue_;
    cl::Buffer buffer_;
    void* data_;
  };
  std::unique_ptr<Pinned> pinned(std::size_t bytes);

  // While alive, image buffers are recycled strip by strip: the strips of a stream ask for
  // the same buffers in the same order, so the n-th image a strip allocates reuses the n-th of
  // the previous strip (grown when too small) once next_strip() says the previous strip's
  // work is finished. Saves an allocation per buffer and strip (and, on CPU devices, the
  // page faults of fresh memory).
  class Recycling {
   public:
    explicit Recycling(Device& device);
    ~Recycling();
    Recycling(const Recycling&) = delete;
    Recycling& operator=(const Recycling&) = delete;
    void next_strip() { device_.next_image_ = 0; }
    // The most strip images one strip has taken from `device` at once (its input, the stages'
    // temporaries and results) since the last call: what StageMemory::strip_buffers declares,
    // less the one the executor keeps (tests/engine/stage_memory_test.cpp).
    static std::size_t take_peak(Device& device) { return std::exchange(device.recycled_peak_, 0); }

   private:
    Device& device_;
  };

  // While alive, enqueues go to an out-of-order profiling queue where only the events passed
  // as `after` order them (the in-order queue where the device has none).
  class OutOfOrder {
   public:
    explicit OutOfOrder(Device& device);
    ~OutOfOrder();
    OutOfOrder(const OutOfOrder&) = delete;
    OutOfOrder& operator=(const OutOfOrder&) = delete;

   private:
    Device& device_;
  };
  bool has_out_of_order() const { return async_() != nullptr; }
  void finish();

  // What the following enqueues belong to ("upload", a stage's spec, "download"), for timings.
  void set_stage(std::string stage) { stage_ = std::move(stage); }

  struct Timing {
    std::string stage;
    std::string label;
    double ms = 0;
    std::size_t bytes = 0;  // moved by a transfer, or at least by a kernel; 0 if unknown
  };
  // Device times of everything enqueued since the last call (waits for the queue).
  std::vector<Timing> take_timings();

 private:
  void create_queues();
  void record(cl::Event event, const std::string& label, std::size_t bytes);
  cl::CommandQueue& current() { return use_async_ && async_queue_() ? async_queue_ : queue_; }
  cl_command_queue async_() const { return async_queue_(); }

  std::shared_ptr<DeviceContext> shared_;
  cl::CommandQueue queue_;
  cl::CommandQueue async_queue_;  // out-of-order; null when unsupported
  bool use_async_ = false;
  struct Pending {
    cl::Event event;  // null for host work, which gives its time in host_ms
    std::string stage;
    std::string label;
    std::size_t bytes;
    double host_ms = 0;
  };
  std::vector<Pending> pending_;
  std::map<std::pair<cl_program, std::string>, cl::Kernel> kernels_;
  std::map<std::vector<float>, cl::Buffer> constants_;
  std::string stage_;
  bool recycling_ = false;
  std::vector<std::pair<std::size_t, cl::Buffer>> images_;  // with their sizes, while recycling
  std::size_t next_image_ = 0;
  std::size_t recycled_peak_ = 0;  // Recycling::take_peak
};

// A strip kernel's StripArgs (kernels/contract.h): the rows `buffer` holds, laid out as it
// is, and the image rows `out` the launch computes.
inline StripArgs strip_args(const DeviceImage& buffer, Span out) {
  return {buffer.width,       buffer.pitch, buffer.height, buffer.y0,
          buffer.full_height, out.first,    out.last};
}

// `args` (a guided pass's packed arguments of kernels/contract.h, which begin with a
// StripArgs) with its strip set to `buffer` and the rows `out`.
template <typename PassArgs>
PassArgs on_strip(PassArgs args, const DeviceImage& buffer, Span out) {
  args.strip = strip_args(buffer, out);
  return args;
}

// Kernel arguments by value, laid out as OpenCL C lays them out: 4-byte members only.
static_assert(sizeof(StripArgs) == 7 * 4);
static_assert(sizeof(StripLayout) == 5 * 4 && sizeof(MoveArgs) == 12 * 4);
static_assert(sizeof(CropArgs) == 14 * 4 && sizeof(RotateArgs) == 23 * 4);

// A buffer's rows as MoveArgs describes them (kernels/contract.h).
inline StripLayout strip_layout(const DeviceImage& buffer) {
  return {buffer.width, buffer.pitch, buffer.height, buffer.y0, buffer.full_height};
}
// MoveArgs of a kernel that computes the rows `out` of `to` from `from`.
inline MoveArgs move_args(const DeviceImage& from, const DeviceImage& to, Span out) {
  return {strip_layout(from), strip_layout(to), out.first, out.last};
}

template <typename T>
void set_arg(cl::Kernel& kernel, cl_uint& index, const T& value) {
  check(kernel.setArg(index++, value), "clSetKernelArg");
}
// Sets kernel arguments 0, 1, 2, ... in order.
template <typename... Args>
void set_args(cl::Kernel& kernel, const Args&... args) {
  cl_uint index = 0;
  (set_arg(kernel, index, args), ...);
}

// "7680x4320x3" style text for launch sizes in messages.
std::string to_string(const cl::NDRange& range);

}  // namespace halo
