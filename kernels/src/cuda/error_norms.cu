// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// heat3d's error against the exact solution on the GPU: one block per interior plane, each
// thread a fixed set of the plane's cells, reduced by CUB's block reduction (a fixed order for a
// fixed block size); the planes' norms land in pinned host memory and the host adds them in
// plane order. The field never crosses PCIe, and the figures do not depend on the GPU or on
// when the blocks run.
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <cuda/functional>
#include <string>

#include "detail/backends.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/detail/initial_values.hpp"
#include "funnel/runtime/pinned_buffer.hpp"
#include "launch_geometry.cuh"

namespace funnel::kernels {
namespace detail::cuda {
namespace {

constexpr int error_threads = 256;

// A rank's interior in its array, and where it sits in the global grid.
struct interior_placement {
  std::int64_t lo[3];      // first interior cell of the array
  std::int64_t extent[3];  // interior cells
  std::int64_t first[3];   // global index of interior cell lo
  std::int64_t global[3];  // global interior extents
  std::int64_t allocated_y;
  std::int64_t pitch;
  std::int64_t lead;
  double decay;
};

}  // namespace
}  // namespace detail::cuda

/// The error norms of each interior plane (funnel::kernels::heat3d_error_planes in profiles).
template <class T>
__global__ void __launch_bounds__(detail::cuda::error_threads)
    heat3d_error_planes(const T* __restrict__ field, detail::cuda::interior_placement p,
                        error_norms* __restrict__ planes) {
  using block_reduce = cub::BlockReduce<double, detail::cuda::error_threads>;
  __shared__ typename block_reduce::TempStorage storage;
  const std::int64_t plane = blockIdx.x;
  const std::int64_t k = p.lo[2] + plane;
  const std::int64_t cells = p.extent[0] * p.extent[1];
  double max_abs = 0.0;
  double sum = 0.0;
  for (std::int64_t n = threadIdx.x; n < cells; n += blockDim.x) {
    const std::int64_t row = n / p.extent[0];
    const std::int64_t i = n - row * p.extent[0];
    const double exact =
        detail::heat_mode_value(p.first[0] + i, p.first[1] + row, p.first[2] + plane, p.global[0],
                                p.global[1], p.global[2]) *
        p.decay;
    const std::int64_t at = (k * p.allocated_y + p.lo[1] + row) * p.pitch + p.lead + p.lo[0] + i;
    const double diff = static_cast<double>(field[at]) - exact;
    max_abs = fmax(max_abs, fabs(diff));
    sum += diff * diff;
  }
  const double largest = block_reduce(storage).Reduce(max_abs, ::cuda::maximum<double>{});
  __syncthreads();  // the storage is used again
  const double squares = block_reduce(storage).Sum(sum);
  if (threadIdx.x == 0) planes[plane] = {largest, squares, cells};
}

namespace detail::cuda {

template <class T>
error_norms heat3d_error(stream_view stream, const field_layout& layout,
                         const index3& global_interior, const index3& offset, double decay,
                         const T* field) {
  const box interior = layout.interior_box();
  interior_placement p{};
  for (int axis = 0; axis < 3; ++axis) {
    p.lo[axis] = interior.lo[axis];
    p.extent[axis] = interior.hi[axis] - interior.lo[axis];
    p.first[axis] = offset[axis];
    p.global[axis] = global_interior[axis];
  }
  p.allocated_y = layout.allocated(1);
  p.pitch = layout.row_pitch();
  p.lead = layout.lead();
  p.decay = decay;
  error_norms norms;
  if (p.extent[0] <= 0 || p.extent[1] <= 0 || p.extent[2] <= 0) return norms;
  // The grid's x dimension holds up to 2^31 - 1 planes, far more than any array of cells has.
  const auto planes = static_cast<std::size_t>(p.extent[2]);
  const pinned_buffer partial(backend_kind::cuda, planes * sizeof(error_norms));
  auto* out = static_cast<error_norms*>(partial.data());
  heat3d_error_planes<T>
      <<<static_cast<unsigned>(planes), error_threads, 0, native(stream)>>>(field, p, out);
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::kernels::heat3d_error_planes launch");
  FUNNEL_CUDA_TRY(cudaStreamSynchronize(native(stream)), "funnel::kernels::heat3d_error");
  for (std::size_t plane = 0; plane < planes; ++plane) norms.add(out[plane]);
  return norms;
}

template error_norms heat3d_error<float>(stream_view, const field_layout&, const index3&,
                                         const index3&, double, const float*);
template error_norms heat3d_error<double>(stream_view, const field_layout&, const index3&,
                                          const index3&, double, const double*);

}  // namespace detail::cuda
}  // namespace funnel::kernels
