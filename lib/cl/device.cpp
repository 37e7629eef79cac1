// Device discovery, selection and the enqueue helpers every filter uses.
#include "cl/device.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>

#include "cl/cl_error.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace halo {

DeviceProfile device_profile(const DeviceInfo& info, const Tuning& tuning) {
  DeviceProfile p;
  p.own_memory = info.gpu;
  p.vector_kernels = tuning.vec > 0;
  p.tensor_cores = info.tensor_cores();
  p.lanes = p.own_memory ? 2 : 1;
  p.in_flight = p.own_memory ? 2 : 1;
  p.strip_bytes = p.own_memory ? std::size_t(16) << 20 : 0;
  if (info.gpu) p.tune_width = 7680, p.tune_height = 4320;
  return p;
}

DeviceCosts device_costs(const std::string& type, unsigned compute_units) {
  // Starting a device when none was measured yet: NVIDIA's OpenCL takes 0.2-0.4 s to create a
  // context on an H100 machine, PoCL 0.03-0.05 s on the 2-core one with its kernels cached.
  // A GPU's kernels are worth this many CPU cores (StageCost::device_ns): an H100 ran gaussian
  // r=2 at 1800 and the denoise network at 740 cores' worth of PoCL; its transfers cost 0.2 ns a
  // sample both ways. A CPU runtime adds its threads' start and unloading at exit beyond the
  // start measured (PoCL, 2 cores, 2026-11-28: a 512x512 gaussian took 0.16 s on it against
  // the reference's 0.04 s, where listing and start measured 0.072 s).
  if (type == "gpu") return {.start_seconds = 0.3, .parallel = 1000, .transfer_ns = 0.2};
  return {.start_seconds = 0.05,
          .parallel = double(std::max(1u, compute_units)),
          .runtime_seconds = 0.05};
}

