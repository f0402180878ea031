// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// CUDA implementation of heat3d_step.
//
// 3D: each thread updates P adjacent x-cells in K consecutive z-planes, with one vector load of
// P values per row: P is the widest vector of at most 16 bytes that the row and plane strides
// and both arrays are aligned for (vector_width: float 4 or double 2 on rows padded to 16 bytes,
// 2 on the n + 2 rows of an even n, else 1). It issues all its loads before any arithmetic: the
// K + 2 centre rows of its column, the K rows on either side in y and one value on either side
// in x per plane, so each thread keeps several independent requests in flight (a kernel that
// marched one plane at a time through a long z-slab had one, and stayed far from a device copy).
// x-neighbours inside the block come from L1 and the two
// extra z-planes of each chunk from L2, as long as neighbouring chunks run close in time: when a
// plane is too large for that (more than `large_plane_bytes`), blocks are issued in z order
// inside groups of `group_rows` rows (a 1D grid decoded by `swizzled`), and K = 4 halves the
// share of re-read planes. x counts memory columns (make_geometry), so on rows padded with
// field_layout::row_align every row's interior starts a column of P and no column straddles
// its edge. How close each row layout comes to a device copy, and what holds the kernel there:
// docs/performance.md, "Kernels against a device copy" (`funnel-bench stencil --row-align`).
// 2D and 1D: one thread per cell.
// Arithmetic: detail::heat_update_{1,2,3}d, the expression the host and Kokkos kernels use.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "detail/backends.hpp"
#include "funnel/error.hpp"
#include "funnel/halo/detail/pushed_exchange.cuh"
#include "funnel/halo/pushed_exchange.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"
#include "launch_geometry.cuh"
#include "vector_rows.cuh"

