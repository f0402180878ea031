// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/error.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <sstream>

#include "funnel/config.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel {
namespace {

std::string where(const char* file, int line) {
  std::ostringstream os;
  os << file << ':' << line;
  return os.str();
}

std::string with_context(const std::string& context) {
  return context.empty() ? std::string{} : " (" + context + ")";
}

std::string cuda_error_name(int code) {
#if FUNNEL_HAS_CUDA
  return cudaGetErrorName(static_cast<cudaError_t>(code));
#else
  return "cudaError(" + std::to_string(code) + ")";
#endif
}

std::string cuda_error_string(int code) {
#if FUNNEL_HAS_CUDA
  return cudaGetErrorString(static_cast<cudaError_t>(code));
#else
  (void)code;
  return "CUDA is not compiled into this build";
#endif
}

}  // namespace

out_of_memory::out_of_memory(std::size_t requested, const std::string& pool, std::size_t pool_used,
                             std::size_t pool_reserved, const std::string& detail)
    : error("out of memory: " + std::to_string(requested) + " bytes requested from pool '" + pool +
            "' (used " + std::to_string(pool_used) + " B, reserved " +
            std::to_string(pool_reserved) + " B)" + with_context(detail)),
      requested_(requested),
      used_(pool_used),
      reserved_(pool_reserved) {}

namespace detail {

void check_cuda(int code, const char* call, const char* file, int line,
                const std::string& context) {
  if (code == 0) return;
#if FUNNEL_HAS_CUDA
  // The failed call also set the thread's "last error"; clear it, or a later, unrelated
  // cudaGetLastError() check (after a kernel launch) would report this error a second time.
  (void)cudaGetLastError();
#endif
  const std::string name = cuda_error_name(code);
  constexpr int memory_allocation = 2;  // cudaErrorMemoryAllocation
  if (code == memory_allocation) {
    throw out_of_memory(0, "cuda", 0, 0, name + " in " + call + " at " + where(file, line));
  }
  throw cuda_error("CUDA error " + name + " (" + cuda_error_string(code) + ") in " + call + " at " +
                       where(file, line) + with_context(context),
                   code, name);
}

void log_cuda(int code, const char* call, const char* file, int line) noexcept {
  if (code == 0) return;
  try {
    log_error("CUDA error " + cuda_error_name(code) + " in " + call + " at " + where(file, line) +
              " (ignored in a destructor)");
  } catch (...) {  // NOLINT(bugprone-empty-catch): nothing more can be done while logging
  }
}

void check_mpi(int code, const char* call, const char* file, int line, const std::string& context) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) std::snprintf(text, sizeof text, "?");
  throw mpi_error("MPI error " + std::to_string(code) + " (" + std::string(text, len) + ") in " +
                      call + " at " + where(file, line) + with_context(context),
                  code);
}

void fail_expects(const char* cond, const char* file, int line, const std::string& msg) {
  throw invalid_argument(msg, std::string(" [expected ") + cond + " at " + where(file, line) + "]");
}

void fail_system(int errnum, const char* call, const char* file, int line,
                 const std::string& context) {
  throw system_error(std::string(call) + " failed: " + std::strerror(errnum) + " at " +
                         where(file, line) + with_context(context),
                     errnum);
}

void log_error(const std::string& msg) noexcept {
  std::fprintf(stderr, "funnel: %s\n", msg.c_str());
}

}  // namespace detail
}  // namespace funnel
