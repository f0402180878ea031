// CUDA implementation of heat3d_step.
//
// 3D: one thread per (i, j) column marches along z through a slab of the region, keeping the
// k-1, k and k+1 values in registers, so every input value is loaded from global memory once
// for its own column (plus once by each of its four in-plane neighbours, which L1 serves: the
// block's warps read adjacent rows). The slab height is chosen so the grid has a few waves of
// blocks; each slab re-reads only its two bounding planes.
// 2D and 1D: one thread per cell.
// Arithmetic: detail::heat_update_{1,2,3}d, the expression the host and Kokkos kernels use.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "detail/backends.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"
#include "launch_geometry.cuh"

namespace funnel::kernels {

/// The heat3d kernel (named funnel::kernels::heat3d in profiles).
template <class T, int Dims>
__global__ void __launch_bounds__(detail::cuda::block_threads)
    heat3d(const T* __restrict__ in, T* __restrict__ out, detail::cuda::region_geometry g,
           std::int64_t slab, T c) {
  const std::int64_t i = g.lo[0] + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t j = g.lo[1] + static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= g.hi[0] || j >= g.hi[1]) return;
  if constexpr (Dims == 3) {
    const std::int64_t k_begin = g.lo[2] + static_cast<std::int64_t>(blockIdx.z) * slab;
    const std::int64_t k_end = k_begin + slab < g.hi[2] ? k_begin + slab : g.hi[2];
    const std::int64_t sy = g.sy;
    const std::int64_t sz = g.sz;
    std::int64_t idx = k_begin * sz + j * sy + i;
    T below = __ldg(in + idx - sz);
    T center = __ldg(in + idx);
#pragma unroll 4
    for (std::int64_t k = k_begin; k < k_end; ++k) {
      const T above = __ldg(in + idx + sz);
      out[idx] =
          detail::heat_update_3d(center, __ldg(in + idx - 1), __ldg(in + idx + 1),
                                 __ldg(in + idx - sy), __ldg(in + idx + sy), below, above, c);
      below = center;
      center = above;
      idx += sz;
    }
  } else if constexpr (Dims == 2) {
    const std::int64_t idx = j * g.sy + i;
    out[idx] = detail::heat_update_2d(__ldg(in + idx), __ldg(in + idx - 1), __ldg(in + idx + 1),
                                      __ldg(in + idx - g.sy), __ldg(in + idx + g.sy), c);
  } else {
    out[i] = detail::heat_update_1d(__ldg(in + i), __ldg(in + i - 1), __ldg(in + i + 1), c);
  }
}

namespace detail::cuda {
namespace {

// Blocks resident on the current device at once (cached per device: queried once).
int resident_blocks() {
  static thread_local int cached_device = -1;
  static thread_local int cached_blocks = 0;
  int device = 0;
  FUNNEL_CUDA_TRY(cudaGetDevice(&device), "funnel::kernels::heat3d");
  if (device != cached_device) {
    int sms = 0;
    FUNNEL_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
                    "funnel::kernels::heat3d");
    int threads_per_sm = 0;
    FUNNEL_CUDA_TRY(
        cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device),
        "funnel::kernels::heat3d");
    cached_blocks = sms * std::max(1, threads_per_sm / block_threads);
    cached_device = device;
  }
  return cached_blocks;
}

// Slab height along z: about four waves of blocks, but slabs of at least 16 planes so the two
// planes each slab re-reads stay a small share of its traffic.
std::int64_t slab_height(std::int64_t nz, std::int64_t column_blocks) {
  constexpr std::int64_t waves = 4;
  constexpr std::int64_t min_slab = 16;
  const std::int64_t wanted_slabs =
      std::max<std::int64_t>(1, (waves * resident_blocks() + column_blocks - 1) / column_blocks);
  const std::int64_t slab = (nz + wanted_slabs - 1) / wanted_slabs;
  return std::min(nz, std::max(min_slab, slab));
}

}  // namespace

template <class T>
void heat3d_step(stream_view stream, const field_layout& layout, const T* in, T* out,
                 const box& region, T c) {
  const region_geometry g = make_geometry(layout, region);
  dim3 block(block_x, block_y, 1);
  dim3 grid(blocks_for(region.extent(0), block_x), blocks_for(region.extent(1), block_y), 1);
  if (layout.allocated(2) > 1) {
    const std::int64_t slab =
        slab_height(region.extent(2), static_cast<std::int64_t>(grid.x) * grid.y);
    grid.z = blocks_for(region.extent(2), static_cast<int>(slab));
    heat3d<T, 3><<<grid, block, 0, native(stream)>>>(in, out, g, slab, c);
  } else if (layout.allocated(1) > 1) {
    heat3d<T, 2><<<grid, block, 0, native(stream)>>>(in, out, g, 1, c);
  } else {
    heat3d<T, 1><<<dim3(blocks_for(region.extent(0), block_threads)), dim3(block_threads), 0,
                   native(stream)>>>(in, out, g, 1, c);
  }
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::kernels::heat3d launch");
}

template void heat3d_step<float>(stream_view, const field_layout&, const float*, float*, const box&,
                                 float);
template void heat3d_step<double>(stream_view, const field_layout&, const double*, double*,
                                  const box&, double);

}  // namespace detail::cuda
}  // namespace funnel::kernels
