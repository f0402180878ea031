// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// jacobi2d front end: checks once, dispatches; plus the reference problem's layout and fill.
#include "funnel/kernels/jacobi2d.hpp"

#include <algorithm>
#include <string>

#include "detail/backends.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/detail/initial_values.hpp"

namespace funnel::kernels {
namespace {

[[noreturn, maybe_unused]] void not_compiled(implementation impl) {
  throw unsupported("funnel::kernels: " + to_string(impl) + " is not compiled into this build");
}

void fill_rows(const field_layout& layout, const index3& global_interior, const index3& offset,
               float* field) {
  const std::int64_t nx = layout.allocated(0);
  const std::int64_t ny_global = global_interior[1] + 2;
  const bool left_boundary = offset[0] == 0;
  const bool right_boundary = offset[0] + layout.interior[0] == global_interior[0];
  std::fill_n(field, layout.allocated_cells(), 0.0F);  // cells and padding, as the CUDA fill
  for (std::int64_t j = 0; j < layout.allocated(1); ++j) {
    float* row = field + layout.index(0, j, 0);
    // Reference row numbering counts the periodic row 0, so allocated row j is row offset + j.
    const float boundary = detail::jacobi_boundary(offset[1] + j, ny_global);
    if (left_boundary) row[0] = boundary;
    if (right_boundary) row[nx - 1] = boundary;
  }
}

}  // namespace

field_layout jacobi2d_layout(std::int64_t nx, std::int64_t ny) {
  FUNNEL_EXPECTS(nx >= 3 && ny >= 3, "funnel::kernels::jacobi2d_layout: grid " +
                                         std::to_string(nx) + " x " + std::to_string(ny) +
                                         " is too small; nx and ny must be >= 3 (boundary "
                                         "included)");
  field_layout layout;
  layout.interior = {nx - 2, ny - 2, 1};
  layout.halo = 1;
  return layout;
}

void jacobi2d_step(stream_view stream, implementation impl, const field_layout& layout,
                   const float* a, float* a_new, const box& region, float* l2_norm_accumulator) {
  constexpr const char* kernel = "funnel::kernels::jacobi2d_step";
  detail::check_stream(stream, impl, kernel);
  FUNNEL_EXPECTS(detail::stencil_dims(layout, kernel) == 2,
                 std::string(kernel) +
                     ": needs a 2D layout (more than one cell along x and y, "
                     "one along z); got interior (" +
                     std::to_string(layout.interior[0]) + ", " +
                     std::to_string(layout.interior[1]) + ", " +
                     std::to_string(layout.interior[2]) + ")");
  if (!detail::check_region(layout, region, kernel)) return;
  detail::check_arrays(layout, a, a_new, sizeof(float), kernel);
  switch (impl) {
    case implementation::host:
      detail::host::jacobi2d_step(layout, a, a_new, region, l2_norm_accumulator);
      return;
    case implementation::cuda:
#if FUNNEL_KERNELS_WITH_CUDA
      detail::cuda::jacobi2d_step(stream, layout, a, a_new, region, l2_norm_accumulator);
      return;
#else
      not_compiled(impl);
#endif
    case implementation::kokkos:
#if FUNNEL_KERNELS_WITH_KOKKOS
      detail::kokkos::jacobi2d_step(stream, layout, a, a_new, region, l2_norm_accumulator);
      return;
#else
      not_compiled(impl);
#endif
  }
}

void jacobi2d_initialize(stream_view stream, const field_layout& layout,
                         const index3& global_interior, const index3& offset, float* a,
                         float* a_new) {
  constexpr const char* what = "funnel::kernels::jacobi2d_initialize";
  detail::check_placement(layout, global_interior, offset, what);
  FUNNEL_EXPECTS(global_interior[0] >= 1 && global_interior[1] >= 1 && global_interior[2] == 1,
                 std::string(what) + ": the global grid must be 2D (one cell along z)");
  FUNNEL_EXPECTS(a != nullptr, std::string(what) + ": the first array must not be null");
  if (stream.is_cuda()) {
#if FUNNEL_KERNELS_WITH_CUDA
    detail::cuda::jacobi2d_initialize(stream, layout, global_interior, offset, a, a_new);
    return;
#else
    not_compiled(implementation::cuda);
#endif
  }
  fill_rows(layout, global_interior, offset, a);
  if (a_new != nullptr) fill_rows(layout, global_interior, offset, a_new);
}

float jacobi2d_boundary_value(std::int64_t iy, std::int64_t ny) noexcept {
  return detail::jacobi_boundary(iy, ny);
}

}  // namespace funnel::kernels