namespace {

// A wait list for the C++ bindings: none when empty.
const std::vector<cl::Event>* wait(const std::vector<cl::Event>& after) {
  return after.empty() ? nullptr : &after;
}

std::string trim_nul(std::string s) {
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <cl_int Name, typename T>
T device_info(const cl::Device& device) {
  T value{};
  check(device.getInfo(Name, &value), "clGetDeviceInfo");
  return value;
}

DeviceInfo describe(const cl::Platform& platform, const cl::Device& device, int index) {
  DeviceInfo info;
  info.index = index;
  info.platform = platform;
  info.device = device;
  std::string text;
  check(platform.getInfo(CL_PLATFORM_NAME, &text), "clGetPlatformInfo", "CL_PLATFORM_NAME");
  info.platform_name = trim_nul(text);
  info.name = trim_nul(device_info<CL_DEVICE_NAME, std::string>(device));
  info.vendor = trim_nul(device_info<CL_DEVICE_VENDOR, std::string>(device));
  info.version = trim_nul(device_info<CL_DEVICE_VERSION, std::string>(device));
  info.driver_version = trim_nul(device_info<CL_DRIVER_VERSION, std::string>(device));
  const auto type = device_info<CL_DEVICE_TYPE, cl_device_type>(device);
  info.gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  info.type = info.gpu                              ? "gpu"
              : (type & CL_DEVICE_TYPE_CPU)         ? "cpu"
              : (type & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator"
                                                    : "other";
  info.compute_units = device_info<CL_DEVICE_MAX_COMPUTE_UNITS, cl_uint>(device);
  info.global_memory = device_info<CL_DEVICE_GLOBAL_MEM_SIZE, cl_ulong>(device);
  info.local_memory = device_info<CL_DEVICE_LOCAL_MEM_SIZE, cl_ulong>(device);
  info.max_allocation = device_info<CL_DEVICE_MAX_MEM_ALLOC_SIZE, cl_ulong>(device);
  info.max_work_group = device_info<CL_DEVICE_MAX_WORK_GROUP_SIZE, std::size_t>(device);
  const auto extensions = device_info<CL_DEVICE_EXTENSIONS, std::string>(device);
  info.fp64 = extensions.find("cl_khr_fp64") != std::string::npos;
  info.int64_atomics = extensions.find("cl_khr_int64_base_atomics") != std::string::npos;
  // NVIDIA's compute capability (cl_nv_device_attribute_query's
  // CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV): from 8 on, kernels may issue tensor-core mma.sync
  // through inline PTX.
  if (extensions.find("cl_nv_device_attribute_query") != std::string::npos) {
    cl_uint major = 0;
    if (device.getInfo(0x4000, &major) == CL_SUCCESS) info.nv_compute_major = int(major);
  }
  return info;
}

std::string available(const std::vector<DeviceInfo>& devices) {
  std::string list;
  for (const auto& d : devices)
    list += (list.empty() ? "" : ", ") + std::to_string(d.index) + ": " + d.name;
  return list;
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  std::vector<cl::Platform> platforms;
  const cl_int status = cl::Platform::get(&platforms);
  // An ICD loader without any installed driver reports "platform not found": that is no device.
  if (status == -1001 || status == CL_DEVICE_NOT_FOUND) return {};
  check(status, "clGetPlatformIDs");
  std::vector<DeviceInfo> devices;
  for (const auto& platform : platforms) {
    std::vector<cl::Device> found;
    const cl_int got = platform.getDevices(CL_DEVICE_TYPE_ALL, &found);
    if (got == CL_DEVICE_NOT_FOUND) continue;
    check(got, "clGetDeviceIDs");
    for (const auto& device : found)
      devices.push_back(describe(platform, device, int(devices.size())));
  }
  return devices;
}

DeviceInfo select_device(const std::string& choice) {
  const auto devices = list_devices();
  if (devices.empty())
    throw Error(ErrorKind::NoDevice,
                "no OpenCL device found (install a GPU driver, or pocl-opencl-icd for the CPU; "
                "--device ref runs the CPU reference)");
  const auto first = [&](auto&& pred) -> const DeviceInfo* {
    for (const auto& d : devices)
      if (pred(d)) return &d;
    return nullptr;
  };
  const DeviceInfo* pick = nullptr;
  int index = -1;
  const auto [ptr, ec] = std::from_chars(choice.data(), choice.data() + choice.size(), index);
  if (choice == "auto") {
    pick = first([](const DeviceInfo& d) { return d.gpu; });
    if (!pick) pick = &devices.front();
  } else if (choice == "gpu" || choice == "cpu") {
    pick = first([&](const DeviceInfo& d) { return d.type == choice; });
  } else if (ec == std::errc() && ptr == choice.data() + choice.size()) {
    if (index >= 0 && index < int(devices.size())) pick = &devices[index];
  } else {
    const auto needle = lower(choice);
    pick = first([&](const DeviceInfo& d) {
      return lower(d.name).find(needle) != std::string::npos ||
             lower(d.platform_name).find(needle) != std::string::npos;
    });
  }
  if (!pick)
    throw Error(ErrorKind::NoDevice, "no OpenCL device matches --device '" + choice + "' (have " +
                                         available(devices) + "; also auto, gpu, cpu, ref)");
  return *pick;
}

void check_compile_room(const DeviceInfo& info) {
  constexpr rlim_t kRoom = rlim_t(64) << 20;
  if (info.platform_name.find("Portable Computing Language") == std::string::npos) return;
  rlimit limit{};
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur >= kRoom)
    return;
  throw Error(ErrorKind::NoDevice,
              info.name +
                  " (PoCL) writes its compiled kernels to files, and the file size limit "
                  "(ulimit -f) is " +
                  std::to_string(limit.rlim_cur >> 10) +
                  " KiB: under 64 MiB a compile can die midway; raise it, or --device ref");
}

std::string to_string(const cl::NDRange& range) {
  std::string text;
  for (cl_uint i = 0; i < range.dimensions(); ++i)
    text += i ? "x" : "", text += std::to_string(range.get()[i]);
  return text;
}

DeviceContext::DeviceContext(DeviceInfo info, std::optional<std::filesystem::path> cache_dir)
    : info_(std::move(info)), tuning_(choose_tuning(info_, cache_dir)) {
  cl_int status = CL_SUCCESS;
  context_ = cl::Context(info_.device, nullptr, nullptr, nullptr, &status);
  check(status, "clCreateContext", info_.name);
  programs_ = std::make_unique<ProgramCache>(
      context_, info_.device,
      info_.platform_name + "|" + info_.name + "|" + info_.version + "|" + info_.driver_version,
      std::move(cache_dir));
}

Device::Device(std::shared_ptr<DeviceContext> shared) : shared_(std::move(shared)) {
  create_queues();
}

Device::Device(DeviceInfo info, std::optional<std::filesystem::path> cache_dir)
    : Device(std::make_shared<DeviceContext>(std::move(info), std::move(cache_dir))) {}

void Device::create_queues() {
  cl_int status = CL_SUCCESS;
  queue_ = cl::CommandQueue(shared_->context(), info().device, CL_QUEUE_PROFILING_ENABLE, &status);
  check(status, "clCreateCommandQueue", info().name);
  cl_command_queue_properties supported = 0;
  info().device.getInfo(CL_DEVICE_QUEUE_PROPERTIES, &supported);
  if (supported & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    async_queue_ = cl::CommandQueue(
        shared_->context(), info().device,
        CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &status);
    if (status != CL_SUCCESS) async_queue_ = cl::CommandQueue();
  }
}

cl::Kernel Device::kernel(const std::string& file, const std::string& name, const Defines& defines,
                          const std::string& generated) {
  const cl::Program program = programs().get(file, defines, generated);
  cl::Kernel& kernel = kernels_[{program(), name}];
  if (!kernel()) {
    cl_int status = CL_SUCCESS;
    kernel = cl::Kernel(program, name.c_str(), &status);
    check(status, "clCreateKernel", name + " in " + file);
  }
  return kernel;
}

cl::Buffer Device::buffer(std::size_t bytes, const std::string& what) {
  if (bytes > info().max_allocation)
    throw ClError(CL_INVALID_BUFFER_SIZE, "clCreateBuffer",
                  what + " needs " + std::to_string(bytes) + " bytes, device allows " +
                      std::to_string(info().max_allocation) + " in one buffer");
  cl_int status = CL_SUCCESS;
  cl::Buffer buffer(shared_->context(), CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 4), nullptr,
                    &status);
  check(status, "clCreateBuffer", what + ", " + std::to_string(bytes) + " bytes");
  return buffer;
}

cl::Buffer Device::constants(const std::vector<float>& values, const std::string& what) {
  std::vector<float> copy = values.empty() ? std::vector<float>{0.0f} : values;
  if (const auto it = constants_.find(copy); it != constants_.end()) return it->second;
  cl_int status = CL_SUCCESS;
  cl::Buffer buffer(shared_->context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                    copy.size() * sizeof(float), copy.data(), &status);
  check(status, "clCreateBuffer", what + ", " + std::to_string(copy.size()) + " floats");
  if (constants_.size() >= 256) constants_.clear();  // a bound; filters use a handful
  constants_.emplace(std::move(copy), buffer);
  return buffer;
}

DeviceImage Device::image(int width, int height, int channels, bool alpha) {
  DeviceImage image;
  image.width = width;
  image.height = height;
  image.full_height = height;
  image.channels = channels;
  image.alpha = alpha;
  image.pitch = aligned_pitch(width);
  const std::string what = "image " + std::to_string(width) + "x" + std::to_string(height) + "x" +
                           std::to_string(channels);
  if (!recycling_) {
    image.buffer = buffer(image.bytes(), what);
  } else {
    if (next_image_ == images_.size()) images_.emplace_back(0, cl::Buffer());
    auto& [size, recycled] = images_[next_image_++];
    recycled_peak_ = std::max(recycled_peak_, next_image_);
    if (size < image.bytes()) size = image.bytes(), recycled = buffer(size, what);
    image.buffer = recycled;
  }
  return image;
}

Device::Recycling::Recycling(Device& device) : device_(device) {
  device_.recycling_ = true;
  device_.next_image_ = 0;
}

Device::Recycling::~Recycling() {
  device_.recycling_ = false;
  device_.images_.clear();
}

DeviceImage Device::image_like(const DeviceImage& like, int channels, bool alpha) {
  DeviceImage image = this->image(like.width, like.height, channels, alpha);
  image.y0 = like.y0;
  image.full_height = like.full_height;
  image.source = like.source;
  return image;
}

cl::Event Device::launch(cl::Kernel& kernel, const std::string& label, cl::NDRange global,
                         cl::NDRange local, std::size_t bytes,
                         const std::vector<cl::Event>& after) {
  std::size_t rounded[3] = {1, 1, 1};
  for (cl_uint i = 0; i < global.dimensions(); ++i) {
    const std::size_t l = i < local.dimensions() ? local.get()[i] : 1;
    rounded[i] = (global.get()[i] + l - 1) / l * l;
  }
  const auto shaped = [&](const std::size_t* sizes) {
    return global.dimensions() == 1   ? cl::NDRange(sizes[0])
           : global.dimensions() == 2 ? cl::NDRange(sizes[0], sizes[1])
                                      : cl::NDRange(sizes[0], sizes[1], sizes[2]);
  };
  const cl::NDRange padded = shaped(rounded);
  // The group shapes (cl/groups.hpp) have three sizes; a launch of fewer dimensions takes
  // as many of them.
  if (local.dimensions() != 0) {
    std::size_t sizes[3] = {1, 1, 1};
    for (cl_uint i = 0; i < local.dimensions(); ++i) sizes[i] = local.get()[i];
    local = shaped(sizes);
  }
  cl::Event event;
  check(current().enqueueNDRangeKernel(kernel, cl::NullRange, padded, local, wait(after), &event),
        "clEnqueueNDRangeKernel",
        "kernel " + label + ", global " + to_string(padded) + ", local " + to_string(local));
  record(event, label, bytes);
  return event;
}

cl::Event Device::write(cl::Buffer& buffer, const void* data, std::size_t bytes,
                        const std::string& label, const std::vector<cl::Event>& after) {
  cl::Event event;
  // Blocking: the caller's memory may be gone as soon as this returns.
  check(current().enqueueWriteBuffer(buffer, CL_TRUE, 0, bytes, data, wait(after), &event),
        "clEnqueueWriteBuffer", label + ", " + std::to_string(bytes) + " bytes");
  record(event, label, bytes);
  return event;
}

cl::Event Device::write_at(cl::Buffer& buffer, std::size_t offset, const void* data,
                           std::size_t bytes, const std::string& label) {
  cl::Event event;
  check(current().enqueueWriteBuffer(buffer, CL_TRUE, offset, bytes, data, nullptr, &event),
        "clEnqueueWriteBuffer",
        label + ", " + std::to_string(bytes) + " bytes at " + std::to_string(offset));
  record(event, label, bytes);
  return event;
}

cl::Event Device::read(const cl::Buffer& buffer, void* data, std::size_t bytes,
                       const std::string& label, const std::vector<cl::Event>& after) {
  cl::Event event;
  check(current().enqueueReadBuffer(buffer, CL_TRUE, 0, bytes, data, wait(after), &event),
        "clEnqueueReadBuffer", label + ", " + std::to_string(bytes) + " bytes");
  record(event, label, bytes);
  return event;
}

void Device::copy(const cl::Buffer& from, cl::Buffer& to, std::size_t from_offset,
                  std::size_t to_offset, std::size_t bytes, const std::string& label) {
  cl::Event event;
  check(current().enqueueCopyBuffer(from, to, from_offset, to_offset, bytes, nullptr, &event),
        "clEnqueueCopyBuffer", label + ", " + std::to_string(bytes) + " bytes");
  record(event, label, 0);
}

cl::Event Device::fill_zero(cl::Buffer& buffer, std::size_t bytes, const std::string& label,
                            const std::vector<cl::Event>& after) {
  cl::Event event;
  const cl_uint zero = 0;
  check(current().enqueueFillBuffer(buffer, zero, 0, bytes, wait(after), &event),
        "clEnqueueFillBuffer", label + ", " + std::to_string(bytes) + " bytes");
  record(event, label, 0);
  return event;
}

void Device::on_host(const cl::Buffer& buffer, std::size_t bytes, cl_map_flags flags,
                     const std::string& label, std::size_t moved,
                     const std::function<void(void*)>& fn) {
  cl_int status = CL_SUCCESS;
  void* data = queue_.enqueueMapBuffer(buffer, CL_TRUE, flags, 0, bytes, nullptr, nullptr, &status);
  check(status, "clEnqueueMapBuffer", label + ", " + std::to_string(bytes) + " bytes");
  const auto start = std::chrono::steady_clock::now();
  try {
    fn(data);
  } catch (...) {
    queue_.enqueueUnmapMemObject(buffer, data);
    throw;
  }
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  check(queue_.enqueueUnmapMemObject(buffer, data), "clEnqueueUnmapMemObject", label);
  pending_.push_back({cl::Event(), stage_, label, moved, took.count()});
}

std::unique_ptr<Device::Pinned> Device::pinned(std::size_t bytes) {
  cl_int status = CL_SUCCESS;
  cl::Buffer buffer(shared_->context(), CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, nullptr,
                    &status);
  check(status, "clCreateBuffer", "pinned host memory, " + std::to_string(bytes) + " bytes");
  void* data = queue_.enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes,
                                       nullptr, nullptr, &status);
  check(status, "clEnqueueMapBuffer", "pinned host memory, " + std::to_string(bytes) + " bytes");
  return std::make_unique<Pinned>(queue_, std::move(buffer), data);
}

