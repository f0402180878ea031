// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// heat3d_tiling_probe: a diagnostic for the GPU machine (not a test). It keeps the variants of
// the 3D heat step that were tried against funnel's kernel, and the kernels that show what
// limits it, so that the choice can be measured again on the next GPU:
// - the 2.5D shared-memory z-march: a block of BX x BY threads (P cells each along x) marches
//   through KC planes of one z-chunk; each plane goes into a double-buffered shared tile with
//   its one-cell x and y frame, the z-neighbours stay in registers, and every load is issued D
//   planes ahead. One __syncthreads a plane. Only its best shape runs unless
//   TILING_PROBE_Z_MARCH is set.
// - the register column march: no shared memory and no barrier; a thread marches its P cells
//   through a z-chunk U planes at a time, all loads of a group issued before any arithmetic,
//   planes k - 1 and k carried in registers, so each centre row is loaded once. On padded rows
//   only with TILING_PROBE_COLUMNS (float4 columns included).
// - the asynchronous z-march (padded rows, TILING_PROBE_ASYNC): the z-march with its planes
//   copied by cp.async into a ring in shared memory.
// - the shuffled register tile: funnel's kernel with x-neighbours from warp shuffles and R rows
//   a thread.
// - the load ladder (TILING_PROBE_LADDER): funnel's thread shape with only some classes of its
//   loads, and copies in other block shapes; not funnel's arithmetic.
// - two copy kernels: one 16-byte vector a thread, and a strided loop.
//
// Usage: heat3d_tiling_probe [float|double] [N] [none|16]  (default float 512 none): an N^3
// interior with a one-cell halo, rows of N + 2 cells (none) or padded so each row's interior
// starts on 16 bytes (16, field_layout::row_align). Prints a device-to-device copy of the field
// (N + 2)^3, funnel's kernels::heat3d_step, then each variant, as milliseconds per step and as
// a fraction of the copy, and whether the variant's field is bitwise funnel's (checked up to
// N = 512). TILING_PROBE_ONLY=WORD[,WORD...] runs only the variants whose names contain a word;
// TILING_PROBE_ONCE launches each kernel once, untimed (for Nsight Compute or a sanitizer).
//
// `scripts/gpu/kernel-bounds.sh tiling,limits` runs it; what it showed (every variant bitwise
// funnel's field, none faster than funnel's kernel at every size, and why: the kernel is bound
// by L2, and cutting L2 traffic costs registers and occupancy) is in docs/performance.md, "What
// limits each unmet goal".
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"
#include "funnel/kernels/heat3d.hpp"
#include "funnel/runtime/stream_view.hpp"
#include "vector_rows.cuh"  // kernels/src/cuda: the kernels' vector loads and stores

