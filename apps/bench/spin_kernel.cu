// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The synthetic workload of `funnel-bench share` (see device_support.hpp).
#include <cuda_runtime.h>

#include "device_support.hpp"
#include "funnel/error.hpp"

namespace funnel::bench {
namespace {

// funnel::bench::spin: a dependent FMA chain per thread; fixed work, so co-resident blocks
// compete for the SM's issue slots exactly as real under-occupying kernels do.
__global__ void spin_kernel(long long iterations, float* sink) {
  const int tid = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  float x = 1.0f + static_cast<float>(tid) * 1e-6f;
  for (long long i = 0; i < iterations; ++i) x = fmaf(x, 0.999999f, 1e-7f);
  if (x == -1.0f) sink[tid] = x;  // never true; keeps the chain alive
}

}  // namespace

namespace detail {

void launch_spin_kernel(cuda_stream_handle stream, int blocks, long long iterations, float* sink) {
  spin_kernel<<<blocks, spin_threads_per_block, 0, stream>>>(iterations, sink);
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::bench::spin launch");
}

}  // namespace detail
}  // namespace funnel::bench
