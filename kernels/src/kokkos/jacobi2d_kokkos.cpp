// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Kokkos implementation of jacobi2d_step, in the CUDA kernel's shape (src/cuda/jacobi2d.cu) and
// one source for every Kokkos backend: a team per tile of 32 columns x 8 row groups, each team
// thread updating P = 4 adjacent x-cells in R = 4 consecutive rows, every load of its column
// issued before any arithmetic (the R + 2 rows of its P cells, one value on either side in x per
// row), so the y-neighbours come from registers. With a norm, each thread sums its squared
// updates in float, the team sums them (Kokkos' team reduction) and adds the team's sum with one
// atomic_add: one same-address atomic per 32 x 8 x P x R cells, as the CUDA kernel's block. The
// field is bitwise that of the other implementations (detail::jacobi_update from the same
// operands); the norm's last bits depend on the summation order.
//
// On CUDA a team is 256 threads, a warp 32 consecutive columns of one row group. The host spaces
// run each team on one thread, its 256 blocks in order.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <limits>

#include "detail/backends.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"
#include "funnel/kokkos/execution_space.hpp"
#include "funnel/kokkos/unmanaged_view.hpp"
#include "kokkos_support.hpp"

namespace funnel::kernels::detail::kokkos {
namespace {

constexpr int cells_per_thread = 4;  // P: adjacent x-cells a team thread updates in each row
constexpr int rows_per_thread = 4;   // R
constexpr int tile_columns = 32;     // team threads along x (a warp on CUDA)
constexpr int tile_row_groups = 8;   // team threads along y
constexpr int team_threads = tile_columns * tile_row_groups;

/// Updates P adjacent x-cells (the first at memory column i0) in R consecutive rows (the first
/// at j0) and returns the sum of their squared updates; cells outside [x_lo, x_hi) x [.., y_hi)
/// are not written and not summed. With `Pairs` (pairs_aligned holds and i0 is even) a row of P
/// cells is P / 2 value_pair loads, else P scalar loads; loads that would start past the one
/// holding x_hi load that one instead, so no load leaves the row's halo. The last rows of a
/// region, fewer than R, go cell by cell.
template <class Index, bool Pairs>
struct jacobi_blocks {
  static constexpr int P = cells_per_thread;
  static constexpr int R = rows_per_thread;
  static constexpr int W = Pairs ? 2 : 1;  // values per load
  static constexpr int U = P / W;          // loads per row

  const float* a;
  float* a_new;
  Index sy;
  Index x_lo;
  Index x_hi;
  Index x_last;  // first cell of the load holding x_hi: x_hi rounded down to a multiple of W
  Index y_hi;

  KOKKOS_INLINE_FUNCTION bool inside(const Index i) const { return i >= x_lo && i < x_hi; }

  KOKKOS_INLINE_FUNCTION float update(const Index i0, const Index j0) const {
    float squared = 0.0F;
    if (i0 >= x_hi || j0 >= y_hi) return squared;
    const Index base = i0 + sy * j0;
    if (j0 + R > y_hi) {
      for (Index j = j0; j < y_hi; ++j) {
        for (int p = 0; p < P; ++p) {
          if (!inside(i0 + p)) continue;
          const Index at = base + (j - j0) * sy + p;
          const float* q = a + at;
          const float value = jacobi_update(q[1], q[-1], q[sy], q[-sy]);
          a_new[at] = value;
          squared = add_rn(squared, squared_update(value, q[0]));
        }
      }
      return squared;
    }
    Index at[U];  // offset of each load from i0
    for (int u = 0; u < U; ++u) at[u] = i0 + W * u < x_last ? W * u : x_last - i0;
    // x-neighbours of the first and last cell, kept inside the row's halo for unwritten cells.
    const Index west = (i0 > x_lo ? i0 : x_lo) - 1 - i0;
    const Index east = (i0 + P < x_hi ? i0 + P : x_hi) - i0;
    float column[R + 2][P];
    float xm[R];
    float xp[R];
    for (int r = 0; r < R + 2; ++r) load_units<Pairs>(a + base + (r - 1) * sy, at, column[r]);
    for (int r = 0; r < R; ++r) {
      xm[r] = a[base + r * sy + west];
      xp[r] = a[base + r * sy + east];
    }
    const bool all_inside = i0 >= x_lo && i0 + P <= x_hi;
    for (int r = 0; r < R; ++r) {
      float value[P];
      for (int p = 0; p < P; ++p) {
        const float w = p == 0 ? xm[r] : column[r + 1][p - 1];
        const float e = p == P - 1 ? xp[r] : column[r + 1][p + 1];
        value[p] = jacobi_update(e, w, column[r + 2][p], column[r][p]);
      }
      float* const row = a_new + base + r * sy;
      if (Pairs && all_inside) {
        for (int u = 0; u < U; ++u) {
          const int first = 2 * u;  // the pair's first cell
          *reinterpret_cast<value_pair<float>*>(row + first) = {{value[first], value[first + 1]}};
        }
      } else {
        for (int p = 0; p < P; ++p) {
          if (inside(i0 + p)) row[p] = value[p];
        }
      }
      for (int p = 0; p < P; ++p) {
        if (all_inside || inside(i0 + p)) {
          squared = add_rn(squared, squared_update(value[p], column[r + 1][p]));
        }
      }
    }
    return squared;
  }
};

/// A team per tile; `Norm` adds the tile's squared updates to `norm(0)` with one atomic.
template <class Space, class Index, bool Pairs, bool Norm>
struct jacobi_tiles {
  using member = typename Kokkos::TeamPolicy<Space>::member_type;
  using memory_space = typename Space::memory_space;
  jacobi_blocks<Index, Pairs> blocks;
  funnel::kokkos::unmanaged_view<float, memory_space> norm;
  Index x0;  // memory column of block column 0
  Index y0;
  int tiles_x;