namespace funnel::kernels {
namespace detail::cuda {
namespace {

// 3D blocks: 256 threads, 64 x 4 where the region is wide, so one warp covers 64 (P = 1) or
// 128 (P = 2) cells of a row. A narrow region (a grid split along x among many ranks sharing a
// GPU: 24 cells per rank) would leave most of such a block's threads idle and launch several
// times the blocks it needs; it gets 32 x 8 or 16 x 16 (block_shape_for).
constexpr int block_threads_3d = 256;
constexpr int widest_tile_x = 64;
constexpr int narrowest_tile_x = 16;
// The fewest rows a 3D block covers (the widest blocks' height).
constexpr int shortest_tile_y = block_threads_3d / widest_tile_x;
// Planes a thread updates: 2 in the 3D grid; 4 in the one-dimensional swizzled grid that large
// planes take, where the z-ordered groups keep the planes either side of a chunk in L2.
constexpr int planes_per_thread = 2;
constexpr int planes_per_thread_swizzled = 4;
// Planes larger than this do not stay in L2 long enough for the next z-chunk to re-read its
// bounding planes there (H100: 50 MB L2; measured 1024^2 doubles = 8.4 MB per plane).
constexpr std::int64_t large_plane_bytes = std::int64_t{6} << 20;
constexpr unsigned group_rows = 128;

// The blocks of a 3D launch: counts per axis, and the rows of one z-ordered group.
struct block_grid {
  unsigned x;
  unsigned y;
  unsigned z;
  unsigned group_y;  // blocks along y per group (swizzled order only)
};

// Block coordinates of a 1D launch: groups of `group_y` block rows, and inside a group all of
// its blocks of one z-chunk before the next chunk.
__device__ inline uint3 swizzled(unsigned block, const block_grid& grid) {
  const unsigned per_group = grid.x * grid.group_y * grid.z;
  const unsigned group = block / per_group;
  const unsigned rest = block % per_group;
  const unsigned rows = min(grid.group_y, grid.y - group * grid.group_y);
  const unsigned per_chunk = grid.x * rows;
  const unsigned in_chunk = rest % per_chunk;
  return make_uint3(in_chunk % grid.x, group * grid.group_y + in_chunk / grid.x, rest / per_chunk);
}

}  // namespace
}  // namespace detail::cuda

namespace detail::cuda {

/// The cells of one thread of the 3D kernel; with `push` (Push) each value on a face of the
/// pushed exchange also goes into the neighbour's ghosts. Returns whether the thread holds such
/// a cell (false without Push).
template <class T, int P, int K, bool Swizzled, bool Push>
__device__ __forceinline__ bool heat3d_3d_cells(const T* __restrict__ in, T* __restrict__ out,
                                                const region_geometry& g, const block_grid& grid,
                                                T c, const pushed_exchange* push) {
  const uint3 b = Swizzled ? detail::cuda::swizzled(blockIdx.x, grid) : blockIdx;
  // The first column of P cells starts at lo[0] rounded down to a multiple of P, so that every
  // thread's cells are aligned for one vector load; cells outside [lo, hi) are not written.
  const std::int64_t i0 =
      (g.lo[0] / P) * P + (static_cast<std::int64_t>(b.x) * blockDim.x + threadIdx.x) * P;
  const std::int64_t j = g.lo[1] + static_cast<std::int64_t>(b.y) * blockDim.y + threadIdx.y;
  const std::int64_t k0 = g.lo[2] + static_cast<std::int64_t>(b.z) * K;
  if (i0 >= g.hi[0] || j >= g.hi[1]) return false;
  const std::int64_t sy = g.sy;
  const std::int64_t sz = g.sz;
  const std::int64_t base = k0 * sz + j * sy + i0;
  bool touches = false;
  if constexpr (Push) {
    const std::int64_t lo[3] = {i0 < g.lo[0] ? g.lo[0] : i0, j, k0};
    const std::int64_t hi[3] = {i0 + P > g.hi[0] ? g.hi[0] : i0 + P, j + 1,
                                k0 + K > g.hi[2] ? g.hi[2] : k0 + K};
    touches = funnel::detail::touches_face(*push, lo, hi);
  }

  if (k0 + K > g.hi[2]) {  // the last, shorter z-chunk: cell by cell
    for (std::int64_t k = k0; k < g.hi[2]; ++k) {
      for (int p = 0; p < P; ++p) {
        if (i0 + p < g.lo[0] || i0 + p >= g.hi[0]) continue;
        const std::int64_t idx = (k - k0) * sz + base + p;
        const T value = heat_update_3d(__ldg(in + idx), __ldg(in + idx - 1), __ldg(in + idx + 1),
                                       __ldg(in + idx - sy), __ldg(in + idx + sy),
                                       __ldg(in + idx - sz), __ldg(in + idx + sz), c);
        out[idx] = value;
        if constexpr (Push) {
          if (touches) funnel::detail::push_value(*push, i0 + p, j, k, value);
        }
      }
    }
    return touches;
  }

  // x-neighbours of the first and last cell, kept inside the row's halo for masked cells.
  const std::int64_t left = (i0 - 1 < g.lo[0] - 1 ? g.lo[0] - 1 : i0 - 1) - i0;
  const std::int64_t right = (i0 + P > g.hi[0] ? g.hi[0] : i0 + P) - i0;
  T column[K + 2][P];
  T ym[K][P];
  T yp[K][P];
  T xm[K];
  T xp[K];
#pragma unroll
  for (int q = 0; q < K + 2; ++q) detail::cuda::load_row<P>(in + base + (q - 1) * sz, column[q]);
#pragma unroll
  for (int q = 0; q < K; ++q) {
    const std::int64_t idx = base + q * sz;
    load_row<P>(in + idx - sy, ym[q]);
    load_row<P>(in + idx + sy, yp[q]);
    xm[q] = __ldg(in + idx + left);
    xp[q] = __ldg(in + idx + right);
  }
  const bool all_inside = i0 >= g.lo[0] && i0 + P <= g.hi[0];
#pragma unroll
  for (int q = 0; q < K; ++q) {
    T value[P];
#pragma unroll
    for (int p = 0; p < P; ++p) {
      const T west = p == 0 ? xm[q] : column[q + 1][p - 1];
      const T east = p == P - 1 ? xp[q] : column[q + 1][p + 1];
      value[p] = heat_update_3d(column[q + 1][p], west, east, ym[q][p], yp[q][p], column[q][p],
                                column[q + 2][p], c);
    }
    if constexpr (Push) {
      if (touches) {
#pragma unroll
        for (int p = 0; p < P; ++p) {
          if (i0 + p >= g.lo[0] && i0 + p < g.hi[0]) {
            funnel::detail::push_value(*push, i0 + p, j, k0 + q, value[p]);
          }
        }
      }
    }
    T* const row = out + base + q * sz;
    if (all_inside) {
      store_row<P>(row, value);
      continue;
    }
#pragma unroll
    for (int p = 0; p < P; ++p) {
      if (i0 + p >= g.lo[0] && i0 + p < g.hi[0]) row[p] = value[p];
    }
  }
  return touches;
}

}  // namespace detail::cuda

/// The 3D heat kernel (named funnel::kernels::heat3d_3d in profiles).
template <class T, int P, int K, bool Swizzled>
__global__ void __launch_bounds__(detail::cuda::block_threads_3d)
    heat3d_3d(const T* __restrict__ in, T* __restrict__ out, detail::cuda::region_geometry g,
              detail::cuda::block_grid grid, T c) {
  detail::cuda::heat3d_3d_cells<T, P, K, Swizzled, false>(in, out, g, grid, c, nullptr);
}

/// The 3D heat kernel that also does a pushed exchange (named funnel::kernels::heat3d_3d_pushed).
template <class T, int P, int K, bool Swizzled>
__global__ void __launch_bounds__(detail::cuda::block_threads_3d)
    heat3d_3d_pushed(const T* __restrict__ in, T* __restrict__ out, detail::cuda::region_geometry g,
                     detail::cuda::block_grid grid, T c, pushed_exchange push,
                     unsigned pushing_blocks) {
  const bool mine =
      detail::cuda::heat3d_3d_cells<T, P, K, Swizzled, true>(in, out, g, grid, c, &push);
  // Only the blocks holding face cells (the only ones that push, and the only ones that read
  // ghosts a neighbour writes) take a ticket; the last of them signals.
  if (__syncthreads_or(mine) != 0 && threadIdx.x == 0 && threadIdx.y == 0) {
    funnel::detail::pushed_block_done(push, pushing_blocks);
  }
}

namespace detail::cuda {

/// The cell of one thread of the 2D and 1D kernels (pushed as in heat3d_3d_cells).
template <class T, int Dims, bool Push>
__device__ __forceinline__ bool heat3d_flat_cell(const T* __restrict__ in, T* __restrict__ out,
                                                 const region_geometry& g, T c,
                                                 const pushed_exchange* push) {
  const std::int64_t i = g.lo[0] + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t j = g.lo[1] + block_row() * blockDim.y + threadIdx.y;
  if (i >= g.hi[0] || j >= g.hi[1]) return false;
  const std::int64_t idx = j * g.sy + i;
  T value;
  if constexpr (Dims == 2) {
    value = heat_update_2d(__ldg(in + idx), __ldg(in + idx - 1), __ldg(in + idx + 1),
                           __ldg(in + idx - g.sy), __ldg(in + idx + g.sy), c);
  } else {
    value = heat_update_1d(__ldg(in + i), __ldg(in + i - 1), __ldg(in + i + 1), c);
  }
  out[idx] = value;
  if constexpr (Push) {
    const std::int64_t lo[3] = {i, j, 0};
    const std::int64_t hi[3] = {i + 1, j + 1, 1};
    if (funnel::detail::touches_face(*push, lo, hi)) {
      funnel::detail::push_value(*push, i, j, std::int64_t{0}, value);
      return true;
    }
  }
  return false;
}

}  // namespace detail::cuda

/// The 2D and 1D heat kernels: one thread per cell (named funnel::kernels::heat3d_flat).
template <class T, int Dims>
__global__ void __launch_bounds__(detail::cuda::block_threads)
    heat3d_flat(const T* __restrict__ in, T* __restrict__ out, detail::cuda::region_geometry g,
                T c) {
  detail::cuda::heat3d_flat_cell<T, Dims, false>(in, out, g, c, nullptr);
}

/// The 2D and 1D heat kernels with a pushed exchange (funnel::kernels::heat3d_flat_pushed).
template <class T, int Dims>
__global__ void __launch_bounds__(detail::cuda::block_threads)
    heat3d_flat_pushed(const T* __restrict__ in, T* __restrict__ out,
                       detail::cuda::region_geometry g, T c, pushed_exchange push,
                       unsigned pushing_blocks) {
  const bool mine = detail::cuda::heat3d_flat_cell<T, Dims, true>(in, out, g, c, &push);
  if (__syncthreads_or(mine) != 0 && threadIdx.x == 0 && threadIdx.y == 0) {
    funnel::detail::pushed_block_done(push, pushing_blocks);
  }
}

namespace detail::cuda {
namespace {

// The block shape (x threads, 256 / x rows). Rows at least two 64-wide blocks long keep 64 x 4,
// the shape the kernel was tuned with (at most a third of the last block idle; 16 x 16 on
// 512^3 took 0.76 of a copy instead of 0.86). Shorter rows take the shape that covers them
// with the fewest thread slots: x from 64 down to 16, the widest among equals. The shape changes
// which thread updates a cell, never the arithmetic, so results do not depend on it.
dim3 block_shape_for(std::int64_t cells_x, std::int64_t rows, int cells_per_thread) {
  if (cells_x >= std::int64_t{2} * widest_tile_x * cells_per_thread) {
    return dim3(widest_tile_x, block_threads_3d / widest_tile_x, 1);
  }
  int best = widest_tile_x;
  std::int64_t best_slots = 0;
  for (int x = widest_tile_x; x >= narrowest_tile_x; x /= 2) {
    const int y = block_threads_3d / x;
    const std::int64_t slots = std::int64_t{blocks_for(cells_x, x * cells_per_thread)} * x *
                               cells_per_thread * blocks_for(rows, y) * y;
    if (x == widest_tile_x || slots < best_slots) {
      best = x;
      best_slots = slots;
    }
  }
  return dim3(static_cast<unsigned>(best), static_cast<unsigned>(block_threads_3d / best), 1);
}

// How many blocks of a launch hold a cell of a face of `push` inside `g`: block (b0, b1, b2)
// covers cells [origin + b * size, origin + (b + 1) * size) along each axis, b < count. By
// inclusion and exclusion over the faces' boxes of block indices (at most 6 faces).
unsigned pushing_blocks(const pushed_exchange& push, const region_geometry& g,
                        const std::int64_t origin[3], const std::int64_t size[3],
                        const unsigned count[3]) {
  std::int64_t lo[6][3];
  std::int64_t hi[6][3];
  for (int f = 0; f < push.count; ++f) {
    for (int a = 0; a < 3; ++a) {
      const std::int64_t first = std::max(push.faces[f].lo[a], g.lo[a]);
      const std::int64_t last = std::min(push.faces[f].hi[a], g.hi[a]) - 1;
      lo[f][a] = first > last ? 0 : (first - origin[a]) / size[a];
      hi[f][a] =
          first > last ? 0 : std::min<std::int64_t>((last - origin[a]) / size[a] + 1, count[a]);
    }
  }
  std::int64_t total = 0;
  for (unsigned subset = 1; subset < (1U << push.count); ++subset) {
    std::int64_t blocks = 1;
    int members = 0;
    for (int a = 0; a < 3; ++a) {
      std::int64_t from = 0;
      std::int64_t to = count[a];
      for (int f = 0; f < push.count; ++f) {
        if (((subset >> f) & 1U) == 0) continue;
        from = std::max(from, lo[f][a]);
        to = std::min(to, hi[f][a]);
      }
      blocks *= std::max<std::int64_t>(0, to - from);
    }
    for (int f = 0; f < push.count; ++f) members += static_cast<int>((subset >> f) & 1U);
    total += members % 2 == 1 ? blocks : -blocks;
  }
  FUNNEL_EXPECTS(total > 0,
                 "funnel::kernels::heat3d_step_pushed: no cell of the region lies on "
                 "a face of the exchange, so no block would signal the neighbours");
  return static_cast<unsigned>(total);
}

template <class T, int P, int K, bool Swizzled>
void launch_3d(cudaStream_t stream, const region_geometry& g, const T* in, T* out, T c,
               const pushed_exchange* push) {
  const std::int64_t first_x = (g.lo[0] / P) * P;
  const dim3 block = block_shape_for(g.hi[0] - first_x, g.hi[1] - g.lo[1], P);
  const auto tile_x = static_cast<int>(block.x);
  const auto tile_y = static_cast<int>(block.y);
  block_grid grid{blocks_for(g.hi[0] - first_x, tile_x * P), blocks_for(g.hi[1] - g.lo[1], tile_y),
                  blocks_for(g.hi[2] - g.lo[2], K), 0};
  // A group of rows never exceeds the grid: swizzled()'s 32-bit block counts then stay below
  // the launch's own (a region of few rows and many planes would wrap them).
  grid.group_y = std::min(grid.y, std::max(1U, group_rows / static_cast<unsigned>(tile_y)));
  const dim3 blocks = Swizzled ? dim3(grid.x * grid.y * grid.z) : dim3(grid.x, grid.y, grid.z);
  if (push != nullptr) {
    const std::int64_t origin[3] = {first_x, g.lo[1], g.lo[2]};
    const std::int64_t size[3] = {std::int64_t{tile_x} * P, tile_y, K};
    const unsigned count[3] = {grid.x, grid.y, grid.z};
    heat3d_3d_pushed<T, P, K, Swizzled><<<blocks, block, 0, stream>>>(
        in, out, g, grid, c, *push, pushing_blocks(*push, g, origin, size, count));
  } else {
    heat3d_3d<T, P, K, Swizzled><<<blocks, block, 0, stream>>>(in, out, g, grid, c);
  }
}

template <class T, int P>
void launch_3d(cudaStream_t stream, const region_geometry& g, const T* in, T* out, T c,
               const pushed_exchange* push) {
  // A swizzled launch is one-dimensional: keep it under the 2^31 - 1 block limit (bounded by
  // the narrowest blocks' x count times the widest blocks' y count).
  const double blocks = double(blocks_for(g.hi[0] - g.lo[0] + P, narrowest_tile_x * P)) *
                        double(blocks_for(g.hi[1] - g.lo[1], shortest_tile_y)) *
                        double(blocks_for(g.hi[2] - g.lo[2], planes_per_thread_swizzled));
  // The 3D grid's y and z counts stop at 65535 (grid_with_rows): a region of more rows or planes
  // than its blocks can cover takes the one-dimensional swizzled grid.
  const bool beyond_3d_grid = g.hi[1] - g.lo[1] > shortest_tile_y * max_grid_yz ||
                              g.hi[2] - g.lo[2] > planes_per_thread * max_grid_yz;
  FUNNEL_EXPECTS(!beyond_3d_grid || blocks < 2.0e9,
                 "funnel::kernels::heat3d_step: a region of " + std::to_string(g.hi[1] - g.lo[1]) +
                     " rows and " + std::to_string(g.hi[2] - g.lo[2]) +
                     " planes needs more blocks than one launch takes");
  const bool large =
      (g.sz * static_cast<std::int64_t>(sizeof(T)) > large_plane_bytes || beyond_3d_grid) &&
      blocks < 2.0e9;
  if (large) {
    launch_3d<T, P, planes_per_thread_swizzled, true>(stream, g, in, out, c, push);
  } else {
    launch_3d<T, P, planes_per_thread, false>(stream, g, in, out, c, push);
  }
}

template <class T>
void launch_3d(cudaStream_t stream, const region_geometry& g, const T* in, T* out, T c,
               const pushed_exchange* push) {
  const int width = vector_width(g, in, out);
  if constexpr (sizeof(T) == 4) {  // only float has four values to a 16-byte vector
    if (width == 4) {
      launch_3d<T, 4>(stream, g, in, out, c, push);
      return;
    }
  }
  if (width == 2) {
    launch_3d<T, 2>(stream, g, in, out, c, push);
  } else {
    launch_3d<T, 1>(stream, g, in, out, c, push);
  }
}

// heat3d_step, and heat3d_step_pushed when `push` is not null.
template <class T>
void launch_step(stream_view stream, const field_layout& layout, const T* in, T* out,
                 const box& region, T c, const pushed_exchange* given) {
  const region_geometry g = make_geometry(layout, region);
  // The kernels count x in memory columns (make_geometry): so must the pushed faces, which
  // are copied and shifted only where rows have a lead.
  pushed_exchange shifted;
  const pushed_exchange* push = given;
  if (given != nullptr && layout.lead() != 0) {
    shifted = *given;
    for (int f = 0; f < shifted.count; ++f) {
      shifted.faces[f].lo[0] += layout.lead();
      shifted.faces[f].hi[0] += layout.lead();
    }
    push = &shifted;
  }
  if (layout.allocated(2) > 1) {
    launch_3d(native(stream), g, in, out, c, push);
  } else {
    const bool plane = layout.allocated(1) > 1;
    const unsigned row_blocks = plane ? blocks_for(region.extent(1), block_y) : 1;
    const dim3 grid = plane ? grid_with_rows(blocks_for(region.extent(0), block_x), row_blocks,
                                             "funnel::kernels::heat3d_step")
                            : dim3(blocks_for(region.extent(0), block_threads));
    const dim3 block = plane ? dim3(block_x, block_y, 1) : dim3(block_threads);
    if (push != nullptr) {
      const std::int64_t origin[3] = {g.lo[0], g.lo[1], g.lo[2]};
      const std::int64_t size[3] = {block.x, block.y, 1};
      const unsigned count[3] = {grid.x, row_blocks, 1};
      const unsigned expected = pushing_blocks(*push, g, origin, size, count);
      if (plane) {
        heat3d_flat_pushed<T, 2>
            <<<grid, block, 0, native(stream)>>>(in, out, g, c, *push, expected);
      } else {
        heat3d_flat_pushed<T, 1>
            <<<grid, block, 0, native(stream)>>>(in, out, g, c, *push, expected);
      }
    } else if (plane) {
      heat3d_flat<T, 2><<<grid, block, 0, native(stream)>>>(in, out, g, c);
    } else {
      heat3d_flat<T, 1><<<grid, block, 0, native(stream)>>>(in, out, g, c);
    }
  }
  FUNNEL_CUDA_TRY(cudaGetLastError(), "funnel::kernels::heat3d launch");
}

}  // namespace

template <class T>
void heat3d_step(stream_view stream, const field_layout& layout, const T* in, T* out,
                 const box& region, T c) {
  if (region.empty()) return;
  launch_step(stream, layout, in, out, region, c, nullptr);
}

template <class T>
void heat3d_step_pushed(stream_view stream, const field_layout& layout, const T* in, T* out,
                        const box& region, T c, const pushed_exchange& push) {
  launch_step(stream, layout, in, out, region, c, &push);
}

template void heat3d_step<float>(stream_view, const field_layout&, const float*, float*, const box&,
                                 float);
template void heat3d_step<double>(stream_view, const field_layout&, const double*, double*,
                                  const box&, double);
template void heat3d_step_pushed<float>(stream_view, const field_layout&, const float*, float*,
                                        const box&, float, const pushed_exchange&);
template void heat3d_step_pushed<double>(stream_view, const field_layout&, const double*, double*,
                                         const box&, double, const pushed_exchange&);

}  // namespace detail::cuda
}  // namespace funnel::kernels
