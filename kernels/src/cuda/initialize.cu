// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// CUDA fills of the initial fields (heat3d_initialize, jacobi2d_initialize): one thread per
// element of the array, values from detail/initial_values.hpp, which the host fills use too (they
// agree to the rounding of each library's sin()); padding in padded rows gets 0.
#include <cuda_runtime.h>

#include <cstdint>

#include "detail/backends.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/detail/initial_values.hpp"
#include "launch_geometry.cuh"

namespace funnel::kernels {
namespace detail::cuda {
namespace {

// Where a rank's allocated array sits in the global grid.
struct placement {
  std::int64_t allocated[3];  // allocated extents of the local array
  std::int64_t first[3];      // global index of allocated cell (0, 0, 0)
  std::int64_t global[3];     // global interior extents
  std::int64_t pitch;         // elements between rows (field_layout::row_pitch)
  std::int64_t lead;          // padding in front of each row (field_layout::lead)
};

// The cell (i, j, k) of array element n; i is outside [0, allocated[0]) for padding.
__device__ inline void cell_of(const placement& p, std::int64_t n, std::int64_t& i, std::int64_t& j,
                               std::int64_t& k) {
  const std::int64_t row = n / p.pitch;
  i = n - row * p.pitch - p.lead;
  j = row % p.allocated[1];
  k = row / p.allocated[1];
}

__device__ inline bool padding(const placement& p, std::int64_t i) {
  return i < 0 || i >= p.allocated[0];
}

placement make_placement(const field_layout& layout, const index3& global_interior,
                         const index3& offset) {
  placement p{};
  for (int axis = 0; axis < 3; ++axis) {
    p.allocated[axis] = layout.allocated(axis);
    p.first[axis] = offset[axis] - layout.halo_along(axis);
    p.global[axis] = global_interior[axis];
  }
  p.pitch = layout.row_pitch();
  p.lead = layout.lead();
  return p;
}

}  // namespace
}  // namespace detail::cuda

/// Fills a rank's field with the heat mode at t = 0 (funnel::kernels::heat3d_fill in profiles).
template <class T>
__global__ void __launch_bounds__(detail::cuda::block_threads)
    heat3d_fill(T* __restrict__ field, detail::cuda::placement p) {
  const std::int64_t cells = p.pitch * p.allocated[1] * p.allocated[2];
  for (std::int64_t n = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; n < cells;
       n += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t i = 0;
    std::int64_t j = 0;
    std::int64_t k = 0;
    detail::cuda::cell_of(p, n, i, j, k);
    field[n] =
        detail::cuda::padding(p, i)
            ? T(0)
            : static_cast<T>(detail::heat_mode_value(p.first[0] + i, p.first[1] + j, p.first[2] + k,
                                                     p.global[0], p.global[1], p.global[2]));
  }
}

/// Fills a rank's part of the Jacobi reference problem (funnel::kernels::jacobi2d_fill).
__global__ void __launch_bounds__(detail::cuda::block_threads)
    jacobi2d_fill(float* __restrict__ a, float* __restrict__ a_new, detail::cuda::placement p) {
  const std::int64_t cells = p.pitch * p.allocated[1];
  for (std::int64_t n = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; n < cells;
       n += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t i = 0;
    std::int64_t j = 0;
    std::int64_t k = 0;
    detail::cuda::cell_of(p, n, i, j, k);
    const std::int64_t gx = p.first[0] + i;
    // The reference numbers rows from its periodic row 0, one below global interior row 0.
    const std::int64_t iy = p.first[1] + j + 1;
    const bool boundary = !detail::cuda::padding(p, i) && (gx == -1 || gx == p.global[0]);
    const float value = boundary ? detail::jacobi_boundary(iy, p.global[1] + 2) : 0.0F;
    a[n] = value;
    if (a_new != nullptr) a_new[n] = value;
  }
}

namespace detail::cuda {
namespace {

unsigned fill_blocks(std::int64_t cells) {
  constexpr std::int64_t max_blocks = 65536;  // grid-stride loops cover the rest
  const std::int64_t blocks = (cells + block_threads - 1) / block_threads;
  return static_cast<unsigned>(blocks < max_blocks ? blocks : max_blocks);
}

}  // namespace

template <class T>
void heat3d_initialize(stream_view stream, const field_layout& layout,
                       const index3& global_interior, const index3& offset, T* field) {
  heat3d_fill<T><<<fill_blocks(layout.allocated_cells()), block_threads, 0, native(stream)>>>(
      field, make_placement(layout, global_interior, offset));
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::kernels::heat3d_fill launch");
}

void jacobi2d_initialize(stream_view stream, const field_layout& layout,
                         const index3& global_interior, const index3& offset, float* a,
                         float* a_new) {
  jacobi2d_fill<<<fill_blocks(layout.allocated_cells()), block_threads, 0, native(stream)>>>(
      a, a_new, make_placement(layout, global_interior, offset));
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::kernels::jacobi2d_fill launch");
}

template void heat3d_initialize<float>(stream_view, const field_layout&, const index3&,
                                       const index3&, float*);
template void heat3d_initialize<double>(stream_view, const field_layout&, const index3&,
                                        const index3&, double*);

}  // namespace detail::cuda
}  // namespace funnel::kernels
