// CUDA implementation of jacobi2d_step: 32 x 8 threads per block, each thread updating
// `rows_per_thread` cells of its column spaced 8 rows apart (all loads issued before any
// arithmetic), with the update of detail::jacobi_update. With a norm, each thread sums its
// squared updates in float, the block sums them (warp shuffles, then one warp over the warp
// sums) and adds the block's sum with one atomicAdd, as the reference does. Eight rows per
// thread mean a quarter of the reference's same-address atomics (its 32 x 32 blocks): on an
// H100, at 16384^2 with one cell per thread and 32 x 8 blocks, those atomics had doubled the
// step time. The order in which blocks add is not fixed, so the norm's last bits may change from
// run to run (the field never does).
#include <cuda_runtime.h>

#include <cstdint>

#include "detail/backends.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"
#include "launch_geometry.cuh"

namespace funnel::kernels {
namespace detail::cuda {
namespace {

constexpr unsigned full_mask = 0xffffffffU;
constexpr int warps_per_block = block_threads / 32;
constexpr int rows_per_thread = 8;

// Sum of `value` over the block, valid in thread 0.
__device__ float block_sum(float value) {
  __shared__ float warp_sums[warps_per_block];
  for (int offset = 16; offset > 0; offset /= 2) {
    value = add_rn(value, __shfl_down_sync(full_mask, value, offset));
  }
  const int thread = threadIdx.y * blockDim.x + threadIdx.x;
  if (thread % 32 == 0) warp_sums[thread / 32] = value;
  __syncthreads();
  if (thread < 32) {
    value = thread < warps_per_block ? warp_sums[thread] : 0.0F;
    for (int offset = warps_per_block / 2; offset > 0; offset /= 2) {
      value = add_rn(value, __shfl_down_sync(full_mask, value, offset));
    }
  }
  return value;
}

}  // namespace
}  // namespace detail::cuda

/// The Jacobi kernel (named funnel::kernels::jacobi2d in profiles).
template <bool Norm>
__global__ void __launch_bounds__(detail::cuda::block_threads)
    jacobi2d(const float* __restrict__ a, float* __restrict__ a_new,
             detail::cuda::region_geometry g, float* __restrict__ l2_norm) {
  constexpr int rows = detail::cuda::rows_per_thread;
  const std::int64_t i = g.lo[0] + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t j0 =
      g.lo[1] + static_cast<std::int64_t>(blockIdx.y) * blockDim.y * rows + threadIdx.y;
  const std::int64_t sy = g.sy;
  float squared = 0.0F;
  if (i < g.hi[0]) {
    float old_value[rows];
    float value[rows];
#pragma unroll
    for (int r = 0; r < rows; ++r) {
      const std::int64_t j = j0 + static_cast<std::int64_t>(r) * blockDim.y;
      if (j < g.hi[1]) {
        const std::int64_t idx = j * sy + i;
        old_value[r] = __ldg(a + idx);
        value[r] = detail::jacobi_update(__ldg(a + idx + 1), __ldg(a + idx - 1),
                                         __ldg(a + idx + sy), __ldg(a + idx - sy));
      }
    }
#pragma unroll
    for (int r = 0; r < rows; ++r) {
      const std::int64_t j = j0 + static_cast<std::int64_t>(r) * blockDim.y;
      if (j < g.hi[1]) {
        a_new[j * sy + i] = value[r];
        if constexpr (Norm) {
          squared = detail::add_rn(squared, detail::squared_update(value[r], old_value[r]));
        }
      }
    }
  }
  if constexpr (Norm) {
    // Every thread of the block takes part in the reduction, inside the region or not.
    const float sum = detail::cuda::block_sum(squared);
    if (threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(l2_norm, sum);
  }
}

namespace detail::cuda {

void jacobi2d_step(stream_view stream, const field_layout& layout, const float* a, float* a_new,
                   const box& region, float* l2_norm) {
  const region_geometry g = make_geometry(layout, region);
  const dim3 block(block_x, block_y, 1);
  const dim3 grid(blocks_for(region.extent(0), block_x),
                  blocks_for(region.extent(1), block_y * rows_per_thread), 1);
  if (l2_norm != nullptr) {
    jacobi2d<true><<<grid, block, 0, native(stream)>>>(a, a_new, g, l2_norm);
  } else {
    jacobi2d<false><<<grid, block, 0, native(stream)>>>(a, a_new, g, nullptr);
  }
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::kernels::jacobi2d launch");
}

}  // namespace detail::cuda
}  // namespace funnel::kernels
