// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Kokkos implementation of heat3d_step, on the execution-space instance of the caller's stream,
// over the caller's arrays. 3D fields: the work split of a heat3d_variant (heat3d_variant.hpp;
// heat3d_default_variant<T>(layout) unless the tests or the bandwidth report ask for another).
// 2D and 1D fields: one cell per work item over an MDRangePolicy (x fastest).
// Per-cell arithmetic: detail::heat_update_{1,2,3}d, as in the CUDA and host kernels, so every
// variant gives the same bits.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "detail/backends.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"
#include "funnel/kokkos/execution_space.hpp"
#include "heat3d_variant.hpp"
#include "kokkos_support.hpp"

namespace funnel::kernels::detail::kokkos {
namespace {

/// One cell per work item, addressed as one index plus fixed neighbour offsets (cheaper on the GPU
/// than seven 3D view indexings). Index is int when the field has fewer than 2^31 cells: 32-bit
/// index arithmetic measured faster than 64-bit, and both faster than view indexing or a column
/// of z-planes per work item (docs/performance.md, "History by commit", e84ff52).
template <class T, int Dims, class Index>
struct heat_functor {
  const T* in;
  T* out;
  Index sy;  // distance of the y neighbours
  Index sz;  // of the z neighbours
  T c;

  KOKKOS_INLINE_FUNCTION void operator()(const Index i, const Index j, const Index k) const {
    const Index at = i + sy * j + sz * k;
    const T* p = in + at;
    if constexpr (Dims == 3) {
      out[at] = heat_update_3d(p[0], p[-1], p[1], p[-sy], p[sy], p[-sz], p[sz], c);
    } else if constexpr (Dims == 2) {
      out[at] = heat_update_2d(p[0], p[-1], p[1], p[-sy], p[sy], c);
    } else {
      out[at] = heat_update_1d(p[0], p[-1], p[1], c);
    }
  }
};

/// Updates P adjacent x-cells (the first at i0) in K consecutive z-planes (the first at k0) of
/// row j; cells outside [x_lo, x_hi) are not written. It issues every load before any arithmetic
/// (the K + 2 centre rows, the K rows on either side in y, one value on either side in x per
/// plane), so each work item keeps several independent requests in flight, as the CUDA kernel's
/// threads do. With `Pairs` (pairs_aligned holds and i0 is even) a row of P cells is P / 2
/// value_pair loads, else P scalar loads; loads that would start past the one holding x_hi load
/// that one instead, so no load leaves the row's halo (their cells are not written). The last,
/// shorter z-chunk of a region goes cell by cell.
template <class T, class Index, int P, int K, bool Pairs>
struct heat_blocks {
  static constexpr int W = Pairs ? 2 : 1;  // values per load
  static constexpr int U = P / W;          // loads per row
  static_assert(P % W == 0, "a block holds whole pairs");

  const T* in;
  T* out;
  Index sy;
  Index sz;
  Index x_lo;
  Index x_hi;
  Index x_last;  // first cell of the load holding x_hi: x_hi rounded down to a multiple of W
  Index z_hi;
  T c;

  KOKKOS_INLINE_FUNCTION bool inside(const Index i) const { return i >= x_lo && i < x_hi; }

