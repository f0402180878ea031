// Kokkos implementation of heat3d_step: parallel_for over an MDRangePolicy (x fastest) on the
// execution-space instance of the caller's stream, over the caller's arrays.
// Per-cell arithmetic: detail::heat_update_{1,2,3}d, as in the CUDA and host kernels.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <limits>

#include "detail/backends.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"
#include "funnel/kokkos/execution_space.hpp"
#include "kokkos_support.hpp"

namespace funnel::kernels::detail::kokkos {
namespace {

/// One cell per work item, addressed as one index plus fixed neighbour offsets (cheaper on the GPU
/// than seven 3D view indexings). Index is int when the field has fewer than 2^31 cells: 32-bit
/// index arithmetic measured 0.60 / 0.95 of the CUDA kernel at 512^3 float / double on an H100,
/// against 0.59 / 0.83 with 64-bit and 0.39 / 0.68 with view indexing (Kokkos 4.6.99; a column
/// of 8 z-planes per work item with the z-neighbours in registers gave 0.32 / 0.50).
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

template <int Dims, class Index, class Space, class T>
void run_heat(const Space& space, const field_layout& layout, const T* in, T* out,
              const box& region, T c) {
  const auto sy = static_cast<Index>(layout.allocated(0));
  const auto sz = static_cast<Index>(layout.allocated(0) * layout.allocated(1));
  const heat_functor<T, Dims, Index> functor{in, out, sy, sz, c};
  Kokkos::parallel_for("funnel::kernels::heat3d", box_policy<3>(space, region), functor);
}

template <int Dims, class Space, class T>
void run_heat(const Space& space, const field_layout& layout, const T* in, T* out,
              const box& region, T c) {
  if (layout.allocated_cells() <= std::numeric_limits<int>::max()) {
    run_heat<Dims, int>(space, layout, in, out, region, c);
  } else {
    run_heat<Dims, std::int64_t>(space, layout, in, out, region, c);
  }
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
