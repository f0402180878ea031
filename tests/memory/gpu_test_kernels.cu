// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime.h>

#include "funnel/error.hpp"
#include "gpu_test_kernels.hpp"

namespace funnel::testing {
namespace {

__device__ std::uint64_t global_ns() {
  std::uint64_t now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void spin_kernel(const volatile int* release, std::uint64_t max_ns) {
  const std::uint64_t start = global_ns();
  while (*release == 0 && global_ns() - start < max_ns) __nanosleep(1000);
}

__global__ void copy_words_kernel(std::uint64_t* dst, const std::uint64_t* src, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    dst[i] = src[i];
  }
}

}  // namespace

void launch_spin(cuda_stream_handle stream, const volatile int* release, std::uint64_t max_ns) {
  spin_kernel<<<1, 1, 0, stream>>>(release, max_ns);
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::testing::spin");
}

void launch_copy_words(cuda_stream_handle stream, std::uint64_t* dst, const std::uint64_t* src,
                       std::size_t count) {
  copy_words_kernel<<<64, 256, 0, stream>>>(dst, src, count);
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::testing::copy_words");
}

}  // namespace funnel::testing