namespace {

using funnel::kernels::detail::cuda::load_row;
using funnel::kernels::detail::cuda::region_geometry;
using funnel::kernels::detail::cuda::store_row;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "heat3d_tiling_probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

/// A device array of `count` values of T (freed on destruction).
template <class T>
class device_array {
 public:
  explicit device_array(std::int64_t count) {
    check(cudaMalloc(&data_, static_cast<std::size_t>(count) * sizeof(T)), "cudaMalloc");
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  ~device_array() { cudaFree(data_); }
  [[nodiscard]] T* get() const { return data_; }

 private:
  T* data_ = nullptr;
};

/// The 2.5D z-march (see the file comment). Columns start at lo[0] rounded down to P, as in
/// funnel's kernel; cells outside [lo, hi) are loaded where the tile needs them, never written.
template <class T, int P, int BX, int BY, int D>
__global__ void __launch_bounds__(BX* BY)
    z_march(const T* __restrict__ in, T* __restrict__ out, region_geometry g, int planes, T c) {
  constexpr int width = BX * P + 2;
  __shared__ T tile[2][BY + 2][width];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const std::int64_t i0 = (g.lo[0] / P) * P + (std::int64_t{blockIdx.x} * BX + tx) * P;
  const std::int64_t j = g.lo[1] + std::int64_t{blockIdx.y} * BY + ty;
  const std::int64_t first = g.lo[2] + std::int64_t{blockIdx.z} * planes;
  const std::int64_t last = first + planes < g.hi[2] ? first + planes : g.hi[2];
  const bool loads = i0 < g.sy && j <= g.hi[1];
  const bool row_below = ty == 0;
  const bool row_above = ty == BY - 1 && j < g.hi[1];
  const bool cell_left = tx == 0 && i0 > 0 && loads;
  const bool cell_right = (tx == BX - 1 || i0 + P >= g.hi[0]) && i0 + P < g.sy && loads;
  const bool computes = i0 < g.hi[0] && j < g.hi[1];
  const std::int64_t column = j * g.sy + i0;

  T z[D + 3][P];      // planes k - 1 .. k + 1 + D
  T below[D + 1][P];  // row j - 1 of planes k .. k + D (row_below threads)
  T above[D + 1][P];  // row j + BY (row_above threads)
  T left[D + 1];
  T right[D + 1];
  auto centre = [&](std::int64_t k, T(&v)[P]) {
    if (loads && k <= g.hi[2]) load_row<P>(in + k * g.sz + column, v);
  };
  auto frame = [&](std::int64_t k, T(&b)[P], T(&a)[P], T& l, T& r) {
    if (!loads || k > g.hi[2]) return;
    const std::int64_t at = k * g.sz + column;
    if (row_below) load_row<P>(in + at - g.sy, b);
    if (row_above) load_row<P>(in + at + g.sy, a);
    if (cell_left) l = __ldg(in + at - 1);
    if (cell_right) r = __ldg(in + at + P);
  };
#pragma unroll
  for (int d = 0; d < D + 3; ++d) centre(first - 1 + d, z[d]);
#pragma unroll
  for (int d = 0; d < D + 1; ++d) frame(first + d, below[d], above[d], left[d], right[d]);

  int buffer = 0;
  for (std::int64_t k = first; k < last; ++k) {
    T(*t)[width] = tile[buffer];
#pragma unroll
    for (int p = 0; p < P; ++p) {
      t[ty + 1][tx * P + 1 + p] = z[1][p];
      if (row_below) t[0][tx * P + 1 + p] = below[0][p];
      if (row_above) t[ty + 2][tx * P + 1 + p] = above[0][p];
    }
    if (cell_left) t[ty + 1][0] = left[0];
    if (cell_right) t[ty + 1][tx * P + 1 + P] = right[0];
    __syncthreads();  // the other buffer is rewritten only after the next plane's barrier
    if (computes) {
      T v[P];
#pragma unroll
      for (int p = 0; p < P; ++p) {
        const int x = tx * P + 1 + p;
        v[p] = funnel::kernels::detail::heat_update_3d(z[1][p], t[ty + 1][x - 1], t[ty + 1][x + 1],
                                                       t[ty][x], t[ty + 2][x], z[0][p], z[2][p], c);
      }
      T* row = out + k * g.sz + column;
      if (i0 >= g.lo[0] && i0 + P <= g.hi[0]) {
        store_row<P>(row, v);
      } else {
#pragma unroll
        for (int p = 0; p < P; ++p) {
          if (i0 + p >= g.lo[0] && i0 + p < g.hi[0]) row[p] = v[p];
        }
      }
    }
#pragma unroll
    for (int d = 0; d < D + 2; ++d) {
#pragma unroll
      for (int p = 0; p < P; ++p) z[d][p] = z[d + 1][p];
    }
#pragma unroll
    for (int d = 0; d < D; ++d) {
#pragma unroll
      for (int p = 0; p < P; ++p) {
        below[d][p] = below[d + 1][p];
        above[d][p] = above[d + 1][p];
      }
      left[d] = left[d + 1];
      right[d] = right[d + 1];
    }
    if (k + 2 + D <= last) centre(k + 2 + D, z[D + 2]);
    if (k + 1 + D < last) frame(k + 1 + D, below[D], above[D], left[D], right[D]);
    buffer ^= 1;
  }
}

/// The register column march: no shared memory and no barrier. A thread
/// owns P cells of one row and marches through `planes` z-planes, U at a time: it issues the
/// U centre rows ahead, their y rows and x cells, all before any arithmetic (as funnel's kernel
/// does for its 2 x 2 column), and carries planes k - 1 and k in registers from one group to the
/// next, so each centre row is loaded once per block instead of (K + 2) / K times.
template <class T, int P, int U, int BX, int BY>
__global__ void __launch_bounds__(BX* BY)
    column_march(const T* __restrict__ in, T* __restrict__ out, region_geometry g, int planes,
                 T c) {
  const std::int64_t i0 =
      (g.lo[0] / P) * P + (std::int64_t{blockIdx.x} * BX + static_cast<int>(threadIdx.x)) * P;
  const std::int64_t j = g.lo[1] + std::int64_t{blockIdx.y} * BY + static_cast<int>(threadIdx.y);
  const std::int64_t first = g.lo[2] + std::int64_t{blockIdx.z} * planes;
  const std::int64_t last = first + planes < g.hi[2] ? first + planes : g.hi[2];
  if (i0 >= g.hi[0] || j >= g.hi[1]) return;
  const std::int64_t sy = g.sy;
  const std::int64_t sz = g.sz;
  const std::int64_t left = (i0 - 1 < g.lo[0] - 1 ? g.lo[0] - 1 : i0 - 1) - i0;
  const std::int64_t right = (i0 + P > g.hi[0] ? g.hi[0] : i0 + P) - i0;
  const bool all_inside = i0 >= g.lo[0] && i0 + P <= g.hi[0];
  const T* const col = in + j * sy + i0;
  T* const out_col = out + j * sy + i0;
  T zm[P];
  T zc[P];
  load_row<P>(col + (first - 1) * sz, zm);
  load_row<P>(col + first * sz, zc);
  auto store = [&](std::int64_t k, const T(&v)[P]) {
    T* row = out_col + k * sz;
    if (all_inside) {
      store_row<P>(row, v);
      return;
    }
#pragma unroll
    for (int p = 0; p < P; ++p) {
      if (i0 + p >= g.lo[0] && i0 + p < g.hi[0]) row[p] = v[p];
    }
  };
  std::int64_t k = first;
  for (; k + U <= last; k += U) {
    T ahead[U][P];
    T ym[U][P];
    T yp[U][P];
    T xm[U];
    T xp[U];
#pragma unroll
    for (int q = 0; q < U; ++q) load_row<P>(col + (k + 1 + q) * sz, ahead[q]);
#pragma unroll
    for (int q = 0; q < U; ++q) {
      const T* at = col + (k + q) * sz;
      load_row<P>(at - sy, ym[q]);
      load_row<P>(at + sy, yp[q]);
      xm[q] = __ldg(at + left);
      xp[q] = __ldg(at + right);
    }
#pragma unroll
    for (int q = 0; q < U; ++q) {
      T v[P];
#pragma unroll
      for (int p = 0; p < P; ++p) {
        const T centre = q == 0 ? zc[p] : ahead[q - 1][p];
        const T below = q == 0 ? zm[p] : q == 1 ? zc[p] : ahead[q - 2][p];
        const T above = ahead[q][p];
        const T west = p == 0 ? xm[q] : (q == 0 ? zc[p - 1] : ahead[q - 1][p - 1]);
        const T east = p == P - 1 ? xp[q] : (q == 0 ? zc[p + 1] : ahead[q - 1][p + 1]);
        v[p] = funnel::kernels::detail::heat_update_3d(centre, west, east, ym[q][p], yp[q][p],
                                                       below, above, c);
      }
      store(k + q, v);
    }
#pragma unroll
    for (int p = 0; p < P; ++p) {
      zm[p] = U == 1 ? zc[p] : ahead[U - 2][p];
      zc[p] = ahead[U - 1][p];
    }
  }
  for (; k < last; ++k) {  // the planes left over: one at a time
    T zp[P];
    T ym[P];
    T yp[P];
    const T* at = col + k * sz;
    load_row<P>(at + sz, zp);
    load_row<P>(at - sy, ym);
    load_row<P>(at + sy, yp);
    const T xm = __ldg(at + left);
    const T xp = __ldg(at + right);
    T v[P];
#pragma unroll
    for (int p = 0; p < P; ++p) {
      const T west = p == 0 ? xm : zc[p - 1];
      const T east = p == P - 1 ? xp : zc[p + 1];
      v[p] =
          funnel::kernels::detail::heat_update_3d(zc[p], west, east, ym[p], yp[p], zm[p], zp[p], c);
    }
    store(k, v);
#pragma unroll
    for (int p = 0; p < P; ++p) {
      zm[p] = zc[p];
      zc[p] = zp[p];
    }
  }
}

/// The asynchronous z-march: the 2.5D tiling with its loads made by the
/// asynchronous copies of Ampere and later (cp.async, 16 bytes each, straight into shared memory),
/// so that the loads in flight take no registers and no thread waits for them. A block of BX x BY
/// threads (P cells each along x) marches through `planes` z-planes; every plane of its tile (its
/// BX * P columns with 16 bytes of columns on either side, its BY rows with one on either side)
/// goes into a ring of D + 4 planes in shared memory, loaded D + 2 planes ahead of the one
/// computed, and the z-neighbours come from the ring too. One __syncthreads a plane. It needs rows
/// whose interior starts on 16 bytes (field_layout::row_align) and a region starting on a 16-byte
/// column.
template <class T, int P, int BX, int BY, int D>
__global__ void __launch_bounds__(BX* BY)
    async_march(const T* __restrict__ in, T* __restrict__ out, region_geometry g, int planes, T c) {
  constexpr int A = static_cast<int>(16 / sizeof(T));  // values in one 16-byte copy
  constexpr int W = BX * P + 2 * A;                    // tile columns
  constexpr int H = BY + 2;                            // tile rows
  constexpr int R = D + 4;                             // planes in the ring
  constexpr int copies = H * (W / A);                  // 16-byte copies a plane
  static_assert(P <= A && A % P == 0, "a thread's cells lie inside one 16-byte copy");
  __shared__ __align__(16) T ring[R][H][W];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int thread = ty * BX + tx;
  const std::int64_t x0 = (g.lo[0] / A) * A + std::int64_t{blockIdx.x} * BX * P;
  const std::int64_t y0 = g.lo[1] + std::int64_t{blockIdx.y} * BY;
  const std::int64_t first = g.lo[2] + std::int64_t{blockIdx.z} * planes;
  const std::int64_t last = first + planes < g.hi[2] ? first + planes : g.hi[2];
  // Plane k into its slot of the ring: rows y0 - 1 .. y0 + BY, columns x0 - A .. x0 + BX P + A,
  // as far as the array's rows and planes go (halo rows and planes included).
  auto load = [&](std::int64_t k) {
    if (k <= last) {
      T(*slot)[W] = ring[(k - first + 1) % R];
      const T* plane = in + k * g.sz;
      for (int n = thread; n < copies; n += BX * BY) {
        const int r = n / (W / A);
        const int q = n % (W / A);
        const std::int64_t y = y0 - 1 + r;
        const std::int64_t x = x0 - A + std::int64_t{q} * A;
        if (y <= g.hi[1] && x < g.sy)
          __pipeline_memcpy_async(&slot[r][q * A], plane + y * g.sy + x, 16);
      }
    }
    __pipeline_commit();
  };
#pragma unroll
  for (int d = 0; d < D + 3; ++d) load(first - 1 + d);  // planes first - 1 .. first + 1 + D

  const std::int64_t i0 = x0 + std::int64_t{tx} * P;
  const std::int64_t j = y0 + ty;
  const bool computes = i0 < g.hi[0] && i0 + P > g.lo[0] && j < g.hi[1];
  const bool all_inside = i0 >= g.lo[0] && i0 + P <= g.hi[0];
  const int col = A + tx * P;
  for (std::int64_t k = first; k < last; ++k) {
    __pipeline_wait_prior(D);  // plane k + 1 is in (D planes were issued after it)
    __syncthreads();           // ... for every thread; plane k - 2's slot is free
    load(k + 2 + D);
    if (!computes) continue;
    const T(*below)[W] = ring[(k - first) % R];
    const T(*centre)[W] = ring[(k - first + 1) % R];
    const T(*above)[W] = ring[(k - first + 2) % R];
    T v[P];
#pragma unroll
    for (int p = 0; p < P; ++p) {
      const int x = col + p;
      v[p] = funnel::kernels::detail::heat_update_3d(
          centre[ty + 1][x], centre[ty + 1][x - 1], centre[ty + 1][x + 1], centre[ty][x],
          centre[ty + 2][x], below[ty + 1][x], above[ty + 1][x], c);
    }
    T* row = out + k * g.sz + j * g.sy + i0;
    if (all_inside) {
      store_row<P>(row, v);
    } else {
#pragma unroll
      for (int p = 0; p < P; ++p) {
        if (i0 + p >= g.lo[0] && i0 + p < g.hi[0]) row[p] = v[p];
      }
    }
  }
  __pipeline_wait_prior(0);  // no copy outlives the block's shared memory
}

/// The register tile with shuffled x-neighbours: funnel's kernel, which issues every load of a
/// thread before any arithmetic, with two changes that cut the requests L1 and L2 serve (funnel's
/// kernel is bound by L2 throughput, not DRAM: docs/performance.md). The x-neighbours come from the
/// threads beside by warp shuffles, so only the first and last lane of each warp segment load one
/// (funnel's kernel loads one on either side for every thread: each such scalar load of a warp
/// touches as many sectors as its vector loads). And a thread updates R rows as well as K planes,
/// so the y-neighbours of its inner rows are its own centre rows. Loads per row of P results:
/// (R (K + 2) + 2 K) / (R K) (funnel's kernel, R = 1 and K = 2, with its x loads: 6). The probe
/// runs it only where its tiles cover the region's rows and planes exactly (n a multiple of K and
/// of BY R): a kernel for funnel would add the shorter edge tiles that funnel's kernel handles
/// cell by cell.
template <class T, int P, int K, int R, int BX, int BY, int MinBlocks = 1>
__global__ void __launch_bounds__(BX* BY, MinBlocks)
    shuffle_tile(const T* __restrict__ in, T* __restrict__ out, region_geometry g, int /*planes*/,
                 T c) {
  constexpr int seg = BX < 32 ? BX : 32;  // threads of one row in one warp
  const int tx = static_cast<int>(threadIdx.x);
  const int lane = tx % seg;
  const std::int64_t i0 = (g.lo[0] / P) * P + (std::int64_t{blockIdx.x} * BX + tx) * P;
  const std::int64_t j0 =
      g.lo[1] + (std::int64_t{blockIdx.y} * BY + static_cast<int>(threadIdx.y)) * R;
  const std::int64_t k0 = g.lo[2] + std::int64_t{blockIdx.z} * K;
  // Every thread of a warp takes part in the shuffles and loads; one past the region's columns
  // loads the region's last vector instead, and stores nothing.
  const bool active = i0 < g.hi[0];
  const std::int64_t ic = active ? i0 : (g.hi[0] - 1) / P * P;
  const bool loads_west = lane == 0;
  const bool loads_east = lane == seg - 1 || i0 + P >= g.hi[0];
  const std::int64_t sy = g.sy;
  const std::int64_t sz = g.sz;
  const std::int64_t left = (ic - 1 < g.lo[0] - 1 ? g.lo[0] - 1 : ic - 1) - ic;
  const std::int64_t right = (ic + P > g.hi[0] ? g.hi[0] : ic + P) - ic;
  const T* const base = in + k0 * sz + j0 * sy + ic;
  T column[K + 2][R][P];
  T ym[K][P];
  T yp[K][P];
  T xm[K][R];
  T xp[K][R];
#pragma unroll
  for (int q = 0; q < K + 2; ++q) {
#pragma unroll
    for (int r = 0; r < R; ++r) load_row<P>(base + (q - 1) * sz + r * sy, column[q][r]);
  }
#pragma unroll
  for (int q = 0; q < K; ++q) {
    load_row<P>(base + q * sz - sy, ym[q]);
    load_row<P>(base + q * sz + R * sy, yp[q]);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const T* at = base + q * sz + r * sy;
      if (loads_west) xm[q][r] = __ldg(at + left);
      if (loads_east) xp[q][r] = __ldg(at + right);
    }
  }
#pragma unroll
  for (int q = 0; q < K; ++q) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const T west = __shfl_up_sync(0xffffffffU, column[q + 1][r][P - 1], 1, seg);
      const T east = __shfl_down_sync(0xffffffffU, column[q + 1][r][0], 1, seg);
      if (!loads_west) xm[q][r] = west;
      if (!loads_east) xp[q][r] = east;
    }
  }
  if (!active) return;
  const bool all_inside = i0 >= g.lo[0] && i0 + P <= g.hi[0];
