// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// heat3d front end: checks the arguments once, then hands the call to the chosen
// implementation; plus the problem's exact solution and the host-side error and fill.
#include "funnel/kernels/heat3d.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "detail/backends.hpp"
#include "funnel/error.hpp"
#include "funnel/kernels/detail/initial_values.hpp"

namespace funnel::kernels {
namespace {

constexpr double pi = 3.14159265358979323846;

[[noreturn, maybe_unused]] void not_compiled(implementation impl) {
  throw unsupported("funnel::kernels: " + to_string(impl) + " is not compiled into this build");
}

// Global interior index of allocated cell `i` along `axis`.
std::int64_t global_index(const field_layout& layout, const index3& offset, int axis,
                          std::int64_t i) {
  return offset[axis] + i - layout.halo_along(axis);
}

// The stencil coefficient c = alpha * dt / h^2, which must be finite.
template <class T>
T checked_coefficient(heat3d_params<T> params, const char* kernel) {
  const T c = params.alpha_dt_over_h2;
  FUNNEL_EXPECTS(std::isfinite(c), std::string(kernel) + ": alpha*dt/h^2 is " + std::to_string(c) +
                                       "; it must be finite");
  return c;
}

// The checks of a one-step entry point: the step's coefficient, or nothing for an empty region.
template <class T>
std::optional<T> checked_step(stream_view stream, implementation impl, const field_layout& layout,
                              const T* in, const T* out, const box& region, heat3d_params<T> params,
                              const char* kernel) {
  detail::check_stream(stream, impl, kernel);
  detail::stencil_dims(layout, kernel);
  if (!detail::check_region(layout, region, kernel)) return std::nullopt;
  detail::check_arrays(layout, in, out, sizeof(T), kernel);
  return checked_coefficient(params, kernel);
}

}  // namespace

template <class T>
void heat3d_step(stream_view stream, implementation impl, const field_layout& layout, const T* in,
                 T* out, const box& region, heat3d_params<T> params) {
  const std::optional<T> checked =
      checked_step(stream, impl, layout, in, out, region, params, "funnel::kernels::heat3d_step");
  if (!checked) return;
  const T c = *checked;
  switch (impl) {
    case implementation::host:
      detail::host::heat3d_step(layout, in, out, region, c);
      return;
    case implementation::cuda:
#if FUNNEL_KERNELS_WITH_CUDA
      detail::cuda::heat3d_step(stream, layout, in, out, region, c);
      return;
#else
      not_compiled(impl);
#endif
    case implementation::kokkos:
#if FUNNEL_KERNELS_WITH_KOKKOS
      detail::kokkos::heat3d_step(stream, layout, in, out, region, c);
      return;
#else
      not_compiled(impl);
#endif
  }
}

template <class T>
void heat3d_step_pushed(stream_view stream, implementation impl, const field_layout& layout,
                        const T* in, T* out, const box& region, heat3d_params<T> params,
                        const pushed_exchange& push) {
  constexpr const char* kernel = "funnel::kernels::heat3d_step_pushed";
  if (impl != implementation::cuda) {
    throw unsupported(std::string(kernel) + ": the " + to_string(impl) +
                      " implementation cannot push an exchange (cuda only)");
  }
  const std::optional<T> c = checked_step(stream, impl, layout, in, out, region, params, kernel);
  FUNNEL_EXPECTS(c.has_value(),
                 std::string(kernel) + ": an empty region would never signal the neighbours");
#if FUNNEL_KERNELS_WITH_CUDA
  detail::cuda::heat3d_step_pushed(stream, layout, in, out, region, *c, push);
#else
  (void)push;
  not_compiled(impl);
#endif
}

template <class T>
void heat3d_two_steps(stream_view stream, implementation impl, const field_layout& layout,
                      const T* in, T* out, const box& first, const box& second,
                      heat3d_params<T> params) {
  constexpr const char* kernel = "funnel::kernels::heat3d_two_steps";
  detail::check_stream(stream, impl, kernel);
  if (!detail::check_two_step_regions(layout, first, second, kernel)) return;
  detail::check_arrays(layout, in, out, sizeof(T), kernel);
  const T c = checked_coefficient(params, kernel);
  switch (impl) {
    case implementation::host:
      detail::host::heat3d_two_steps(layout, in, out, first, second, c);
      return;
    case implementation::cuda:
#if FUNNEL_KERNELS_WITH_CUDA
      detail::cuda::heat3d_two_steps(stream, layout, in, out, first, second, c,
                                     heat3d_two_steps_shape(sizeof(T), second));
      return;
#else
      not_compiled(impl);
#endif
    case implementation::kokkos:
      throw unsupported(std::string(kernel) +
                        ": the kokkos implementation has no two-step kernel; take heat3d_step "
                        "twice");
  }
}

template <class T>
void heat3d_two_steps(stream_view stream, const field_layout& layout, const T* in, T* out,
                      const box& first, const box& second, heat3d_params<T> params,
                      const heat3d_block_shape& shape) {
  constexpr const char* kernel = "funnel::kernels::heat3d_two_steps";
  detail::check_stream(stream, implementation::cuda, kernel);
  const std::vector<heat3d_block_shape> compiled = heat3d_two_steps_shapes(sizeof(T));
  heat3d_block_shape columns = shape;
  columns.planes = 0;
  if (std::find(compiled.begin(), compiled.end(), columns) == compiled.end() || shape.planes < 0) {
    std::string names;
    for (const heat3d_block_shape& s : compiled) {
      names += (names.empty() ? "" : ", ") + s.to_string();
    }
    throw invalid_argument(
        std::string(kernel) + ": block shape " + shape.to_string() +
        (shape.planes < 0 ? " with " + std::to_string(shape.planes) + " planes" : std::string()) +
        " is not compiled for " + std::to_string(sizeof(T)) + "-byte elements; it has " + names +
        " (planes 0: its rule, or >= 1)");
  }
  if (!detail::check_two_step_regions(layout, first, second, kernel)) return;
  detail::check_arrays(layout, in, out, sizeof(T), kernel);
#if FUNNEL_KERNELS_WITH_CUDA
  detail::cuda::heat3d_two_steps(stream, layout, in, out, first, second,
                                 checked_coefficient(params, kernel),
                                 resolve_planes(shape, second));
#else
  static_cast<void>(params);  // check_stream has already refused: no CUDA in this build
  not_compiled(implementation::cuda);
#endif
}

bool heat3d_grid_supported(const index3& global_interior) noexcept {
  const bool positive = std::all_of(global_interior.begin(), global_interior.end(),
                                    [](std::int64_t n) { return n >= 1; });
  return positive && detail::leading_axes(global_interior) >= 1;
}

double heat3d_grid_spacing(const index3& global_interior) noexcept {
  return 1.0 / static_cast<double>(global_interior[0] + 1);
}

double heat3d_decay_rate(const index3& global_interior) noexcept {
  const double h = heat3d_grid_spacing(global_interior);
  double k2 = 0.0;
  for (int axis = 0; axis < 3; ++axis) {
    if (global_interior[axis] <= 1) continue;
    const double length = static_cast<double>(global_interior[axis] + 1) * h;
    k2 += pi * pi / (length * length);
  }
  return k2;
}

double heat3d_exact_solution(const index3& global_interior, const index3& global_cell, double alpha,
                             double t) noexcept {
  return detail::heat_mode_value(global_cell[0], global_cell[1], global_cell[2], global_interior[0],
                                 global_interior[1], global_interior[2]) *
         std::exp(-heat3d_decay_rate(global_interior) * alpha * t);
}

template <class T>
void heat3d_initialize(stream_view stream, const field_layout& layout,
                       const index3& global_interior, const index3& offset, T* field) {
  constexpr const char* what = "funnel::kernels::heat3d_initialize";
  detail::check_placement(layout, global_interior, offset, what);
  FUNNEL_EXPECTS(field != nullptr, std::string(what) + ": field must not be null");
  if (stream.is_cuda()) {
#if FUNNEL_KERNELS_WITH_CUDA
    detail::cuda::heat3d_initialize(stream, layout, global_interior, offset, field);
    return;
#else
    not_compiled(implementation::cuda);
#endif
  }
  if (layout.padded()) std::fill_n(field, layout.allocated_cells(), T(0));  // as the CUDA fill
  for (std::int64_t k = 0; k < layout.allocated(2); ++k) {
    for (std::int64_t j = 0; j < layout.allocated(1); ++j) {
      for (std::int64_t i = 0; i < layout.allocated(0); ++i) {
        field[layout.index(i, j, k)] = static_cast<T>(detail::heat_mode_value(
            global_index(layout, offset, 0, i), global_index(layout, offset, 1, j),
            global_index(layout, offset, 2, k), global_interior[0], global_interior[1],
            global_interior[2]));
      }
    }
  }
}

template <class T>
error_norms heat3d_error(const field_layout& layout, const index3& global_interior,
                         const index3& offset, double alpha, double t, const T* host_field) {
  constexpr const char* what = "funnel::kernels::heat3d_error";
  detail::check_placement(layout, global_interior, offset, what);
  FUNNEL_EXPECTS(host_field != nullptr, std::string(what) + ": field must not be null");
  const double decay = std::exp(-heat3d_decay_rate(global_interior) * alpha * t);
  const box interior = layout.interior_box();
  // A plane's norms each, on every core (a rank's box of 1024^3 cells took tens of seconds on
  // one), then summed plane by plane in order: the same figures whatever the threads.
  const std::int64_t planes = interior.hi[2] - interior.lo[2];
  std::vector<error_norms> plane(static_cast<std::size_t>(std::max<std::int64_t>(planes, 0)));
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < planes; ++p) {
    const std::int64_t k = interior.lo[2] + p;
    error_norms& n = plane[static_cast<std::size_t>(p)];
    for (std::int64_t j = interior.lo[1]; j < interior.hi[1]; ++j) {
      for (std::int64_t i = interior.lo[0]; i < interior.hi[0]; ++i) {
        const double exact =
            detail::heat_mode_value(global_index(layout, offset, 0, i),
                                    global_index(layout, offset, 1, j),
                                    global_index(layout, offset, 2, k), global_interior[0],
                                    global_interior[1], global_interior[2]) *
            decay;
        const double diff = static_cast<double>(host_field[layout.index(i, j, k)]) - exact;
        n.max_abs = std::fmax(n.max_abs, std::fabs(diff));
        n.sum_squares += diff * diff;
        ++n.cells;
      }
    }
  }
  error_norms norms;
  for (const error_norms& n : plane) norms.add(n);
  return norms;
}

