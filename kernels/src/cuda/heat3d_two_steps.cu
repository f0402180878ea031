// CUDA implementation of heat3d_two_steps: two steps of the 3D heat stencil in one launch.
//
// Each block takes a column of 32 x 8 cells of `second` and marches along z through a chunk of
// up to 16 of its planes. Per plane it loads `in` on the column and two cells around it into a
// ring of three shared-memory planes, computes the first step on the column and one cell around
// it into a second ring (from `in` on the cells of `first`; elsewhere it reads `out` as it is,
// which no block writes), and writes the second step of the plane two behind. Which cells a
// thread loads and computes in a plane is worked out once, so a plane costs each thread two
// loads, two first-step cells and one second-step cell. One launch instead of two: when many
// ranks share a GPU under MPS, each launch costs every rank time on the GPU's front end
// (docs/halo.md, "Two steps per launch"). Arithmetic: detail::heat_update_3d, so the result is
// bitwise that of two heat3d_step calls.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "detail/backends.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"
#include "launch_geometry.cuh"

namespace funnel::kernels {
namespace detail::cuda {
namespace {

constexpr int tile_x = 32;
constexpr int tile_y = 8;
constexpr int chunk_z = 16;
constexpr int tile_threads = tile_x * tile_y;
// A plane of the input around a column (two cells deep) and of the first step (one cell deep).
constexpr int in_x = tile_x + 4;
constexpr int in_y = tile_y + 4;
constexpr int mid_x = tile_x + 2;
constexpr int mid_y = tile_y + 2;
// Cells of those planes per thread (432 and 340 cells over 256 threads).
constexpr int in_per_thread = (in_x * in_y + tile_threads - 1) / tile_threads;
constexpr int mid_per_thread = (mid_x * mid_y + tile_threads - 1) / tile_threads;

// The array's extents and the two regions, passed by value.
struct two_step_geometry {
  region_geometry first;
  region_geometry second;
  std::int64_t extent[3];  // allocated cells per axis
};

}  // namespace
}  // namespace detail::cuda

/// The two-step 3D heat kernel (named funnel::kernels::heat3d_two in profiles).
template <class T>
__global__ void __launch_bounds__(detail::cuda::tile_threads)
    heat3d_two(const T* __restrict__ in, T* __restrict__ out, detail::cuda::two_step_geometry g,
               T c) {
  using namespace detail::cuda;
  __shared__ T before[3][in_y * in_x];
  __shared__ T mid[3][mid_y * mid_x];
  const std::int64_t sy = g.second.sy;
  const std::int64_t sz = g.second.sz;
  const std::int64_t ox = g.second.lo[0] + static_cast<std::int64_t>(blockIdx.x) * tile_x;
  const std::int64_t oy = g.second.lo[1] + static_cast<std::int64_t>(blockIdx.y) * tile_y;
  const std::int64_t z_begin = g.second.lo[2] + static_cast<std::int64_t>(blockIdx.z) * chunk_z;
  const std::int64_t z_end = min(z_begin + chunk_z, g.second.hi[2]);
  const int thread = static_cast<int>(threadIdx.y) * tile_x + static_cast<int>(threadIdx.x);
  // Ring slot of plane z (z >= z_begin - 2): 32-bit arithmetic, as a 64-bit remainder is a long
  // instruction sequence and the loop below takes eight per plane.
  const auto slot = [z_first = z_begin - 2](std::int64_t z) {
    return static_cast<int>(z - z_first) % 3;
  };

  // This thread's cells of an input plane and of a first-step plane: offset in the plane, and
  // whether the cell is in the array (-1 when not) / in `first` along x and y.
  std::int64_t in_offset[in_per_thread];
#pragma unroll
  for (int r = 0; r < in_per_thread; ++r) {
    const int q = thread + r * tile_threads;
    const std::int64_t i = ox - 2 + q % in_x;
    const std::int64_t j = oy - 2 + q / in_x;
    const bool inside = q < in_x * in_y && i >= 0 && i < g.extent[0] && j >= 0 && j < g.extent[1];
    in_offset[r] = inside ? j * sy + i : -1;
  }
  std::int64_t mid_offset[mid_per_thread];
  bool mid_first[mid_per_thread];
  int mid_in_before[mid_per_thread];  // the same cell in an input plane
#pragma unroll
  for (int r = 0; r < mid_per_thread; ++r) {
    const int q = thread + r * tile_threads;
    const std::int64_t i = ox - 1 + q % mid_x;
    const std::int64_t j = oy - 1 + q / mid_x;
    const bool inside = q < mid_x * mid_y && i >= 0 && i < g.extent[0] && j >= 0 && j < g.extent[1];
    mid_offset[r] = inside ? j * sy + i : -1;
    mid_in_before[r] = (q / mid_x + 1) * in_x + q % mid_x + 1;
    mid_first[r] = inside && i >= g.first.lo[0] && i < g.first.hi[0] && j >= g.first.lo[1] &&
                   j < g.first.hi[1];
  }
  const std::int64_t i = ox + threadIdx.x;
  const std::int64_t j = oy + threadIdx.y;
  const bool writes = i < g.second.hi[0] && j < g.second.hi[1];
  const int x = static_cast<int>(threadIdx.x) + 1;  // in the first-step plane
  const int y = static_cast<int>(threadIdx.y) + 1;

  // Plane p of the input; then the first step of plane p - 1 (it needs input planes p - 2 ..
  // p); then the second step of plane p - 2 (first-step planes p - 3 .. p - 1).
  for (std::int64_t p = z_begin - 2; p <= z_end + 1; ++p) {
    const bool plane_in = p >= 0 && p < g.extent[2];
#pragma unroll
    for (int r = 0; r < in_per_thread; ++r) {
      const int q = thread + r * tile_threads;
      if (q < in_x * in_y) {
        before[slot(p)][q] =
            plane_in && in_offset[r] >= 0 ? __ldg(in + p * sz + in_offset[r]) : T(0);
      }
    }
    __syncthreads();
    const std::int64_t m = p - 1;
    if (m >= z_begin - 1) {
      const T* below = before[slot(m - 1)];
      const T* here = before[slot(m)];
      const T* above = before[slot(m + 1)];
      const bool m_first = m >= g.first.lo[2] && m < g.first.hi[2];
      const bool m_in = m >= 0 && m < g.extent[2];
#pragma unroll
      for (int r = 0; r < mid_per_thread; ++r) {
        const int q = thread + r * tile_threads;
        if (q >= mid_x * mid_y) continue;
        const int b = mid_in_before[r];
        T value = T(0);
        if (m_first && mid_first[r]) {
          value = detail::heat_update_3d(here[b], here[b - 1], here[b + 1], here[b - in_x],
                                         here[b + in_x], below[b], above[b], c);
        } else if (m_in && mid_offset[r] >= 0) {
          value = out[m * sz + mid_offset[r]];
        }
        mid[slot(m)][q] = value;
      }
    }
    __syncthreads();
    const std::int64_t k = p - 2;
    if (k >= z_begin && writes) {
      const T* below = mid[slot(k - 1)];
      const T* here = mid[slot(k)];
      const T* above = mid[slot(k + 1)];
      const int b = y * mid_x + x;
      out[k * sz + j * sy + i] =
          detail::heat_update_3d(here[b], here[b - 1], here[b + 1], here[b - mid_x],
                                 here[b + mid_x], below[b], above[b], c);
    }
  }
}

namespace detail::cuda {

template <class T>
void heat3d_two_steps(stream_view stream, const field_layout& layout, const T* in, T* out,
                      const box& first, const box& second, T c) {
  two_step_geometry g{make_geometry(layout, first), make_geometry(layout, second), {}};
  for (int axis = 0; axis < 3; ++axis) g.extent[axis] = layout.allocated(axis);
  const unsigned blocks_x = blocks_for(second.extent(0), tile_x);
  const unsigned blocks_y = blocks_for(second.extent(1), tile_y);
  const unsigned blocks_z = blocks_for(second.extent(2), chunk_z);
  FUNNEL_EXPECTS(blocks_y <= 65535 && blocks_z <= 65535,
                 "funnel::kernels::heat3d_two_steps: a region of " +
                     std::to_string(second.extent(1)) + " rows and " +
                     std::to_string(second.extent(2)) + " planes needs more than 65535 blocks of " +
                     std::to_string(tile_y) + " rows or " + std::to_string(chunk_z) + " planes");
  heat3d_two<T><<<dim3(blocks_x, blocks_y, blocks_z), dim3(tile_x, tile_y, 1), 0, native(stream)>>>(
      in, out, g, c);
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::kernels::heat3d_two_steps launch");
}

template void heat3d_two_steps<float>(stream_view, const field_layout&, const float*, float*,
                                      const box&, const box&, float);
template void heat3d_two_steps<double>(stream_view, const field_layout&, const double*, double*,
                                       const box&, const box&, double);

}  // namespace detail::cuda
}  // namespace funnel::kernels