#pragma unroll
  for (int q = 0; q < K; ++q) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      T value[P];
#pragma unroll
      for (int p = 0; p < P; ++p) {
        const T west = p == 0 ? xm[q][r] : column[q + 1][r][p - 1];
        const T east = p == P - 1 ? xp[q][r] : column[q + 1][r][p + 1];
        const T south = r == 0 ? ym[q][p] : column[q + 1][r - 1][p];
        const T north = r == R - 1 ? yp[q][p] : column[q + 1][r + 1][p];
        value[p] = funnel::kernels::detail::heat_update_3d(
            column[q + 1][r][p], west, east, south, north, column[q][r][p], column[q + 2][r][p], c);
      }
      T* row = out + (k0 + q) * sz + (j0 + r) * sy + i0;
      if (all_inside) {
        store_row<P>(row, value);
        continue;
      }
#pragma unroll
      for (int p = 0; p < P; ++p) {
        if (i0 + p >= g.lo[0] && i0 + p < g.hi[0]) row[p] = value[p];
      }
    }
  }
}

/// The load ladder: funnel's kernel's thread shape (P cells, K planes, a
/// BX x BY block) with only some of its loads, to see what each class of loads costs: the K
/// centre rows always; with Z the planes either side of the chunk, with Y the rows either side,
/// with X the value either side. Each result is the sum of the values it loaded, so no load is
/// dead; results are not funnel's field and are not compared.
template <class T, int P, int K, bool Z, bool Y, bool X>
__global__ void __launch_bounds__(256) load_ladder(const T* __restrict__ in, T* __restrict__ out,
                                                   region_geometry g, int /*planes*/, T /*c*/) {
  const std::int64_t i0 =
      (g.lo[0] / P) * P + (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) * P;
  const std::int64_t j = g.lo[1] + std::int64_t{blockIdx.y} * blockDim.y + threadIdx.y;
  const std::int64_t k0 = g.lo[2] + std::int64_t{blockIdx.z} * K;
  if (i0 >= g.hi[0] || j >= g.hi[1] || k0 + K > g.hi[2]) return;
  const std::int64_t sy = g.sy;
  const std::int64_t sz = g.sz;
  const T* const base = in + k0 * sz + j * sy + i0;
  T column[K + 2][P] = {};
  T ym[K][P] = {};
  T yp[K][P] = {};
  T xm[K] = {};
  T xp[K] = {};
#pragma unroll
  for (int q = 0; q < K + 2; ++q) {
    if (Z || (q > 0 && q <= K)) load_row<P>(base + (q - 1) * sz, column[q]);
  }
#pragma unroll
  for (int q = 0; q < K; ++q) {
    if constexpr (Y) {
      load_row<P>(base + q * sz - sy, ym[q]);
      load_row<P>(base + q * sz + sy, yp[q]);
    }
    if constexpr (X) {
      xm[q] = __ldg(base + q * sz - 1);
      xp[q] = __ldg(base + q * sz + P);
    }
  }
#pragma unroll
  for (int q = 0; q < K; ++q) {
    T value[P];
#pragma unroll
    for (int p = 0; p < P; ++p) {
      value[p] = column[q + 1][p] + column[q][p] + column[q + 2][p] + ym[q][p] + yp[q][p] +
                 (p == 0 ? xm[q] : T(0)) + (p == P - 1 ? xp[q] : T(0));
    }
    store_row<P>(out + (k0 + q) * sz + j * sy + i0, value);
  }
}

