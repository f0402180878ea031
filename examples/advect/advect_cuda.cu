// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The step as a CUDA kernel on the stream funnel gives (built only when funnel has CUDA).
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "advect.hpp"

namespace advect {
namespace {

/// The interior in allocated-array coordinates and where cell (x, y, z) lies in the array
/// (lead + x + y * sy + z * sz: the layout's index(), as plain values, since std::array and
/// index() are host-only).
struct region {
  std::int64_t lo[3];
  std::int64_t hi[3];
  std::int64_t lead;  ///< padding before each row's cell 0 (field_layout::lead())
  std::int64_t sy;    ///< elements from one row to the next (field_layout::row_pitch())
  std::int64_t sz;    ///< elements from one plane to the next (field_layout::plane_pitch())
};

// One thread per cell of an x-y tile, one grid slice per z plane.
__global__ void step_kernel(region r, const double* in, double* out, coefficients k) {
  const std::int64_t x = r.lo[0] + blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t y = r.lo[1] + blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  const std::int64_t z = r.lo[2] + blockIdx.z;
  if (x >= r.hi[0] || y >= r.hi[1]) return;
  const std::int64_t i = z * r.sz + y * r.sy + r.lead + x;
  out[i] = updated(in, i, k);
}

}  // namespace

void step_cuda(funnel::stream_view stream, const funnel::field_layout& layout, const double* in,
               double* out, const coefficients& k) {
  const funnel::box b = layout.interior_box();
  const region r{{b.lo[0], b.lo[1], b.lo[2]},
                 {b.hi[0], b.hi[1], b.hi[2]},
                 layout.lead(),
                 layout.row_pitch(),
                 layout.plane_pitch()};
  const dim3 threads(32, 8, 1);
  const dim3 blocks(static_cast<unsigned>((b.extent(0) + threads.x - 1) / threads.x),
                    static_cast<unsigned>((b.extent(1) + threads.y - 1) / threads.y),
                    static_cast<unsigned>(b.extent(2)));
  // [porting:kernel]
  step_kernel<<<blocks, threads, 0, stream.native_handle()>>>(r, in, out, k);
  // [porting:end]
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("advect step kernel: ") + cudaGetErrorString(status));
  }
}

}  // namespace advect
