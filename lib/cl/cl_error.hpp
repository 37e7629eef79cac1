// OpenCL failures as halo errors: the call, its CL_* name, and what was being run.
#pragma once

#include <string>

#include "cl/cl.hpp"
#include "core/error.hpp"

namespace halo {

// "CL_INVALID_WORK_GROUP_SIZE" for -54; "CL_UNKNOWN_ERROR(-1234)" for codes no header names.
std::string cl_error_name(cl_int code);

class ClError : public Error {
 public:
  // detail names the kernel, its launch sizes or the buffer, when there is one.
  ClError(cl_int code, const std::string& call, const std::string& detail = {});
  cl_int code() const { return code_; }

 private:
  cl_int code_;
};

// A program that failed to compile; log() is the compiler's output.
class BuildError : public ClError {
 public:
  BuildError(cl_int code, const std::string& program, const std::string& log);
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

inline void check(cl_int code, const char* call, const std::string& detail = {}) {
  if (code != CL_SUCCESS) throw ClError(code, call, detail);
}

}  // namespace halo
