// Kokkos implementation of jacobi2d_step. Without a norm: parallel_for over an MDRangePolicy.
// With a norm: one team per row, the team sums its squared updates in float and adds the sum
// with one atomic_add (as the CUDA kernel does per block), so the norm's last bits depend on
// the summation order while the field is bitwise that of the other implementations.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "detail/backends.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"
#include "funnel/kokkos/execution_space.hpp"
#include "funnel/kokkos/unmanaged_view.hpp"
#include "kokkos_support.hpp"

namespace funnel::kernels::detail::kokkos {
namespace {

template <class MemorySpace>
struct jacobi_cell {
  funnel::kokkos::unmanaged_field_view<const float, MemorySpace> a;
  funnel::kokkos::unmanaged_field_view<float, MemorySpace> a_new;

  // Updates cell (i, j) and returns its squared update.
  KOKKOS_INLINE_FUNCTION float update(const std::int64_t i, const std::int64_t j) const {
    const float value =
        jacobi_update(a(i + 1, j, 0), a(i - 1, j, 0), a(i, j + 1, 0), a(i, j - 1, 0));
    a_new(i, j, 0) = value;
    return squared_update(value, a(i, j, 0));
  }
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, const std::int64_t j) const {
    (void)update(i, j);
  }
};

template <class Space>
struct jacobi_rows_with_norm {
  using memory_space = typename Space::memory_space;
  using member = typename Kokkos::TeamPolicy<Space>::member_type;
  jacobi_cell<memory_space> cell;
  funnel::kokkos::unmanaged_view<float, memory_space> norm;
  std::int64_t i0;
  std::int64_t i1;
  std::int64_t j0;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const std::int64_t j = j0 + team.league_rank();
    float row_sum = 0.0F;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, i0, i1),
        [&](const std::int64_t i, float& sum) { sum += cell.update(i, j); }, row_sum);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { Kokkos::atomic_add(&norm(0), row_sum); });
  }
};

template <class Space>
void run_jacobi(const Space& space, const field_layout& layout, const float* a, float* a_new,
                const box& region, float* l2_norm) {
  using memory_space = typename Space::memory_space;
  const jacobi_cell<memory_space> cell{funnel::kokkos::field_view<memory_space>(a, layout),
                                       funnel::kokkos::field_view<memory_space>(a_new, layout)};
  if (l2_norm == nullptr) {
    Kokkos::parallel_for("funnel::kernels::jacobi2d", box_policy<2>(space, region), cell);
    return;
  }
  const jacobi_rows_with_norm<Space> rows{cell, funnel::kokkos::view_of<memory_space>(l2_norm, 1),
                                          region.lo[0], region.hi[0], region.lo[1]};
  Kokkos::parallel_for(
      "funnel::kernels::jacobi2d",
      Kokkos::TeamPolicy<Space>(space, static_cast<int>(region.extent(1)), Kokkos::AUTO), rows);
}

}  // namespace

void jacobi2d_step(stream_view stream, const field_layout& layout, const float* a, float* a_new,
                   const box& region, float* l2_norm) {
  require_initialized("funnel::kernels::jacobi2d_step");
  funnel::kokkos::with_execution_space(stream, [&](const auto& space) {
    run_jacobi(space, layout, a, a_new, region, l2_norm);
    complete_on_host_stream(stream, space);
  });
}

}  // namespace funnel::kernels::detail::kokkos