/// A copy of `count` 16-byte vectors, one a thread: a kernel that reads and writes each byte
/// once, the ceiling of any kernel made of plain loads and stores.
__global__ void copy_vectors(const float4* __restrict__ in, float4* __restrict__ out,
                             std::int64_t count) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < count) out[i] = __ldg(in + i);
}

/// The same copy with a grid of a few blocks per SM, each thread 4 vectors an iteration.
__global__ void copy_vectors_strided(const float4* __restrict__ in, float4* __restrict__ out,
                                     std::int64_t count) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < count; i += 4 * stride) {
    float4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = __ldg(in + i + u * stride);
#pragma unroll
    for (int u = 0; u < 4; ++u) out[i + u * stride] = v[u];
  }
  for (; i < count; i += stride) out[i] = __ldg(in + i);
}

template <class T>
__global__ void fill(T* a, std::int64_t cells) {
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < cells;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    auto h = static_cast<std::uint32_t>(static_cast<std::uint64_t>(i) * 2654435761ULL);
    h ^= h >> 13;
    h *= 0x5bd1e995U;
    h ^= h >> 15;
    a[i] = T(h % 1000) / T(1000);
  }
}

/// Milliseconds per call of `launch`, the best of 5 repetitions of 10 calls after 3 untimed; one
/// call and no timing under TILING_PROBE_ONCE (for a profiler).
template <class Launch>
float time_ms(const Launch& launch) {
  if (std::getenv("TILING_PROBE_ONCE") != nullptr) {
    launch();
    check(cudaDeviceSynchronize(), "one call");
    return 1.0F;
  }
  cudaEvent_t start = nullptr;
  cudaEvent_t end = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&end), "cudaEventCreate");
  for (int w = 0; w < 3; ++w) launch();
  float best = 1e30F;
  for (int rep = 0; rep < 5; ++rep) {
    check(cudaEventRecord(start), "cudaEventRecord");
    for (int s = 0; s < 10; ++s) launch();
    check(cudaEventRecord(end), "cudaEventRecord");
    check(cudaEventSynchronize(end), "cudaEventSynchronize");
    float ms = 0.0F;
    check(cudaEventElapsedTime(&ms, start, end), "cudaEventElapsedTime");
    best = std::min(best, ms / 10.0F);
  }
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(end), "cudaEventDestroy");
  return best;
}

