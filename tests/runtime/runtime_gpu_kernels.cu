// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime.h>

#include "funnel/error.hpp"
#include "runtime_gpu_kernels.hpp"

namespace funnel::test {
namespace {

__device__ unsigned long long global_time_ns() {
  unsigned long long now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// Spins on the global timer rather than a cycle count, so its length does not depend on clocks.
__global__ void spin(unsigned long long nanoseconds, int* out, int value) {
  const unsigned long long start = global_time_ns();
  while (global_time_ns() - start < nanoseconds) {
  }
  if (out != nullptr) *out = value;
}

__global__ void fill(int* data, std::size_t count, int value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    data[i] = value;
  }
}

}  // namespace

void launch_spin(stream_view stream, unsigned long long nanoseconds, int* out, int value) {
  spin<<<1, 1, 0, stream.native_handle()>>>(nanoseconds, out, value);
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::test::spin");
}

void launch_fill(stream_view stream, int* data, std::size_t count, int value) {
  fill<<<256, 256, 0, stream.native_handle()>>>(data, count, value);
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::test::fill");
}

}  // namespace funnel::test
