// heat3d_tiling_probe: a diagnostic for the GPU machine (not a test). It keeps the tilings of the
// 3D heat step that were tried against funnel's kernel, so that the choice can be measured again
// on the next GPU:
// - the 2.5D shared-memory z-march (eighteenth session): a block of BX x BY threads (P cells
//   each along x) marches through KC planes of one z-chunk; each plane goes into a
//   double-buffered shared tile with its one-cell x and y frame, the z-neighbours stay in
//   registers, and every load is issued D planes ahead. One __syncthreads a plane. Only its best
//   shape runs unless TILING_PROBE_Z_MARCH is set.
// - the register column march (nineteenth session): no shared memory and no barrier; a thread
//   marches its P cells through a z-chunk U planes at a time, all loads of a group issued before
//   any arithmetic, planes k - 1 and k carried in registers, so each centre row is loaded once.
//
// Usage: heat3d_tiling_probe [float|double] [N]  (default float 512): an N^3 interior with a
// one-cell halo (funnel's rows, N + 2 cells). Prints a device-to-device copy of the field,
// funnel's kernels::heat3d_step, then each variant, as milliseconds per step and as a fraction
// of the copy, and whether the variant's field is bitwise funnel's (checked up to N = 512).
//
// H100 (`scripts/gpu/kernel-bounds.sh tiling`; docs/performance.md, "Kernels and pipeline at
// their bounds"): funnel's kernel took 0.85-0.87 of the copy for float and 0.89-0.91 for double
// (256^3-1024^3). The z-march (2026-11-27) 0.38-0.62 and 0.40-0.63: it keeps one load per plane
// and its prefetch queue in flight per thread (62-128 registers) and waits at a barrier every
// plane. The column march (2026-11-27, best of 8-32 planes, U = 2 or 4, 64 x 4 or 32 x 8) float
// 0.842 / 0.843 / 0.803 and double 0.878 / 0.878 / 0.851: loading each centre row once instead
// of twice (funnel's K = 2 re-reads the planes around each chunk from L2) does not help, and
// longer marches lose at 1024^3. Every variant is bitwise funnel's field.
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

/// The register column march (nineteenth session): no shared memory and no barrier. A thread
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

/// Milliseconds per call of `launch`, the best of 5 repetitions of 10 calls after 3 untimed.
template <class Launch>
float time_ms(const Launch& launch) {
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

template <class T>
int run(std::int64_t n) {
  const std::int64_t alloc = n + 2;
  const std::int64_t cells = alloc * alloc * alloc;
  const std::size_t bytes = static_cast<std::size_t>(cells) * sizeof(T);
  device_array<T> in(cells);
  device_array<T> out(cells);
  device_array<T> reference(cells);
  fill<<<1024, 256>>>(in.get(), cells);
  check(cudaMemset(out.get(), 0, bytes), "cudaMemset");
  check(cudaMemset(reference.get(), 0, bytes), "cudaMemset");
  const funnel::field_layout layout{{n, n, n}, 1};
  const funnel::box interior = layout.interior_box();
  const region_geometry g = funnel::kernels::detail::cuda::make_geometry(layout, interior);
  const T c = T(0.1);
  const funnel::kernels::heat3d_params<T> params{c};
  const funnel::stream_view stream = funnel::stream_view::from_native_handle(nullptr);

  const float copy = time_ms([&] {
    check(cudaMemcpyAsync(out.get(), in.get(), bytes, cudaMemcpyDeviceToDevice), "copy");
  });
  const float funnel_ms = time_ms([&] {
    funnel::kernels::heat3d_step(stream, funnel::kernels::implementation::cuda, layout, in.get(),
                                 reference.get(), interior, params);
  });
  std::printf("%s %lld^3: device copy %.3f ms (%.0f GB/s); funnel's heat3d_step %.3f ms = %.3f\n",
              sizeof(T) == 4 ? "float" : "double", static_cast<long long>(n), copy,
              2.0 * static_cast<double>(bytes) / copy / 1e6, funnel_ms, copy / funnel_ms);
  check(cudaDeviceSynchronize(), "reference step");
  const bool checked = n <= 512;
  std::vector<T> want(checked ? static_cast<std::size_t>(cells) : 0);
  std::vector<T> got(want.size());
  if (checked)
    check(cudaMemcpy(want.data(), reference.get(), bytes, cudaMemcpyDeviceToHost), "D2H");

  int mismatches = 0;
  auto variant = [&](const char* name, auto kernel, int bx, int by, int p, int planes) {
    const dim3 block(static_cast<unsigned>(bx), static_cast<unsigned>(by));
    const dim3 grid(static_cast<unsigned>((alloc + bx * p - 1) / (bx * p)),
                    static_cast<unsigned>((n + by - 1) / by),
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
          const std::int64_t at = (k * alloc + j) * alloc + 1;
          same = std::memcmp(&got[at], &want[at], static_cast<std::size_t>(n) * sizeof(T)) == 0;
        }
      }
    }
    if (!same) ++mismatches;
    const float ms = time_ms(launch);
    std::printf("  %-24s %3d planes a block  %.3f ms = %.3f of the copy  %s\n", name, planes, ms,
                copy / ms,
                !checked ? "(not checked)"
                : same   ? "bitwise"
                         : "MISMATCH");
  };
  const bool z_marches = std::getenv("TILING_PROBE_Z_MARCH") != nullptr;
  for (const int planes : {8, 16, 32}) {
    if (z_marches || planes == 16) {
      variant("z-march P2 32x8 D2", z_march<T, 2, 32, 8, 2>, 32, 8, 2, planes);
    }
    variant("column P2 U2 64x4", column_march<T, 2, 2, 64, 4>, 64, 4, 2, planes);
    variant("column P2 U4 64x4", column_march<T, 2, 4, 64, 4>, 64, 4, 2, planes);
    variant("column P2 U2 32x8", column_march<T, 2, 2, 32, 8>, 32, 8, 2, planes);
    variant("column P2 U4 32x8", column_march<T, 2, 4, 32, 8>, 32, 8, 2, planes);
    variant("column P1 U4 64x4", column_march<T, 1, 4, 64, 4>, 64, 4, 1, planes);
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
  if ((type != "float" && type != "double") || n < 4 || n % 2 != 0) {
    std::fprintf(stderr,
                 "heat3d_tiling_probe: usage: heat3d_tiling_probe [float|double] [N] (N even, "
                 ">= 4; got '%s' %lld)\n",
                 type.c_str(), n);
    return 2;
  }
  return type == "float" ? run<float>(n) : run<double>(n);
}