/// Whether variant `name` runs: every one, or those containing one of the comma-separated words
/// of TILING_PROBE_ONLY.
bool selected(const std::string& name) {
  const char* only = std::getenv("TILING_PROBE_ONLY");
  if (only == nullptr) return true;
  const std::string words = only;
  for (std::size_t at = 0; at <= words.size();) {
    const std::size_t end = std::min(words.find(',', at), words.size());
    if (end > at && name.find(words.substr(at, end - at)) != std::string::npos) return true;
    at = end + 1;
  }
  return false;
}

template <class T>
int run(std::int64_t n, bool padded) {
  const int row_align = padded ? funnel::row_align_for(sizeof(T), 16) : 1;
  const funnel::field_layout layout{{n, n, n}, 1, row_align};
  const std::int64_t cells = layout.allocated_cells();
  const std::size_t bytes = static_cast<std::size_t>(cells) * sizeof(T);
  // The copy moves the unpadded field, as funnel-bench stencil's does: the bytes a step needs.
  const std::size_t copy_bytes = static_cast<std::size_t>((n + 2) * (n + 2) * (n + 2)) * sizeof(T);
  device_array<T> in(cells);
  device_array<T> out(cells);
  device_array<T> reference(cells);
  fill<<<1024, 256>>>(in.get(), cells);
  check(cudaMemset(out.get(), 0, bytes), "cudaMemset");
  check(cudaMemset(reference.get(), 0, bytes), "cudaMemset");
  const funnel::box interior = layout.interior_box();
  const region_geometry g = funnel::kernels::detail::cuda::make_geometry(layout, interior);
  const T c = T(0.1);
  const funnel::kernels::heat3d_params<T> params{c};
  const funnel::stream_view stream = funnel::stream_view::from_native_handle(nullptr);

  const float copy = time_ms([&] {
    check(cudaMemcpyAsync(out.get(), in.get(), copy_bytes, cudaMemcpyDeviceToDevice), "copy");
  });
  const float funnel_ms = time_ms([&] {
    funnel::kernels::heat3d_step(stream, funnel::kernels::implementation::cuda, layout, in.get(),
                                 reference.get(), interior, params);
  });
  std::printf(
      "%s %lld^3, %s rows: device copy %.3f ms (%.0f GB/s); funnel's heat3d_step %.3f ms = %.3f\n",
      sizeof(T) == 4 ? "float" : "double", static_cast<long long>(n),
      padded ? "interior on 16 B" : "n + 2", copy,
      2.0 * static_cast<double>(copy_bytes) / copy / 1e6, funnel_ms, copy / funnel_ms);
  check(cudaDeviceSynchronize(), "reference step");
  const auto vectors = static_cast<std::int64_t>(copy_bytes / sizeof(float4));
  const auto* from = reinterpret_cast<const float4*>(in.get());
  auto* to = reinterpret_cast<float4*>(out.get());
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count");
  if (selected("copy_vectors")) {
    const float one = time_ms([&] {
      copy_vectors<<<static_cast<unsigned>((vectors + 255) / 256), 256>>>(from, to, vectors);
    });
    const float strided = time_ms(
        [&] { copy_vectors_strided<<<static_cast<unsigned>(sms) * 8, 256>>>(from, to, vectors); });
    check(cudaGetLastError(), "copy_vectors");
    std::printf("  %-24s %.3f ms = %.3f of the copy\n  %-24s %.3f ms = %.3f of the copy\n",
                "copy_vectors, 1 a thread", one, copy / one, "copy_vectors, strided", strided,
                copy / strided);
  }
  const bool checked = n <= 512;
  std::vector<T> want(checked ? static_cast<std::size_t>(cells) : 0);
  std::vector<T> got(want.size());
  if (checked)
    check(cudaMemcpy(want.data(), reference.get(), bytes, cudaMemcpyDeviceToHost), "D2H");

  int mismatches = 0;
  auto variant = [&](const char* name, auto kernel, int bx, int by, int p, int planes,
                     int rows = 1) {
    if (!selected(name)) return;
    const bool exact = n % planes == 0 && n % (by * rows) == 0;
    if (std::strncmp(name, "shuffle", 7) == 0 && !exact) return;  // whole tiles only
    const std::int64_t first_x = (g.lo[0] / p) * p;  // where the variant's first column starts
    const dim3 block(static_cast<unsigned>(bx), static_cast<unsigned>(by));
    const dim3 grid(static_cast<unsigned>((g.hi[0] - first_x + bx * p - 1) / (bx * p)),
                    static_cast<unsigned>((n + by * rows - 1) / (by * rows)),
                    static_cast<unsigned>((n + planes - 1) / planes));
    auto launch = [&] { kernel<<<grid, block>>>(in.get(), out.get(), g, planes, c); };
    check(cudaMemset(out.get(), 0, bytes), "cudaMemset");
    launch();
    check(cudaGetLastError(), name);
    check(cudaDeviceSynchronize(), name);
    bool same = true;
    if (checked) {
      check(cudaMemcpy(got.data(), out.get(), bytes, cudaMemcpyDeviceToHost), "D2H");
      for (std::int64_t k = 1; k <= n && same; ++k) {
        for (std::int64_t j = 1; j <= n && same; ++j) {
          const std::int64_t at = layout.index(1, j, k);
          same = std::memcmp(&got[at], &want[at], static_cast<std::size_t>(n) * sizeof(T)) == 0;
        }
      }
    }
    const bool compared = std::strncmp(name, "ladder", 6) != 0;
    if (!same && compared) ++mismatches;
    const float ms = time_ms(launch);
    std::printf("  %-24s %3d planes a block  %.3f ms = %.3f of the copy  %s\n", name, planes, ms,
                copy / ms,
                !checked || !compared ? "(not checked)"
                : same                ? "bitwise"
                                      : "MISMATCH");
  };
  {
    // Shuffled x-neighbours: P = the widest vector the rows allow (float 4 on padded rows, 2 on
    // funnel's n + 2), K planes, R rows a thread.
    constexpr int A = static_cast<int>(16 / sizeof(T));
    constexpr int V = A > 2 ? 4 : 2;
    if (padded || V == 2) {
      variant("shuffle PV K2 R1 64x4", shuffle_tile<T, V, 2, 1, 64, 4>, 64, 4, V, 2);
      variant("shuffle PV K2 R2 64x4", shuffle_tile<T, V, 2, 2, 64, 4>, 64, 4, V, 2, 2);
      variant("shuffle PV K2 R2 32x8", shuffle_tile<T, V, 2, 2, 32, 8>, 32, 8, V, 2, 2);
      variant("shuffle PV K4 R1 64x4", shuffle_tile<T, V, 4, 1, 64, 4>, 64, 4, V, 4);
      variant("shuffle PV K1 R4 64x4", shuffle_tile<T, V, 1, 4, 64, 4>, 64, 4, V, 1, 4);
      variant("shuffle PV K2 R4 32x4", shuffle_tile<T, V, 2, 4, 32, 4>, 32, 4, V, 2, 4);
      variant("shuffle PV K1 R1 64x4", shuffle_tile<T, V, 1, 1, 64, 4>, 64, 4, V, 1);
      variant("shuffle PV K1 R1 128x2", shuffle_tile<T, V, 1, 1, 128, 2>, 128, 2, V, 1);
      variant("shuffle PV K2 R1 128x2", shuffle_tile<T, V, 2, 1, 128, 2>, 128, 2, V, 2);
      variant("shuffle PV K1 R2 128x2", shuffle_tile<T, V, 1, 2, 128, 2>, 128, 2, V, 1, 2);
    }
    if (V == 4) {
      variant("shuffle P2 K2 R1 64x4", shuffle_tile<T, 2, 2, 1, 64, 4>, 64, 4, 2, 2);
      variant("shuffle P2 K2 R2 64x4", shuffle_tile<T, 2, 2, 2, 64, 4>, 64, 4, 2, 2, 2);
      variant("shuffle P2 K2 R4 64x4", shuffle_tile<T, 2, 2, 4, 64, 4>, 64, 4, 2, 2, 4);
    }
  }
  if (padded && std::getenv("TILING_PROBE_ASYNC") != nullptr) {
    // The asynchronous march needs 16-byte rows; only with TILING_PROBE_ASYNC.
    constexpr int A = static_cast<int>(16 / sizeof(T));
    for (const int planes : {16, 32, 64}) {
      variant("async A 32x8 D1", async_march<T, A, 32, 8, 1>, 32, 8, A, planes);
      variant("async A 32x8 D2", async_march<T, A, 32, 8, 2>, 32, 8, A, planes);
      variant("async A 16x16 D1", async_march<T, A, 16, 16, 1>, 16, 16, A, planes);
      variant("async A 32x4 D2", async_march<T, A, 32, 4, 2>, 32, 4, A, planes);
      variant("async A 64x4 D1", async_march<T, A, 64, 4, 1>, 64, 4, A, planes);
    }
  }
  const bool z_marches = std::getenv("TILING_PROBE_Z_MARCH") != nullptr;
  const bool columns = std::getenv("TILING_PROBE_COLUMNS") != nullptr || !padded;
  for (const int planes : {8, 16, 32}) {
    if (z_marches || (planes == 16 && !padded)) {
      variant("z-march P2 32x8 D2", z_march<T, 2, 32, 8, 2>, 32, 8, 2, planes);
    }
    if (!columns) continue;
    variant("column P2 U2 64x4", column_march<T, 2, 2, 64, 4>, 64, 4, 2, planes);
    variant("column P2 U4 64x4", column_march<T, 2, 4, 64, 4>, 64, 4, 2, planes);
    variant("column P2 U2 32x8", column_march<T, 2, 2, 32, 8>, 32, 8, 2, planes);
    variant("column P2 U4 32x8", column_march<T, 2, 4, 32, 8>, 32, 8, 2, planes);
    variant("column P1 U4 64x4", column_march<T, 1, 4, 64, 4>, 64, 4, 1, planes);
  }
  if (std::getenv("TILING_PROBE_LADDER") != nullptr) {
    // funnel's shape (P = the widest vector, K = 2, 64 x 4), loads added class by class.
    constexpr int A = static_cast<int>(16 / sizeof(T));
    constexpr int V = A > 2 ? 4 : 2;
    if (padded || V == 2) {
      variant("ladder centre", load_ladder<T, V, 2, false, false, false>, 64, 4, V, 2);
      variant("ladder centre+z", load_ladder<T, V, 2, true, false, false>, 64, 4, V, 2);
      variant("ladder centre+y", load_ladder<T, V, 2, false, true, false>, 64, 4, V, 2);
      variant("ladder centre+z+y", load_ladder<T, V, 2, true, true, false>, 64, 4, V, 2);
      variant("ladder centre+z+y+x", load_ladder<T, V, 2, true, true, true>, 64, 4, V, 2);
      variant("ladder centre K1", load_ladder<T, V, 1, false, false, false>, 64, 4, V, 1);
      variant("ladder centre+z K4", load_ladder<T, V, 4, true, false, false>, 64, 4, V, 4);
      // The same copy in other block shapes: how DRAM takes each block's footprint.
      variant("ladder centre K1 128x2", load_ladder<T, V, 1, false, false, false>, 128, 2, V, 1);
      variant("ladder centre K1 256x1", load_ladder<T, V, 1, false, false, false>, 256, 1, V, 1);
      variant("ladder centre K1 32x8", load_ladder<T, V, 1, false, false, false>, 32, 8, V, 1);
      variant("ladder centre K2 128x2", load_ladder<T, V, 2, false, false, false>, 128, 2, V, 2);
      variant("ladder all K1 64x4", load_ladder<T, V, 1, true, true, true>, 64, 4, V, 1);
      variant("ladder all K1 128x2", load_ladder<T, V, 1, true, true, true>, 128, 2, V, 1);
    }
  }
  if constexpr (sizeof(T) == 4) {  // float4 columns: rows whose interior starts on 16 bytes
    for (const int planes : {4, 8, 16, 32}) {
      if (!padded || !columns) break;
      variant("column P4 U2 64x4", column_march<T, 4, 2, 64, 4>, 64, 4, 4, planes);
      variant("column P4 U4 64x4", column_march<T, 4, 4, 64, 4>, 64, 4, 4, planes);
      variant("column P4 U2 32x8", column_march<T, 4, 2, 32, 8>, 32, 8, 4, planes);
      variant("column P4 U2 16x16", column_march<T, 4, 2, 16, 16>, 16, 16, 4, planes);
      variant("column P4 U1 64x4", column_march<T, 4, 1, 64, 4>, 64, 4, 4, planes);
      variant("column P4 U1 128x2", column_march<T, 4, 1, 128, 2>, 128, 2, 4, planes);
      variant("column P4 U1 32x8", column_march<T, 4, 1, 32, 8>, 32, 8, 4, planes);
    }
  }
  if (z_marches) {
    for (const int planes : {16, 32, 64}) {
      variant("z-march P2 32x8 D4", z_march<T, 2, 32, 8, 4>, 32, 8, 2, planes);
      variant("z-march P2 32x16 D2", z_march<T, 2, 32, 16, 2>, 32, 16, 2, planes);
      variant("z-march P2 64x4 D4", z_march<T, 2, 64, 4, 4>, 64, 4, 2, planes);
      variant("z-march P1 32x8 D4", z_march<T, 1, 32, 8, 4>, 32, 8, 1, planes);
    }
  }
  return mismatches == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string type = argc > 1 ? argv[1] : "float";
  const long long n = argc > 2 ? std::atoll(argv[2]) : 512;
  const std::string rows = argc > 3 ? argv[3] : "none";
  if ((type != "float" && type != "double") || n < 4 || n % 2 != 0 ||
      (rows != "none" && rows != "16")) {
    std::fprintf(stderr,
                 "heat3d_tiling_probe: usage: heat3d_tiling_probe [float|double] [N] [none|16] "
                 "(N even, >= 4; rows unpadded or with the interior on 16 bytes; got '%s' %lld "
                 "'%s')\n",
                 type.c_str(), n, rows.c_str());
    return 2;
  }
  const bool padded = rows == "16";
  return type == "float" ? run<float>(n, padded) : run<double>(n, padded);
}
