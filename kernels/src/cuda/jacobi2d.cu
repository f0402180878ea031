// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// CUDA implementation of jacobi2d_step: 32 x 8 threads per block, each thread updating P
// adjacent x-cells in `rows_per_thread` consecutive rows, the shape of the 3D heat kernel: one
// vector load of P values per row (P = 4 on rows padded to 16 bytes, 2 on even strides, else 1,
// see vector_width), the R + 2 rows of its column and one value on either side in x per row all
// loaded before any arithmetic, so the y-neighbours come from registers. The update is
// detail::jacobi_update. With a norm, each thread sums its squared updates in float, the block
// sums them (warp shuffles, then one warp over the warp sums) and adds the block's sum with one
// atomicAdd: one same-address atomic per P x R x 256 cells (the reference adds once per 32 x 32
// cells; at 16384^2 one atomic per 256 cells had doubled the step time). The order in
// which blocks add is not fixed, so the norm's last bits may change from run to run (the field
// never does).
#include <cuda_runtime.h>

#include <cstdint>

#include "detail/backends.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"
#include "launch_geometry.cuh"
#include "vector_rows.cuh"

namespace funnel::kernels {
namespace detail::cuda {
namespace {

constexpr unsigned full_mask = 0xffffffffU;
constexpr int warps_per_block = block_threads / 32;
constexpr int rows_per_thread = 4;

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

/// The Jacobi kernel (named funnel::kernels::jacobi2d in profiles): each thread updates P
/// adjacent x-cells (one vector load per row) in R consecutive rows.
template <bool Norm, int P>
__global__ void __launch_bounds__(detail::cuda::block_threads)
    jacobi2d(const float* __restrict__ a, float* __restrict__ a_new,
             detail::cuda::region_geometry g, float* __restrict__ l2_norm) {
  constexpr int R = detail::cuda::rows_per_thread;
  // The first column of P cells starts at lo[0] rounded down to a multiple of P, so that every
  // thread's cells are aligned for one vector load; cells outside [lo, hi) are not written.
  const std::int64_t i0 =
      (g.lo[0] / P) * P + (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * P;
  const std::int64_t j0 = g.lo[1] + (detail::cuda::block_row() * blockDim.y + threadIdx.y) * R;
  const std::int64_t sy = g.sy;
  float squared = 0.0F;
  if (i0 < g.hi[0] && j0 < g.hi[1]) {
    const std::int64_t base = j0 * sy + i0;
    if (j0 + R <= g.hi[1]) {
      // x-neighbours of the first and last cell, kept inside the row's halo for masked cells.
      const std::int64_t left = (i0 - 1 < g.lo[0] - 1 ? g.lo[0] - 1 : i0 - 1) - i0;
      const std::int64_t right = (i0 + P > g.hi[0] ? g.hi[0] : i0 + P) - i0;
      float column[R + 2][P];
      float xm[R];
      float xp[R];
#pragma unroll
      for (int r = 0; r < R + 2; ++r) detail::cuda::load_row<P>(a + base + (r - 1) * sy, column[r]);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        xm[r] = __ldg(a + base + r * sy + left);
        xp[r] = __ldg(a + base + r * sy + right);
      }
      const bool all_inside = i0 >= g.lo[0] && i0 + P <= g.hi[0];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float value[P];
#pragma unroll
        for (int p = 0; p < P; ++p) {
          const float west = p == 0 ? xm[r] : column[r + 1][p - 1];
          const float east = p == P - 1 ? xp[r] : column[r + 1][p + 1];
          value[p] = detail::jacobi_update(east, west, column[r + 2][p], column[r][p]);
        }
        float* const row = a_new + base + r * sy;
        if (all_inside) {
          detail::cuda::store_row<P>(row, value);
        } else {
#pragma unroll
          for (int p = 0; p < P; ++p) {
            if (i0 + p >= g.lo[0] && i0 + p < g.hi[0]) row[p] = value[p];
          }
        }
        if constexpr (Norm) {
#pragma unroll
          for (int p = 0; p < P; ++p) {
            if (all_inside || (i0 + p >= g.lo[0] && i0 + p < g.hi[0])) {
              squared = detail::add_rn(squared, detail::squared_update(value[p], column[r + 1][p]));
            }
          }
        }
      }
    } else {  // the last rows of the region: cell by cell
      for (std::int64_t j = j0; j < g.hi[1]; ++j) {
        for (int p = 0; p < P; ++p) {
          if (i0 + p < g.lo[0] || i0 + p >= g.hi[0]) continue;
          const std::int64_t idx = j * sy + i0 + p;
          const float value = detail::jacobi_update(__ldg(a + idx + 1), __ldg(a + idx - 1),
                                                    __ldg(a + idx + sy), __ldg(a + idx - sy));
          a_new[idx] = value;
          if constexpr (Norm) {
            squared = detail::add_rn(squared, detail::squared_update(value, __ldg(a + idx)));
          }
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

template <int P>
void launch(cudaStream_t stream, const region_geometry& g, const float* a, float* a_new,
            float* l2_norm) {
  const std::int64_t first_x = (g.lo[0] / P) * P;
  const dim3 block(block_x, block_y, 1);
  const dim3 grid = grid_with_rows(blocks_for(g.hi[0] - first_x, block_x * P),
                                   blocks_for(g.hi[1] - g.lo[1], block_y * rows_per_thread),
                                   "funnel::kernels::jacobi2d_step");
  if (l2_norm != nullptr) {
    jacobi2d<true, P><<<grid, block, 0, stream>>>(a, a_new, g, l2_norm);
  } else {
    jacobi2d<false, P><<<grid, block, 0, stream>>>(a, a_new, g, nullptr);
  }
}

void jacobi2d_step(stream_view stream, const field_layout& layout, const float* a, float* a_new,
                   const box& region, float* l2_norm) {
  const region_geometry g = make_geometry(layout, region);
  switch (vector_width(g, a, a_new)) {
    case 4:
      launch<4>(native(stream), g, a, a_new, l2_norm);
      break;
    case 2:
      launch<2>(native(stream), g, a, a_new, l2_norm);
      break;
    default:
      launch<1>(native(stream), g, a, a_new, l2_norm);
  }
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::kernels::jacobi2d launch");
}

}  // namespace detail::cuda
}  // namespace funnel::kernels
