#include "funnel/runtime/backend_kind.hpp"

#include "funnel/config.hpp"
#include "funnel/error.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel {

std::string to_string(backend_kind kind) { return kind == backend_kind::cuda ? "cuda" : "host"; }

bool cuda_compiled() noexcept { return FUNNEL_HAS_CUDA != 0; }

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
  if (request == "auto") return cuda_device_count() > 0 ? backend_kind::cuda : backend_kind::host;
  if (request == "cuda") {
    if (!cuda_compiled()) {
      throw unsupported(
          "backend 'cuda' requested but this funnel build has no CUDA backend "
          "(rebuild with FUNNEL_ENABLE_CUDA=ON, or use --backend host|auto)");
    }
    if (cuda_device_count() == 0) {
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
