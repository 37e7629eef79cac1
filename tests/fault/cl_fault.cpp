// A test-only OpenCL fault layer, preloaded into the halo binary (LD_PRELOAD) by
// tests/cli/fault_test.cpp. HALO_FAULT names the calls to fail:
//   HALO_FAULT=clCreateBuffer:3              the 3rd clCreateBuffer fails
//   HALO_FAULT=clEnqueueNDRangeKernel:2-     the 2nd and every later one fail
//   HALO_FAULT=clFinish:1:-5,clBuildProgram:1  with a chosen CL_* code (default per call:
//                                              CL_MEM_OBJECT_ALLOCATION_FAILURE for buffers,
//                                              CL_BUILD_PROGRAM_FAILURE for builds,
//                                              CL_OUT_OF_RESOURCES otherwise)
//   HALO_FAULT=clEnqueueReadBuffer:2-:1       code 1 (not an OpenCL code): the call succeeds
//                                              but the data read is corrupted (its first byte
//                                              flipped), as a kernel bug would leave it;
//                                              also for clEnqueueMapBuffer (blocking maps)
// Every other call goes to the real OpenCL (the next definition: the ICD loader).
#include <CL/cl.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct Fault {
  std::atomic<long> calls{0};
  long first = 0;       // 0: never fails
  bool onward = false;  // every call from `first` on
  cl_int code = CL_OUT_OF_RESOURCES;
};

// The fault for `name` as HALO_FAULT describes it (read once per call name).
Fault& fault_for(const char* name, cl_int default_code) {
  struct Entry {
    const char* name;
    Fault fault;
  };
  static Entry entries[16];
  static std::atomic<int> used{0};
  for (int i = 0; i < used.load(); ++i)
    if (std::strcmp(entries[i].name, name) == 0) return entries[i].fault;
  // First call of this name (calls from several threads may both get here; both parse the
  // same text, so either entry counts the same).
  const int i = used.fetch_add(1);
  Entry& e = entries[i];
  e.name = name;
  e.fault.code = default_code;
  if (const char* spec = std::getenv("HALO_FAULT")) {
    const std::string text = spec, wanted = std::string(name) + ":";
    for (std::size_t at = text.find(wanted); at != std::string::npos;
         at = text.find(wanted, at + 1)) {
      if (at > 0 && text[at - 1] != ',') continue;
      const char* p = text.c_str() + at + wanted.size();
      char* end = nullptr;
      e.fault.first = std::strtol(p, &end, 10);
      if (*end == '-') e.fault.onward = true, ++end;
      if (*end == ':') e.fault.code = cl_int(std::strtol(end + 1, &end, 10));
      break;
    }
  }
  return e.fault;
}

constexpr cl_int kCorrupt = 1;

bool should_fail(Fault& f) {
  const long n = ++f.calls;
  return f.first > 0 && (n == f.first || (f.onward && n > f.first));
}

template <typename F>
F real(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size,
                                               void* host, cl_int* error) {
  static Fault& f = fault_for("clCreateBuffer", CL_MEM_OBJECT_ALLOCATION_FAILURE);
  if (should_fail(f)) {
    if (error) *error = f.code;
    return nullptr;
  }
  static auto next = real<decltype(&clCreateBuffer)>("clCreateBuffer");
  return next(context, flags, size, host, error);
}

CL_API_ENTRY cl_int CL_API_CALL clBuildProgram(cl_program program, cl_uint count,
                                               const cl_device_id* devices, const char* options,
                                               void(CL_CALLBACK* notify)(cl_program, void*),
                                               void* data) {
  static Fault& f = fault_for("clBuildProgram", CL_BUILD_PROGRAM_FAILURE);
  if (should_fail(f)) return f.code;
  static auto next = real<decltype(&clBuildProgram)>("clBuildProgram");
  return next(program, count, devices, options, notify, data);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel,
                                                       cl_uint dims, const size_t* offset,
                                                       const size_t* global, const size_t* local,
                                                       cl_uint waits, const cl_event* wait_list,
                                                       cl_event* event) {
  static Fault& f = fault_for("clEnqueueNDRangeKernel", CL_OUT_OF_RESOURCES);
  if (should_fail(f)) return f.code;
  static auto next = real<decltype(&clEnqueueNDRangeKernel)>("clEnqueueNDRangeKernel");
  return next(queue, kernel, dims, offset, global, local, waits, wait_list, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer,
                                                    cl_bool blocking, size_t offset, size_t size,
                                                    void* ptr, cl_uint waits,
                                                    const cl_event* wait_list, cl_event* event) {
  static Fault& f = fault_for("clEnqueueReadBuffer", CL_OUT_OF_RESOURCES);
  const bool fail = should_fail(f);
  if (fail && f.code != kCorrupt) return f.code;
  static auto next = real<decltype(&clEnqueueReadBuffer)>("clEnqueueReadBuffer");
  const cl_int status = next(queue, buffer, blocking, offset, size, ptr, waits, wait_list, event);
  if (fail && status == CL_SUCCESS && size > 0) {
    if (!blocking) clFinish(queue);
    static_cast<unsigned char*>(ptr)[0] ^= 0xff;
  }
  return status;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer,
                                                     cl_bool blocking, size_t offset, size_t size,
                                                     const void* ptr, cl_uint waits,
                                                     const cl_event* wait_list, cl_event* event) {
  static Fault& f = fault_for("clEnqueueWriteBuffer", CL_OUT_OF_RESOURCES);
  if (should_fail(f)) return f.code;
  static auto next = real<decltype(&clEnqueueWriteBuffer)>("clEnqueueWriteBuffer");
  return next(queue, buffer, blocking, offset, size, ptr, waits, wait_list, event);
}

CL_API_ENTRY void* CL_API_CALL clEnqueueMapBuffer(cl_command_queue queue, cl_mem buffer,
                                                  cl_bool blocking, cl_map_flags flags,
                                                  size_t offset, size_t size, cl_uint waits,
                                                  const cl_event* wait_list, cl_event* event,
                                                  cl_int* error) {
  static Fault& f = fault_for("clEnqueueMapBuffer", CL_OUT_OF_RESOURCES);
  const bool fail = should_fail(f);
  if (fail && f.code != kCorrupt) {
    if (error) *error = f.code;
    return nullptr;
  }
  static auto next = real<decltype(&clEnqueueMapBuffer)>("clEnqueueMapBuffer");
  void* data = next(queue, buffer, blocking, flags, offset, size, waits, wait_list, event, error);
  if (fail && data && blocking && (flags & CL_MAP_READ) && size > 0)
    static_cast<unsigned char*>(data)[0] ^= 0xff;
  return data;
}

CL_API_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue queue) {
  static Fault& f = fault_for("clFinish", CL_OUT_OF_RESOURCES);
  if (should_fail(f)) return f.code;
  static auto next = real<decltype(&clFinish)>("clFinish");
  return next(queue);
}

}  // extern "C"
