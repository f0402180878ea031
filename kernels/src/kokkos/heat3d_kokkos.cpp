// Kokkos implementation of heat3d_step: parallel_for over an MDRangePolicy (x fastest) on the
// execution-space instance of the caller's stream, over unmanaged views of the caller's arrays.
// Per-cell arithmetic: detail::heat_update_{1,2,3}d, as in the CUDA and host kernels.
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "detail/backends.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"
#include "funnel/kokkos/execution_space.hpp"
#include "funnel/kokkos/unmanaged_view.hpp"
#include "kokkos_support.hpp"

namespace funnel::kernels::detail::kokkos {
namespace {

template <class T, int Dims, class MemorySpace>
struct heat_functor {
  funnel::kokkos::unmanaged_field_view<const T, MemorySpace> in;
  funnel::kokkos::unmanaged_field_view<T, MemorySpace> out;
  T c;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, const std::int64_t j,
                                         const std::int64_t k) const {
    if constexpr (Dims == 3) {
      out(i, j, k) = heat_update_3d(in(i, j, k), in(i - 1, j, k), in(i + 1, j, k), in(i, j - 1, k),
                                    in(i, j + 1, k), in(i, j, k - 1), in(i, j, k + 1), c);
    } else if constexpr (Dims == 2) {
      out(i, j, k) = heat_update_2d(in(i, j, k), in(i - 1, j, k), in(i + 1, j, k), in(i, j - 1, k),
                                    in(i, j + 1, k), c);
    } else {
      out(i, j, k) = heat_update_1d(in(i, j, k), in(i - 1, j, k), in(i + 1, j, k), c);
    }
  }
};

template <int Dims, class Space, class T>
void run_heat(const Space& space, const field_layout& layout, const T* in, T* out,
              const box& region, T c) {
  using memory_space = typename Space::memory_space;
  const heat_functor<T, Dims, memory_space> functor{
      funnel::kokkos::field_view<memory_space>(in, layout),
      funnel::kokkos::field_view<memory_space>(out, layout), c};
  Kokkos::parallel_for("funnel::kernels::heat3d", box_policy<3>(space, region), functor);
}

}  // namespace

template <class T>
void heat3d_step(stream_view stream, const field_layout& layout, const T* in, T* out,
                 const box& region, T c) {
  require_initialized("funnel::kernels::heat3d_step");
  funnel::kokkos::with_execution_space(stream, [&](const auto& space) {
    if (layout.allocated(2) > 1) {
      run_heat<3>(space, layout, in, out, region, c);
    } else if (layout.allocated(1) > 1) {
      run_heat<2>(space, layout, in, out, region, c);
    } else {
      run_heat<1>(space, layout, in, out, region, c);
    }
    complete_on_host_stream(stream, space);
  });
}

template void heat3d_step<float>(stream_view, const field_layout&, const float*, float*, const box&,
                                 float);
template void heat3d_step<double>(stream_view, const field_layout&, const double*, double*,
                                  const box&, double);

}  // namespace funnel::kernels::detail::kokkos
