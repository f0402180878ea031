// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// CUDA implementation of heat3d_two_steps: two steps of the 3D heat stencil in one launch.
//
// Each block takes a column of TileX x TileY cells of `second` and marches along z through a
// chunk of its planes; each thread owns Rows cells of the column, one above the other. Input
// planes (the column and two cells around it) go into a ring of shared-memory planes by
// asynchronous copies issued `prefetch` planes ahead, so that loads stay in flight while the
// block computes; with them go the cells of the first step that the second reads but the first
// does not write (outside `first`: read from `out` as they are, no block writes them). The first
// step of the column and one cell around it goes into a second ring; the second step is written
// to `out`. One barrier per plane: a plane's first step is computed from input planes that landed
// before it, its second step from first-step planes written before it, one plane later.
// z-neighbours are carried in registers from plane to plane, and a thread's own rows give each
// other their y-neighbours, so that a cell reads three to five values from shared memory: an
// earlier kernel, with a barrier more, one cell per thread and synchronous loads, was
// instruction bound and slower than two heat3d_step launches (docs/halo.md, "The second
// kernel"). One launch instead of two: when many ranks share a GPU under MPS, each launch costs
// every rank time on the GPU's front end (docs/halo.md, "Two steps per launch"). Arithmetic:
// detail::heat_update_3d, so the result is bitwise that of two heat3d_step calls.
#include <cuda_pipeline.h>
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

// A column of TileX x TileY cells of the second step, each thread owning Rows of them one above
// the other: the cells of an input plane (two cells around the column) and of a first-step
// plane (one cell around it), how many of each one thread takes, and the rings: input planes
// in flight `prefetch` ahead of the one consumed (float 4, double 3: the rings of both fit the
// 48 KiB of static shared memory), the two read and the one being filled; first-step planes
// from the one two below the second step's to the last whose boundary cells are in flight.
template <class T, int TileX, int TileY, int Rows>
struct column_shape {
  static_assert(TileY % Rows == 0, "a thread's rows must divide the column");
  static constexpr int threads_y = TileY / Rows;
  static constexpr int threads = TileX * threads_y;
  static constexpr int in_x = TileX + 4;
  static constexpr int in_cells = in_x * (TileY + 4);
  static constexpr int mid_x = TileX + 2;
  static constexpr int mid_cells = mid_x * (TileY + 2);
  static constexpr int in_per_thread = (in_cells + threads - 1) / threads;
  static constexpr int mid_per_thread = (mid_cells + threads - 1) / threads;
  static constexpr int prefetch = sizeof(T) == 4 ? 4 : 3;
  static constexpr int in_ring = prefetch + 3;
  static constexpr int mid_ring = prefetch + 4;
  static_assert((in_ring * in_cells + mid_ring * mid_cells) * sizeof(T) <= 48 * 1024,
                "the rings must fit in static shared memory");
  static_assert(mid_per_thread <= 32, "a thread's first-step cells are a 32-bit mask");
};

// The array's extents, the two regions and the planes of one block's chunk, passed by value.
struct two_step_geometry {
  region_geometry first;
  region_geometry second;
  std::int64_t array_lo[3];  // the allocated cells, in the regions' coordinates (make_geometry)
  std::int64_t array_hi[3];
  std::int64_t chunk;  // planes of `second` per block
};

__device__ inline bool inside(std::int64_t v, std::int64_t lo, std::int64_t hi) {
  return v >= lo && v < hi;
}

}  // namespace
}  // namespace detail::cuda

