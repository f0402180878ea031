// Pieces shared by the Kokkos kernels: the policy over a box, the initialisation check and the
// host stream's completion rule.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>

#include "funnel/decomposition/box.hpp"
#include "funnel/error.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::kernels::detail::kokkos {

/// MDRangePolicy over the first `Rank` axes of `region`, x iterated fastest (funnel's layout).
template <int Rank, class Space>
auto box_policy(const Space& space, const box& region) {
  using policy =
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<Rank, Kokkos::Iterate::Left, Kokkos::Iterate::Left>,
                            Kokkos::IndexType<std::int64_t>>;
  typename policy::point_type lo{};
  typename policy::point_type hi{};
  for (int axis = 0; axis < Rank; ++axis) {
    lo[axis] = region.lo[axis];
    hi[axis] = region.hi[axis];
  }
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