template <class T>
error_norms heat3d_error(stream_view stream, const field_layout& layout,
                         const index3& global_interior, const index3& offset, double alpha,
                         double t, const T* field) {
  if (!stream.is_cuda()) return heat3d_error(layout, global_interior, offset, alpha, t, field);
  constexpr const char* what = "funnel::kernels::heat3d_error";
  detail::check_placement(layout, global_interior, offset, what);
  FUNNEL_EXPECTS(field != nullptr, std::string(what) + ": field must not be null");
#if FUNNEL_KERNELS_WITH_CUDA
  const double decay = std::exp(-heat3d_decay_rate(global_interior) * alpha * t);
  return detail::cuda::heat3d_error(stream, layout, global_interior, offset, decay, field);
#else
  not_compiled(implementation::cuda);
#endif
}

#define FUNNEL_KERNELS_INSTANTIATE_HEAT3D(T)                                                      \
  template void heat3d_step<T>(stream_view, implementation, const field_layout&, const T*, T*,    \
                               const box&, heat3d_params<T>);                                     \
  template void heat3d_step_pushed<T>(stream_view, implementation, const field_layout&, const T*, \
                                      T*, const box&, heat3d_params<T>, const pushed_exchange&);  \
  template void heat3d_two_steps<T>(stream_view, implementation, const field_layout&, const T*,   \
                                    T*, const box&, const box&, heat3d_params<T>);                \
  template void heat3d_two_steps<T>(stream_view, const field_layout&, const T*, T*, const box&,   \
                                    const box&, heat3d_params<T>, const heat3d_block_shape&);     \
  template void heat3d_initialize<T>(stream_view, const field_layout&, const index3&,             \
                                     const index3&, T*);                                          \
  template error_norms heat3d_error<T>(const field_layout&, const index3&, const index3&, double, \
                                       double, const T*);                                         \
  template error_norms heat3d_error<T>(stream_view, const field_layout&, const index3&,           \
                                       const index3&, double, double, const T*);
FUNNEL_KERNELS_INSTANTIATE_HEAT3D(float)
FUNNEL_KERNELS_INSTANTIATE_HEAT3D(double)
#undef FUNNEL_KERNELS_INSTANTIATE_HEAT3D

}  // namespace funnel::kernels