  KOKKOS_INLINE_FUNCTION void update(const Index i0, const Index j, const Index k0) const {
    const Index base = i0 + sy * j + sz * k0;
    if (k0 + K > z_hi) {
      for (Index k = k0; k < z_hi; ++k) {
        for (int p = 0; p < P; ++p) {
          if (!inside(i0 + p)) continue;
          const Index at = base + (k - k0) * sz + p;
          const T* q = in + at;
          out[at] = heat_update_3d(q[0], q[-1], q[1], q[-sy], q[sy], q[-sz], q[sz], c);
        }
      }
      return;
    }
    Index at[U];  // offset of each load from i0
    for (int u = 0; u < U; ++u) at[u] = i0 + W * u < x_last ? W * u : x_last - i0;
    // x-neighbours of the first and last cell, kept inside the row's halo for unwritten cells.
    const Index west = (i0 > x_lo ? i0 : x_lo) - 1 - i0;
    const Index east = (i0 + P < x_hi ? i0 + P : x_hi) - i0;
    T column[K + 2][P];
    T ym[K][P];
    T yp[K][P];
    T xm[K];
    T xp[K];
    for (int q = 0; q < K + 2; ++q) load_units<Pairs>(in + base + (q - 1) * sz, at, column[q]);
    for (int q = 0; q < K; ++q) {
      const T* row = in + base + q * sz;
      load_units<Pairs>(row - sy, at, ym[q]);
      load_units<Pairs>(row + sy, at, yp[q]);
      xm[q] = row[west];
      xp[q] = row[east];
    }
    const bool all_inside = i0 >= x_lo && i0 + P <= x_hi;
    for (int q = 0; q < K; ++q) {
      T value[P];
      for (int p = 0; p < P; ++p) {
        const T w = p == 0 ? xm[q] : column[q + 1][p - 1];
        const T e = p == P - 1 ? xp[q] : column[q + 1][p + 1];
        value[p] = heat_update_3d(column[q + 1][p], w, e, ym[q][p], yp[q][p], column[q][p],
                                  column[q + 2][p], c);
      }
      T* const row = out + base + q * sz;
      if (Pairs && all_inside) {
        for (int u = 0; u < U; ++u) {
          *reinterpret_cast<value_pair<T>*>(row + 2 * u) = {{value[2 * u], value[2 * u + 1]}};
        }
        continue;
      }
      for (int p = 0; p < P; ++p) {
        if (inside(i0 + p)) row[p] = value[p];
      }
    }
  }
};

template <class T, class Index, int P, int K, bool Pairs>
heat_blocks<T, Index, P, K, Pairs> make_blocks(const field_layout& layout, const T* in, T* out,
                                               const box& region, T c) {
  return {in,
          out,
          static_cast<Index>(layout.row_pitch()),
          static_cast<Index>(layout.plane_pitch()),
          static_cast<Index>(region.lo[0]),
          static_cast<Index>(region.hi[0]),
          static_cast<Index>(Pairs ? region.hi[0] / 2 * 2 : region.hi[0]),
          static_cast<Index>(region.hi[2]),
          c};
}

/// First cell of the first block of a row: lo, rounded down to an even x with pairs (so that
/// every block starts on a pair).
template <bool Pairs>
std::int64_t first_block_x(const box& region) {
  return Pairs ? region.lo[0] / 2 * 2 : region.lo[0];
}

std::int64_t blocks_for(std::int64_t cells, int per_block) {
  return (cells + per_block - 1) / per_block;
}

/// heat3d_variant::x2z2 and x4z2: one block of P x-cells by K z-planes per MDRange work item.
template <class T, class Index, int P, int K, bool Pairs>
struct heat_block_functor {
  heat_blocks<T, Index, P, K, Pairs> blocks;
  Index x0;  // first cell of block column 0
  Index z_lo;

  KOKKOS_INLINE_FUNCTION void operator()(const Index column, const Index j,
                                         const Index chunk) const {
    blocks.update(x0 + column * P, j, z_lo + chunk * K);
  }
};

template <int P, int K, bool Pairs, class Index, class Space, class T>
void run_blocks(const Space& space, const field_layout& layout, const T* in, T* out,
                const box& region, T c, int tile_x, int tile_y) {
  const std::int64_t x0 = first_block_x<Pairs>(region);
  const heat_block_functor<T, Index, P, K, Pairs> functor{
      make_blocks<T, Index, P, K, Pairs>(layout, in, out, region, c), static_cast<Index>(x0),
      static_cast<Index>(region.lo[2])};
  const box blocks{
      {0, region.lo[1], 0},
      {blocks_for(region.hi[0] - x0, P), region.hi[1], blocks_for(region.extent(2), K)}};
  Kokkos::parallel_for("funnel::kernels::heat3d", box_policy<3>(space, blocks, tile_x, tile_y),
                       functor);
}

template <int P, int K, class Index, class Space, class T>
void run_blocks(const Space& space, const field_layout& layout, const T* in, T* out,
                const box& region, T c, int tile_x, int tile_y) {
  if (pairs_aligned(layout, in, out)) {
    run_blocks<P, K, true, Index>(space, layout, in, out, region, c, tile_x, tile_y);
  } else {
    run_blocks<P, K, false, Index>(space, layout, in, out, region, c, tile_x, tile_y);
  }
}

/// heat3d_variant::team_rows: a team per `team_rows` rows of K planes, a team thread per row
/// (TeamThreadRange), the thread's vector lanes along the row (ThreadVectorRange, x fastest:
/// on CUDA the 32 lanes of a warp), each lane updating 2 x 2 blocks as x2z2.
constexpr int team_rows = 8;

template <class Space, class T, class Index, bool Pairs>
struct heat_team_rows_functor {
  static constexpr int P = 2;
  static constexpr int K = 2;
  using member = typename Kokkos::TeamPolicy<Space>::member_type;
  heat_blocks<T, Index, P, K, Pairs> blocks;
  Index x0;       // first cell of block column 0
  Index columns;  // blocks per row
  Index y_lo;
  Index y_hi;
  Index z_lo;
  int row_groups;  // teams per z-chunk

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const Index j0 = y_lo + static_cast<Index>(team.league_rank() % row_groups) * team_rows;
    const Index k0 = z_lo + static_cast<Index>(team.league_rank() / row_groups) * K;
    const Index rows = y_hi - j0 < team_rows ? y_hi - j0 : team_rows;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const Index r) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, columns),
                           [&](const Index column) { blocks.update(x0 + column * P, j0 + r, k0); });
    });
  }
};