/// The two-step 3D heat kernel (named funnel::kernels::heat3d_two in profiles).
template <class T, int TileX, int TileY, int Rows>
__global__ void __launch_bounds__(detail::cuda::column_shape<T, TileX, TileY, Rows>::threads)
    heat3d_two(const T* __restrict__ in, T* __restrict__ out, detail::cuda::two_step_geometry g,
               T c) {
  using namespace detail::cuda;
  using shape = column_shape<T, TileX, TileY, Rows>;
  __shared__ T before[shape::in_ring][shape::in_cells];
  __shared__ T mid[shape::mid_ring][shape::mid_cells];
  const std::int64_t sy = g.second.sy;
  const std::int64_t sz = g.second.sz;
  const std::int64_t ox = g.second.lo[0] + static_cast<std::int64_t>(blockIdx.x) * TileX;
  const std::int64_t oy = g.second.lo[1] + static_cast<std::int64_t>(blockIdx.y) * TileY;
  const std::int64_t z_begin = g.second.lo[2] + static_cast<std::int64_t>(blockIdx.z) * g.chunk;
  const std::int64_t z_end = min(z_begin + g.chunk, g.second.hi[2]);
  const std::int64_t z_first = z_begin - 2;  // the chunk's first input plane
  const int thread = static_cast<int>(threadIdx.y) * TileX + static_cast<int>(threadIdx.x);
  // Ring slots, counted from a plane below any that is used (32-bit: cheap).
  const auto in_slot = [z_first](std::int64_t z) {
    return static_cast<int>(z - z_first + 2) % shape::in_ring;
  };
  const auto mid_slot = [z_first](std::int64_t z) {
    return static_cast<int>(z - z_first + 2) % shape::mid_ring;
  };
  // Cell r of this thread's share of a plane of `cells` cells (false past the plane's end).
  const auto takes = [thread](int r, int cells) {
    return r < cells / shape::threads || thread + r * shape::threads < cells;
  };

  // This thread's input cells: offset in a plane (-1 outside the array's x-y).
  int in_offset[shape::in_per_thread];
#pragma unroll
  for (int r = 0; r < shape::in_per_thread; ++r) {
    const int q = thread + r * shape::threads;
    const std::int64_t i = ox - 2 + q % shape::in_x;
    const std::int64_t j = oy - 2 + q / shape::in_x;
    const bool inside_xy =
        inside(i, g.array_lo[0], g.array_hi[0]) && inside(j, g.array_lo[1], g.array_hi[1]);
    in_offset[r] = takes(r, shape::in_cells) && inside_xy ? static_cast<int>(j * sy + i) : -1;
  }
  // This thread's first-step cells: where they sit in an input plane; which of them the second
  // step reads (`needed`) and which of those lie in `first` along x and y (bit r: cell r).
  int mid_at[shape::mid_per_thread];
  unsigned needed = 0;
  unsigned in_first = 0;
#pragma unroll
  for (int r = 0; r < shape::mid_per_thread; ++r) {
    const int q = thread + r * shape::threads;
    const std::int64_t i = ox - 1 + q % shape::mid_x;
    const std::int64_t j = oy - 1 + q / shape::mid_x;
    mid_at[r] = (q / shape::mid_x + 1) * shape::in_x + q % shape::mid_x + 1;
    const bool reads = takes(r, shape::mid_cells) &&
                       inside(i, g.second.lo[0] - 1, g.second.hi[0] + 1) &&
                       inside(j, g.second.lo[1] - 1, g.second.hi[1] + 1);
    const bool writes =
        inside(i, g.first.lo[0], g.first.hi[0]) && inside(j, g.first.lo[1], g.first.hi[1]);
    needed |= static_cast<unsigned>(reads) << r;
    in_first |= static_cast<unsigned>(reads && writes) << r;
  }

  // One group of asynchronous copies per plane P (empty past the chunk, so that every thread
  // commits one group per plane and waits by count): input plane P, and the cells of first-step
  // plane P - 1 that the second step reads but the first does not write, from `out`.
  const auto issue = [&](std::int64_t P) {
    if (P <= z_end + 1) {
      T* const to = before[in_slot(P)];
      const bool plane_in = inside(P, g.array_lo[2], g.array_hi[2]);
      const T* const from = in + P * sz;
#pragma unroll
      for (int r = 0; r < shape::in_per_thread; ++r) {
        if (!takes(r, shape::in_cells)) continue;
        const int q = thread + r * shape::threads;
        if (plane_in && in_offset[r] >= 0) {
          __pipeline_memcpy_async(to + q, from + in_offset[r], sizeof(T));
        } else {
          to[q] = T(0);
        }
      }
    }
    const std::int64_t m = P - 1;
    const unsigned kept = needed & (inside(m, g.first.lo[2], g.first.hi[2]) ? ~in_first : ~0U);
    if (m >= z_begin - 1 && m <= z_end && kept != 0) {
      T* const to = mid[mid_slot(m)];
      const T* const from = out + m * sz;
#pragma unroll
      for (int r = 0; r < shape::mid_per_thread; ++r) {
        if ((kept >> r & 1U) == 0) continue;
        const int q = thread + r * shape::threads;
        const std::int64_t i = ox - 1 + q % shape::mid_x;
        const std::int64_t j = oy - 1 + q / shape::mid_x;
        __pipeline_memcpy_async(to + q, from + j * sy + i, sizeof(T));
      }
    }
    __pipeline_commit();
  };

  // This thread's second-step cells: column i, rows j0 .. j0 + Rows - 1 (bit r: row r is in
  // `second`), and where row 0 sits in a first-step plane.
  const std::int64_t i = ox + threadIdx.x;
  const std::int64_t j0 = oy + static_cast<std::int64_t>(threadIdx.y) * Rows;
  unsigned rows = 0;
#pragma unroll
  for (int r = 0; r < Rows; ++r) rows |= static_cast<unsigned>(j0 + r < g.second.hi[1]) << r;
  if (i >= g.second.hi[0]) rows = 0;
  const int at =
      (static_cast<int>(threadIdx.y) * Rows + 1) * shape::mid_x + static_cast<int>(threadIdx.x) + 1;
  // z-neighbours carried from plane to plane: the input at this thread's first-step cells and
  // the first step at its rows, one and two planes below the plane read last.
  T in_below[shape::mid_per_thread] = {};
  T in_here[shape::mid_per_thread] = {};
  T mid_below[Rows] = {};
  T mid_here[Rows] = {};

  for (int k = 0; k <= shape::prefetch; ++k) issue(z_first + k);
  // Iteration p: input plane p has landed; the first step of plane p - 1 (input planes p - 2 ..
  // p) and the second step of plane p - 3 (first-step planes p - 4 .. p - 2) are computed.
  for (std::int64_t p = z_first; p <= z_end + 2; ++p) {
    __pipeline_wait_prior(shape::prefetch);
    __syncthreads();
    issue(p + shape::prefetch + 1);
    if (p <= z_end + 1) {
      const std::int64_t m = p - 1;
      const T* const plane = before[in_slot(m)];
      const T* const above = before[in_slot(p)];
      T* const to = mid[mid_slot(m)];
      const bool computes = m >= z_begin - 1 && inside(m, g.first.lo[2], g.first.hi[2]);
#pragma unroll
      for (int r = 0; r < shape::mid_per_thread; ++r) {
        if (!takes(r, shape::mid_cells)) continue;
        const int b = mid_at[r];
        const T up = above[b];
        if (computes && (in_first >> r & 1U) != 0) {
          to[thread + r * shape::threads] =
              detail::heat_update_3d(in_here[r], plane[b - 1], plane[b + 1], plane[b - shape::in_x],
                                     plane[b + shape::in_x], in_below[r], up, c);
        }
        in_below[r] = in_here[r];
        in_here[r] = up;
      }
    }
    const std::int64_t k = p - 3;
    if (k + 1 >= z_begin - 1) {
      T up[Rows];
      const T* const upper = mid[mid_slot(k + 1)];
#pragma unroll
      for (int r = 0; r < Rows; ++r) up[r] = upper[at + r * shape::mid_x];
      if (k >= z_begin && rows != 0) {
        const T* const here = mid[mid_slot(k)];
        const T south = here[at - shape::mid_x];
        const T north = here[at + Rows * shape::mid_x];
        T* const row = out + k * sz + j0 * sy + i;
#pragma unroll
        for (int r = 0; r < Rows; ++r) {
          const int b = at + r * shape::mid_x;
          const T value = detail::heat_update_3d(
              mid_here[r], here[b - 1], here[b + 1], r == 0 ? south : mid_here[r - 1],
              r == Rows - 1 ? north : mid_here[r + 1], mid_below[r], up[r], c);
          if ((rows >> r & 1U) != 0) row[r * sy] = value;
        }
      }
#pragma unroll
      for (int r = 0; r < Rows; ++r) {
        mid_below[r] = mid_here[r];
        mid_here[r] = up[r];
      }
    }
  }
}