  // The block of team thread t of tile (tx, ty).
  KOKKOS_INLINE_FUNCTION float update(const member& team, const int t) const {
    const Index tx = team.league_rank() % tiles_x;
    const Index ty = team.league_rank() / tiles_x;
    const Index column = tx * tile_columns + t % tile_columns;
    const Index group = ty * tile_row_groups + t / tile_columns;
    return blocks.update(x0 + column * cells_per_thread, y0 + group * rows_per_thread);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    if constexpr (Norm) {
      float tile_sum = 0.0F;
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, team_threads),
          [&](const int t, float& sum) { sum = add_rn(sum, update(team, t)); }, tile_sum);
      Kokkos::single(Kokkos::PerTeam(team), [&]() { Kokkos::atomic_add(&norm(0), tile_sum); });
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, team_threads),
                           [&](const int t) { (void)update(team, t); });
    }
  }
};

std::int64_t tiles_for(std::int64_t cells, std::int64_t per_tile) {
  return (cells + per_tile - 1) / per_tile;
}

template <class Index, bool Pairs, bool Norm, class Space>
void run_tiles(const Space& space, const field_layout& layout, const float* a, float* a_new,
               const box& columns, float* l2_norm) {
  // The first block starts at lo rounded down to an even column with pairs, so that every
  // block starts on a pair.
  const std::int64_t x0 = Pairs ? columns.lo[0] / 2 * 2 : columns.lo[0];
  const std::int64_t tiles_x =
      tiles_for(columns.hi[0] - x0, std::int64_t{tile_columns} * cells_per_thread);
  const std::int64_t tiles_y =
      tiles_for(columns.extent(1), std::int64_t{tile_row_groups} * rows_per_thread);
  FUNNEL_EXPECTS(tiles_x * tiles_y <= std::numeric_limits<int>::max(),
                 "kokkos jacobi2d: more than 2^31 - 1 teams");
  using memory_space = typename Space::memory_space;
  const jacobi_tiles<Space, Index, Pairs, Norm> tiles{
      {a, a_new, static_cast<Index>(layout.row_pitch()), static_cast<Index>(columns.lo[0]),
       static_cast<Index>(columns.hi[0]),
       static_cast<Index>(Pairs ? columns.hi[0] / 2 * 2 : columns.hi[0]),
       static_cast<Index>(columns.hi[1])},
      funnel::kokkos::view_of<memory_space>(l2_norm, Norm ? 1 : 0),
      static_cast<Index>(x0),
      static_cast<Index>(columns.lo[1]),
      static_cast<int>(tiles_x)};
  Kokkos::parallel_for("funnel::kernels::jacobi2d",
                       team_policy(space, static_cast<int>(tiles_x * tiles_y), team_threads),
                       tiles);
}

template <class Index, bool Pairs, class Space>
void run_tiles(const Space& space, const field_layout& layout, const float* a, float* a_new,
               const box& columns, float* l2_norm) {
  if (l2_norm != nullptr) {
    run_tiles<Index, Pairs, true>(space, layout, a, a_new, columns, l2_norm);
  } else {
    run_tiles<Index, Pairs, false>(space, layout, a, a_new, columns, l2_norm);
  }
}

template <class Space>
void run_jacobi(const Space& space, const field_layout& layout, const float* a, float* a_new,
                const box& region, float* l2_norm) {
  // x in memory columns from the start of a row's slot (as the CUDA kernel counts it), so that
  // pairs of cells at even columns are aligned in padded rows too.
  box columns = region;
  columns.lo[0] += layout.lead();
  columns.hi[0] += layout.lead();
  const bool small = layout.allocated_cells() <= std::numeric_limits<int>::max();
  const bool pairs = pairs_aligned(layout, a, a_new);
  if (small && pairs) {
    run_tiles<int, true>(space, layout, a, a_new, columns, l2_norm);
  } else if (small) {
    run_tiles<int, false>(space, layout, a, a_new, columns, l2_norm);
  } else if (pairs) {
    run_tiles<std::int64_t, true>(space, layout, a, a_new, columns, l2_norm);
  } else {
    run_tiles<std::int64_t, false>(space, layout, a, a_new, columns, l2_norm);
  }
}

}  // namespace

void jacobi2d_step(stream_view stream, const field_layout& layout, const float* a, float* a_new,
                   const box& region, float* l2_norm) {
  require_initialized("funnel::kernels::jacobi2d_step");
  if (region.empty()) return;
  funnel::kokkos::with_execution_space(stream, [&](const auto& space) {
    run_jacobi(space, layout, a, a_new, region, l2_norm);
    complete_on_host_stream(stream, space);
  });
}

}  // namespace funnel::kernels::detail::kokkos
