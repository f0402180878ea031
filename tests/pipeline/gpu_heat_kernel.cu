// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime.h>

#include <algorithm>

#include "funnel/error.hpp"
#include "gpu_heat_kernel.hpp"

namespace funnel::test {
namespace {

struct launch_geometry {
  long long lo[3];
  long long extent[3];
  long long stride[3];
  bool neighbours[3];
};

// Same operation order as heat_step in stencil_reference.hpp; the _rn intrinsics stop nvcc
// from contracting into FMAs, so results equal the host reference bitwise.
__global__ void heat_step_kernel(launch_geometry g, const double* __restrict__ in,
                                 double* __restrict__ out, double coefficient) {
  const long long cells = g.extent[0] * g.extent[1] * g.extent[2];
  for (long long n = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; n < cells;
       n += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = g.lo[0] + n % g.extent[0];
    const long long j = g.lo[1] + (n / g.extent[0]) % g.extent[1];
    const long long k = g.lo[2] + n / (g.extent[0] * g.extent[1]);
    const long long c = k * g.stride[2] + j * g.stride[1] + i;
    double sum = 0.0;
    double count = 0.0;
    for (int a = 0; a < 3; ++a) {
      if (!g.neighbours[a]) continue;
      sum = __dadd_rn(sum, __dadd_rn(in[c - g.stride[a]], in[c + g.stride[a]]));
      count = __dadd_rn(count, 2.0);
    }
    out[c] = __dadd_rn(in[c], __dmul_rn(coefficient, __dsub_rn(sum, __dmul_rn(count, in[c]))));
  }
}

}  // namespace

void launch_heat_step(stream_view stream, const field_layout& layout, const double* in, double* out,
                      const box& region, double coefficient) {
  launch_geometry g{};
  g.stride[0] = 1;
  g.stride[1] = layout.allocated(0);
  g.stride[2] = layout.allocated(0) * layout.allocated(1);
  for (int a = 0; a < 3; ++a) {
    g.lo[a] = region.lo[a];
    g.extent[a] = region.extent(a);
    g.neighbours[a] = layout.allocated(a) > 1;
  }
  const long long cells = g.extent[0] * g.extent[1] * g.extent[2];
  if (cells == 0) return;
  const int threads = 256;
  const long long blocks = std::min<long long>((cells + threads - 1) / threads, 65535);
  heat_step_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream.native_handle()>>>(
      g, in, out, coefficient);
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::test::heat_step_kernel launch");
}

}  // namespace funnel::test