namespace detail::cuda {
namespace {

template <class T, int TileX, int TileY, int Rows>
void launch_two(cudaStream_t stream, two_step_geometry g, const box& second, const T* in, T* out,
                T c) {
  using shape = column_shape<T, TileX, TileY, Rows>;
  const unsigned blocks_x = blocks_for(second.extent(0), TileX);
  const unsigned blocks_y = blocks_for(second.extent(1), TileY);
  const unsigned blocks_z = blocks_for(second.extent(2), static_cast<int>(g.chunk));
  FUNNEL_EXPECTS(blocks_y <= 65535 && blocks_z <= 65535,
                 "funnel::kernels::heat3d_two_steps: a region of " +
                     std::to_string(second.extent(1)) + " rows and " +
                     std::to_string(second.extent(2)) + " planes needs more than 65535 blocks of " +
                     std::to_string(TileY) + " rows or " + std::to_string(g.chunk) + " planes");
  heat3d_two<T, TileX, TileY, Rows>
      <<<dim3(blocks_x, blocks_y, blocks_z), dim3(TileX, shape::threads_y, 1), 0, stream>>>(in, out,
                                                                                            g, c);
}

}  // namespace

template <class T>
void heat3d_two_steps(stream_view stream, const field_layout& layout, const T* in, T* out,
                      const box& first, const box& second, T c, const heat3d_block_shape& shape) {
  FUNNEL_EXPECTS(layout.plane_pitch() < (std::int64_t{1} << 31),
                 "funnel::kernels::heat3d_two_steps: planes of " +
                     std::to_string(layout.row_pitch()) + " x " +
                     std::to_string(layout.allocated(1)) +
                     " cells exceed the 2^31 cells this kernel indexes with 32 bits");
  const region_geometry array = make_geometry(
      layout, box{{0, 0, 0}, {layout.allocated(0), layout.allocated(1), layout.allocated(2)}});
  two_step_geometry g{make_geometry(layout, first), make_geometry(layout, second), {}, {}, 0};
  for (int axis = 0; axis < 3; ++axis) {
    g.array_lo[axis] = array.lo[axis];
    g.array_hi[axis] = array.hi[axis];
  }
  g.chunk = shape.planes;
  const cudaStream_t s = native(stream);
  // The shapes of heat3d_two_steps_shapes(); the front end refuses any other.
  if (shape.tile_y == 8 && shape.rows == 2) {
    launch_two<T, 32, 8, 2>(s, g, second, in, out, c);
  } else if (shape.tile_y == 8 && shape.rows == 4) {
    launch_two<T, 32, 8, 4>(s, g, second, in, out, c);
  } else if constexpr (sizeof(T) == 4) {
    if (shape.tile_y == 16 && shape.rows == 2) {
      launch_two<T, 32, 16, 2>(s, g, second, in, out, c);
    } else {
      launch_two<T, 32, 16, 4>(s, g, second, in, out, c);
    }
  }
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::kernels::heat3d_two_steps launch");
}

template void heat3d_two_steps<float>(stream_view, const field_layout&, const float*, float*,
                                      const box&, const box&, float, const heat3d_block_shape&);
template void heat3d_two_steps<double>(stream_view, const field_layout&, const double*, double*,
                                       const box&, const box&, double, const heat3d_block_shape&);

}  // namespace detail::cuda
}  // namespace funnel::kernels
