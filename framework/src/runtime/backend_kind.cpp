// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/runtime/backend_kind.hpp"

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/runtime/detail/backend_checks.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel {

std::string to_string(backend_kind kind) { return kind == backend_kind::cuda ? "cuda" : "host"; }

bool cuda_compiled() noexcept { return FUNNEL_HAS_CUDA != 0; }

namespace detail {

bool cuda_error_means_no_gpu(int code) noexcept {
#if FUNNEL_HAS_CUDA
  return code == static_cast<int>(cudaErrorNoDevice) ||
         code == static_cast<int>(cudaErrorInsufficientDriver);
#else
  (void)code;
  return false;
#endif
}

}  // namespace detail

namespace {

#if FUNNEL_HAS_CUDA
// The devices as the backend request `request` needs them counted: no device and no (or too
// old a) driver mean "no GPU here" (0); any other error is thrown.
int counted_devices(std::string_view request) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc == cudaSuccess) return count;
  (void)cudaGetLastError();
  if (detail::cuda_error_means_no_gpu(static_cast<int>(rc))) return 0;
  throw cuda_error("backend '" + std::string(request) +
                       "': the CUDA runtime cannot count the devices: " + cudaGetErrorName(rc) +
                       " (" + cudaGetErrorString(rc) +
                       "). Under MPS the server may refuse this client (its client limit or "
                       "pool of connections: funnel-run's --mps-max-clients and "
                       "--mps-connection-budget). Use --backend host to run without the GPU",
                   static_cast<int>(rc), cudaGetErrorName(rc));
}
#else
int counted_devices(std::string_view /*request*/) { return 0; }
#endif

}  // namespace

int cuda_device_count() noexcept {
#if FUNNEL_HAS_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

backend_kind select_backend(std::string_view request) {
  if (request == "host") return backend_kind::host;
  if (request == "auto")
    return counted_devices(request) > 0 ? backend_kind::cuda : backend_kind::host;
  if (request == "cuda") {
    if (!cuda_compiled()) {
      throw unsupported(
          "backend 'cuda' requested but this funnel build has no CUDA backend "
          "(rebuild with FUNNEL_ENABLE_CUDA=ON, or use --backend host|auto)");
    }
    if (counted_devices(request) == 0) {
      throw unsupported(
          "backend 'cuda' requested but no CUDA device is visible to this process "
          "(check CUDA_VISIBLE_DEVICES, or use --backend host|auto)");
    }
    return backend_kind::cuda;
  }
  throw invalid_argument("unknown backend '" + std::string(request) +
                         "': allowed values are auto, cuda, host");
}

}  // namespace funnel