Device::OutOfOrder::OutOfOrder(Device& device) : device_(device) {
  // Commands already on the in-order queue come first.
  device_.finish();
  device_.use_async_ = true;
}

Device::OutOfOrder::~OutOfOrder() {
  if (device_.async_queue_()) device_.async_queue_.finish();
  device_.use_async_ = false;
}

void Device::finish() {
  check(queue_.finish(), "clFinish", info().name);
}

void Device::record(cl::Event event, const std::string& label, std::size_t bytes) {
  pending_.push_back({std::move(event), stage_, label, bytes});
}

std::vector<Device::Timing> Device::take_timings() {
  finish();
  std::vector<Timing> timings;
  for (auto& p : pending_) {
    if (!p.event()) {
      timings.push_back({p.stage, p.label, p.host_ms, p.bytes});
      continue;
    }
    cl_ulong start = 0, end = 0;
    check(p.event.getProfilingInfo(CL_PROFILING_COMMAND_START, &start), "clGetEventProfilingInfo",
          p.label);
    check(p.event.getProfilingInfo(CL_PROFILING_COMMAND_END, &end), "clGetEventProfilingInfo",
          p.label);
    timings.push_back({p.stage, p.label, double(end - start) * 1e-6, p.bytes});
  }
  pending_.clear();
  return timings;
}

}  // namespace halo
