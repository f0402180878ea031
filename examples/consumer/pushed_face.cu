// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// A user's own CUDA kernel on funnel's device-side header (funnel/halo/detail/pushed_exchange.cuh,
// installed with the .hpp headers): it writes each cell it computes into the neighbours' ghosts
// that hold it. Built for whatever CMAKE_CUDA_ARCHITECTURES the consumer chooses, so CI builds
// it for an architecture other than funnel's own default.
#include <funnel/halo/detail/pushed_exchange.cuh>

namespace {

__global__ void push_cells(funnel::pushed_exchange push, const double* values, long long nx) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < nx) funnel::detail::push_value(push, i, 0, 0, values[i]);
}

}  // namespace

/// Enqueues push_cells for a row of `nx` cells on `stream` (funnel-consumer only checks it links).
void launch_push_cells(const funnel::pushed_exchange& push, const double* values, long long nx,
                       cudaStream_t stream) {
  push_cells<<<static_cast<unsigned>((nx + 255) / 256), 256, 0, stream>>>(push, values, nx);
}
