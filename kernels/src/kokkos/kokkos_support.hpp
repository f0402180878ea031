// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Pieces shared by the Kokkos kernels: the policies over a box and over teams, the vector loads
// of a row, the initialisation check and the host stream's completion rule.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/error.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::kernels::detail::kokkos {

/// Two adjacent values of a row moved as one unit: nvcc makes one 8-byte (float) or 16-byte
/// (double) vector access of it, the CUDA kernels' float2 / double2; host compilers plain moves.
template <class T>
struct alignas(2 * sizeof(T)) value_pair {
  T v[2];
};

/// True when every pair of cells starting at an even memory column (x + layout.lead()) is
/// aligned for a value_pair in both arrays: an even row stride (then the plane stride is even
/// too) and aligned arrays.
template <class T>
bool pairs_aligned(const field_layout& layout, const T* in, const T* out) {
  constexpr std::uintptr_t align = alignof(value_pair<T>);
  return layout.row_pitch() % 2 == 0 && reinterpret_cast<std::uintptr_t>(in) % align == 0 &&
         reinterpret_cast<std::uintptr_t>(out) % align == 0;
}

/// Loads the U units of a row at `row + at[u]` into `v` (U value_pairs with `Pairs`, else U
/// single values), all issued before any is used.
template <bool Pairs, class T, class Index, int U, int P>
KOKKOS_INLINE_FUNCTION void load_units(const T* row, const Index (&at)[U], T (&v)[P]) {
  static_assert(P == (Pairs ? 2 : 1) * U, "one value per cell");
  for (int u = 0; u < U; ++u) {
    if constexpr (Pairs) {
      const value_pair<T> pair = *reinterpret_cast<const value_pair<T>*>(row + at[u]);
      v[2 * u] = pair.v[0];
      v[2 * u + 1] = pair.v[1];
    } else {
      v[u] = row[at[u]];
    }
  }
}

/// A TeamPolicy of `league` teams of `cuda_team_size` threads on CUDA; of one thread on the
/// host spaces (whose team loops then run in order).
template <class Space>
Kokkos::TeamPolicy<Space> team_policy(const Space& space, int league,
                                      [[maybe_unused]] int cuda_team_size,
                                      [[maybe_unused]] int cuda_vector_length = 1) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    return Kokkos::TeamPolicy<Space>(space, league, cuda_team_size, cuda_vector_length);
  }
#endif
  return Kokkos::TeamPolicy<Space>(space, league, 1);
}

/// MDRangePolicy over the first `Rank` axes of `region`, x iterated fastest (funnel's layout),
/// with int coordinates (cheaper on the GPU than 64-bit ones; a field axis is far below 2^31).
/// On CUDA its tiles (thread blocks) are `tile_x` x `tile_y` (x 1) work items; other backends
/// take Kokkos' default tiles.
template <int Rank, class Space>
auto box_policy(const Space& space, const box& region, [[maybe_unused]] int tile_x = 64,
                [[maybe_unused]] int tile_y = 4) {
  for (int axis = 0; axis < Rank; ++axis) {
    FUNNEL_EXPECTS(region.lo[axis] >= 0 && region.hi[axis] <= std::numeric_limits<int>::max(),
                   "kokkos kernels: a region coordinate beyond 2^31 - 1");
  }
  using policy =
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<Rank, Kokkos::Iterate::Left, Kokkos::Iterate::Left>,
                            Kokkos::IndexType<int>>;
  typename policy::point_type lo{};
  typename policy::point_type hi{};
  for (int axis = 0; axis < Rank; ++axis) {
    lo[axis] = region.lo[axis];
    hi[axis] = region.hi[axis];
  }
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    // By default tiles of 64 x 4 (x 1) cells, the CUDA kernels' block shape: a warp covers 64
    // cells of one row, and the y-neighbours of a block's rows stay in L1. Kokkos' default
    // tiles for Iterate::Left are narrower along x.
    typename policy::tile_type tile{};
    tile[0] = tile_x;
    tile[1] = tile_y;
    if constexpr (Rank == 3) tile[2] = 1;
    return policy(space, lo, hi, tile);
  }
#endif
  return policy(space, lo, hi);
}

inline void require_initialized(const char* kernel) {
  FUNNEL_EXPECTS(Kokkos::is_initialized(),
                 std::string(kernel) +
                     ": Kokkos is not initialised; create a funnel::kokkos::scope_guard (or call "
                     "Kokkos::initialize) before using the kokkos implementation");
}

/// Work on the host stream must be complete when the call returns (funnel's host semantics);
/// host execution spaces may run asynchronously, so fence their instance.
template <class Space>
void complete_on_host_stream(stream_view stream, const Space& space) {
  if (!stream.is_cuda()) space.fence();
}

}  // namespace funnel::kernels::detail::kokkos
