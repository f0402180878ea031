// Pieces shared by the Kokkos kernels: the policy over a box, the initialisation check and the
// host stream's completion rule.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "funnel/decomposition/box.hpp"
#include "funnel/error.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::kernels::detail::kokkos {

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
