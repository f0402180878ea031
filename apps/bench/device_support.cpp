// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "device_support.hpp"

#include <cstdlib>

#include "funnel/config.hpp"
#include "funnel/error.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel::bench {
namespace {

#if FUNNEL_HAS_CUDA
std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
#endif

// The host counterpart of the spin kernel: the same dependent FMA chain, one per block.
void spin_on_host(int blocks, long long iterations, float* sink) {
  for (int b = 0; b < blocks; ++b) {
    float x = 1.0f + static_cast<float>(b) * 1e-3f;
    for (long long i = 0; i < iterations; ++i) x = x * 0.999999f + 1e-7f;
    if (x == -1.0f) sink[b] = x;  // never true; keeps the chain alive
  }
}

}  // namespace

void* raw_allocate(backend_kind backend, std::size_t bytes) {
  FUNNEL_EXPECTS(bytes > 0, "raw_allocate of 0 bytes: ask for at least one byte");
  void* ptr = nullptr;
  if (backend == backend_kind::cuda) {
#if FUNNEL_HAS_CUDA
    FUNNEL_CUDA_TRY(cudaMalloc(&ptr, bytes), "funnel-bench raw_allocate");
#else
    throw unsupported("raw_allocate: the CUDA backend is not compiled into this build");
#endif
  } else {
    ptr = std::malloc(bytes);
    if (ptr == nullptr) throw out_of_memory(bytes, "malloc", 0, 0, "std::malloc returned null");
  }
  return ptr;
}

void raw_free(backend_kind backend, void* ptr) noexcept {
  if (ptr == nullptr) return;
  if (backend == backend_kind::cuda) {
#if FUNNEL_HAS_CUDA
    FUNNEL_CUDA_LOG(cudaFree(ptr));
#endif
  } else {
    std::free(ptr);
  }
}

void spin(stream_view stream, int blocks, long long iterations, float* sink) {
  FUNNEL_EXPECTS(blocks >= 1 && iterations >= 1, "spin: blocks=" + std::to_string(blocks) +
                                                     " iterations=" + std::to_string(iterations) +
                                                     " are invalid: both must be at least 1");
  if (stream.is_cuda()) {
#if FUNNEL_HAS_CUDA
    detail::launch_spin_kernel(stream.native_handle(), blocks, iterations, sink);
#else
    throw unsupported("spin: the CUDA backend is not compiled into this build");
#endif
  } else {
    spin_on_host(blocks, iterations, sink);
  }
}

std::string cuda_runtime_version() {
#if FUNNEL_HAS_CUDA
  int v = 0;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) return version_text(v);
#endif
  return "";
}

std::string cuda_driver_version() {
#if FUNNEL_HAS_CUDA
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0) return version_text(v);
#endif
  return "";
}

}  // namespace funnel::bench