template <bool Pairs, class Index, class Space, class T>
void run_team_rows(const Space& space, const field_layout& layout, const T* in, T* out,
                   const box& region, T c) {
  using functor_type = heat_team_rows_functor<Space, T, Index, Pairs>;
  constexpr int P = functor_type::P;
  constexpr int K = functor_type::K;
  const std::int64_t x0 = first_block_x<Pairs>(region);
  const std::int64_t row_groups = blocks_for(region.extent(1), team_rows);
  const std::int64_t league = row_groups * blocks_for(region.extent(2), K);
  FUNNEL_EXPECTS(league <= std::numeric_limits<int>::max(),
                 "kokkos heat3d team_rows: more than 2^31 - 1 teams");
  const functor_type functor{make_blocks<T, Index, P, K, Pairs>(layout, in, out, region, c),
                             static_cast<Index>(x0),
                             static_cast<Index>(blocks_for(region.hi[0] - x0, P)),
                             static_cast<Index>(region.lo[1]),
                             static_cast<Index>(region.hi[1]),
                             static_cast<Index>(region.lo[2]),
                             static_cast<int>(row_groups)};
  Kokkos::parallel_for("funnel::kernels::heat3d",
                       team_policy(space, static_cast<int>(league), team_rows, 32), functor);
}

template <int Dims, class Index, class Space, class T>
void run_heat(const Space& space, const field_layout& layout, const T* in, T* out,
              const box& region, T c, heat3d_variant variant) {
  if constexpr (Dims == 3) {
    switch (variant) {
      case heat3d_variant::cell:
        break;
      case heat3d_variant::x2z2:
        run_blocks<2, 2, Index>(space, layout, in, out, region, c, 64, 4);
        return;
      case heat3d_variant::x4z2:
        run_blocks<4, 2, Index>(space, layout, in, out, region, c, 32, 8);
        return;
      case heat3d_variant::team_rows:
        if (pairs_aligned(layout, in, out)) {
          run_team_rows<true, Index>(space, layout, in, out, region, c);
        } else {
          run_team_rows<false, Index>(space, layout, in, out, region, c);
        }
        return;
    }
  }
  const auto sy = static_cast<Index>(layout.row_pitch());
  const auto sz = static_cast<Index>(layout.plane_pitch());
  const heat_functor<T, Dims, Index> functor{in, out, sy, sz, c};
  Kokkos::parallel_for("funnel::kernels::heat3d", box_policy<3>(space, region), functor);
}

template <int Dims, class Space, class T>
void run_heat(const Space& space, const field_layout& layout, const T* in, T* out,
              const box& region, T c, heat3d_variant variant) {
  if (layout.allocated_cells() <= std::numeric_limits<int>::max()) {
    run_heat<Dims, int>(space, layout, in, out, region, c, variant);
  } else {
    run_heat<Dims, std::int64_t>(space, layout, in, out, region, c, variant);
  }
}

}  // namespace

const char* to_string(heat3d_variant variant) noexcept {
  switch (variant) {
    case heat3d_variant::cell:
      return "cell";
    case heat3d_variant::x2z2:
      return "x2z2";
    case heat3d_variant::x4z2:
      return "x4z2";
    case heat3d_variant::team_rows:
      return "team_rows";
  }
  return "unknown";
}

template <class T>
void heat3d_step(stream_view stream, const field_layout& layout, const T* in, T* out,
                 const box& region, T c, heat3d_variant variant) {
  require_initialized("funnel::kernels::heat3d_step");
  if (region.empty()) return;
  // x in memory columns from the start of a row's slot (as the CUDA kernels count it), so that
  // pairs of cells at even columns are aligned in padded rows too.
  box columns = region;
  columns.lo[0] += layout.lead();
  columns.hi[0] += layout.lead();
  funnel::kokkos::with_execution_space(stream, [&](const auto& space) {
    if (layout.allocated(2) > 1) {
      run_heat<3>(space, layout, in, out, columns, c, variant);
    } else if (layout.allocated(1) > 1) {
      run_heat<2>(space, layout, in, out, columns, c, variant);
    } else {
      run_heat<1>(space, layout, in, out, columns, c, variant);
    }
    complete_on_host_stream(stream, space);
  });
}

template <class T>
void heat3d_step(stream_view stream, const field_layout& layout, const T* in, T* out,
                 const box& region, T c) {
  heat3d_step(stream, layout, in, out, region, c, heat3d_default_variant<T>(layout));
}

template void heat3d_step<float>(stream_view, const field_layout&, const float*, float*, const box&,
                                 float, heat3d_variant);
template void heat3d_step<double>(stream_view, const field_layout&, const double*, double*,
                                  const box&, double, heat3d_variant);
template void heat3d_step<float>(stream_view, const field_layout&, const float*, float*, const box&,
                                 float);
template void heat3d_step<double>(stream_view, const field_layout&, const double*, double*,
                                  const box&, double);

}  // namespace funnel::kernels::detail::kokkos
