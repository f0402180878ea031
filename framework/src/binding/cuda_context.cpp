// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "cuda_context.hpp"

#include "funnel/config.hpp"
#include "funnel/error.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel::detail {

#if FUNNEL_HAS_CUDA
namespace {

[[noreturn]] void refuse(cudaError_t rc, context_failure facts) {
  (void)cudaGetLastError();  // the failure is reported here, not again by a later check
  facts.code = static_cast<int>(rc);
  facts.name = cudaGetErrorName(rc);
  throw cuda_error(context_failure_message(facts), facts.code, facts.name);
}

}  // namespace

int visible_device_count(const context_failure& facts) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc == cudaErrorNoDevice) {
    (void)cudaGetLastError();
    return 0;
  }
  if (rc != cudaSuccess) refuse(rc, facts);
  return count;
}

void create_context(int device, context_failure facts) {
  facts.device = device;
  cudaError_t rc = cudaSetDevice(device);
  // cudaFree(nullptr) creates the primary context where cudaSetDevice does not (CUDA < 12).
  if (rc == cudaSuccess) rc = cudaFree(nullptr);
  if (rc != cudaSuccess) refuse(rc, facts);
}

#else

int visible_device_count(const context_failure& /*facts*/) { return 0; }

void create_context(int /*device*/, context_failure /*facts*/) {}

#endif

}  // namespace funnel::detail
