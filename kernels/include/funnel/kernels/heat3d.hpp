// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file heat3d.hpp
 * @brief The heat equation stencil (7-point in 3D) and its exact solution.
 *
 * Problem: u_t = alpha * laplace(u) on the box [0, L_x] x [0, L_y] x [0, L_z] with u = 0 on the
 * boundary. The global grid has N_a interior points along axis a at x = (g + 1) * h, g = 0 ..
 * N_a - 1, with one spacing h = 1 / (N_x + 1) on every axis, so L_a = (N_a + 1) * h and the domain
 * is the unit cube when N_x = N_y = N_z. The halo cells just outside the global interior hold the
 * Dirichlet value 0 and no step writes them.
 *
 * Initial condition: the lowest mode u0 = prod_a sin(pi * x_a / L_a) over the axes with more than
 * one global cell; it decays as exp(-k2 * alpha * t) with k2 = pi^2 * sum_a 1 / L_a^2
 * (3 pi^2 on the unit cube). Axes with one global cell (a 2D or 1D run) are left out of the
 * stencil and of the mode.
 */
#pragma once

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/halo/pushed_exchange.hpp"
#include "funnel/kernels/error_norms.hpp"
#include "funnel/kernels/heat3d_block_shape.hpp"
#include "funnel/kernels/heat3d_params.hpp"
#include "funnel/kernels/implementation.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::kernels {

/**
 * @brief One explicit Euler step: `out = in + c * (sum of neighbours - n * in)` on every cell of
 * `region`, nothing else written.
 *
 * Neighbours are taken along the axes whose allocated extent is larger than one (6 in 3D, 4 in
 * 2D). The arithmetic of each cell is fixed (see detail/stencil_arithmetic.hpp), so the result
 * is bitwise the same for any split of the region into sub-boxes and for every implementation.
 * Stream-ordered: on a CUDA stream it returns once the kernel is queued.
 *
 * @param stream stream to run on; a CUDA stream for `cuda`, the host stream for `host`
 * @param impl implementation to use (see default_implementation)
 * @param layout the rank's field layout (both arrays use it)
 * @param in field at the current step (read at region and its one-cell surroundings)
 * @param out field at the next step; must not alias `in`
 * @param region cells to update, in allocated-array coordinates; it must keep one cell away from
 * the array's edge along every axis with neighbours and be [0, 1) along the others; empty: no-op
 * @param params the coefficient c = alpha * dt / h^2, finite
 * @throw funnel::invalid_argument for a region outside the array, null or aliasing pointers, a
 * stream that does not suit `impl`, or a coefficient that is not finite
 * @throw funnel::unsupported when `impl` is not compiled into this build
 * @throw funnel::cuda_error when the launch fails
 */
template <class T>
void heat3d_step(stream_view stream, implementation impl, const field_layout& layout, const T* in,
                 T* out, const box& region, heat3d_params<T> params);

/**
 * @brief heat3d_step that also does an exchange (cuda only): every new value on a face of
 * `push` goes into the neighbour's ghosts as well, and the kernel's last block signals the
 * neighbours and waits for theirs (see pushed_exchange.hpp and halo_exchange::push_next). Many
 * ranks sharing one GPU then pay one launch per step instead of two (docs/halo.md, "Pushed
 * exchanges"). The values are those of heat3d_step, bitwise.
 *
 * @param stream a CUDA stream
 * @param impl must be `cuda`
 * @param layout as heat3d_step
 * @param in as heat3d_step
 * @param out as heat3d_step
 * @param region as heat3d_step, and not empty (the launch is what signals the neighbours)
 * @param params as heat3d_step
 * @param push the exchange, from halo_exchange::push_next(stream, out); cells of its faces outside
 * `region` are not pushed
 * @throw funnel::invalid_argument for an empty region; otherwise as heat3d_step
 * @throw funnel::unsupported for `host` or `kokkos`, or without CUDA in this build
 * @throw funnel::cuda_error when the launch fails
 */
template <class T>
void heat3d_step_pushed(stream_view stream, implementation impl, const field_layout& layout,
                        const T* in, T* out, const box& region, heat3d_params<T> params,
                        const pushed_exchange& push);

/**
 * @brief Two explicit Euler steps in one launch (3D only): the field `mid` is `out` with the
 * cells of `first` replaced by heat3d_step from `in`; then heat3d_step from `mid` is written
 * into `out` on the cells of `second`. Nothing else is written: `out` ends with the second
 * step's values on `second` and its old values elsewhere.
 *
 * It gives, bitwise, what heat3d_step(in -> out, first) then heat3d_step(out -> in, second)
 * leave in `in` on `second`, but it writes the other array and leaves `in` as it was. Many ranks
 * sharing one GPU pay for every kernel launch (docs/halo.md, "Two steps per launch"); this is
 * one launch for two steps. A field with a halo two cells deep takes it after each exchange,
 * with `first` the interior grown by one cell towards the neighbours and `second` the interior.
 *
 * @param stream stream to run on; a CUDA stream for `cuda`, the host stream for `host`
 * @param impl host or cuda (kokkos: funnel::unsupported)
 * @param layout the rank's field layout (both arrays use it); every axis must have neighbours
 * @param in field at the current step (read on `first` and its one-cell surroundings)
 * @param out read outside `first` where `second`'s surroundings reach, written on `second`;
 * must not alias `in`
 * @param first cells of the first step, kept one cell from the array's edge (as heat3d_step)
 * @param second cells of the second step; they and their one-cell surroundings must lie inside
 * the array, and `second` inside `first` (or empty: a no-op)
 * @param params the coefficient c = alpha * dt / h^2, finite
 * @throw funnel::invalid_argument for such regions outside the array, `second` not inside
 * `first`, a field that is not 3D, null or aliasing pointers, or a stream that does not suit
 * `impl`
 * @throw funnel::unsupported for `kokkos`, or an implementation not compiled into this build
 * @throw funnel::cuda_error when the launch fails
 */
template <class T>
void heat3d_two_steps(stream_view stream, implementation impl, const field_layout& layout,
                      const T* in, T* out, const box& first, const box& second,
                      heat3d_params<T> params);

/**
 * @brief heat3d_two_steps on a CUDA stream with a block shape of one's choosing, for measuring
 * the kernel's shapes against each other (`funnel-bench kernels`); the result is bitwise the
 * same for every shape.
 *
 * @param stream a CUDA stream
 * @param layout as the other heat3d_two_steps
 * @param in as the other heat3d_two_steps
 * @param out as the other heat3d_two_steps
 * @param first as the other heat3d_two_steps
 * @param second as the other heat3d_two_steps
 * @param params as the other heat3d_two_steps
 * @param shape one of heat3d_two_steps_shapes(sizeof(T)), with any `planes` >= 1 or 0 (the
 * kernel's own rule)
 * @throw funnel::invalid_argument for a shape not compiled for T, negative planes, more blocks
 * along y or z than a launch may have, or what heat3d_two_steps refuses
 * @throw funnel::unsupported in a build without CUDA
 */
template <class T>
void heat3d_two_steps(stream_view stream, const field_layout& layout, const T* in, T* out,
                      const box& first, const box& second, heat3d_params<T> params,
                      const heat3d_block_shape& shape);

/**
 * @brief Whether heat3d_step can update a field of this global grid once it is split.
 *
 * An axis of one global cell carries no halo (field_layout), so the stencil's axes must lead:
 * NX,NY,1 is a 2D grid, 1,NY,NZ is not a grid any split of which the kernels take. Applications
 * check a grid with this before they allocate, instead of failing in every rank's first step.
 * @param global_interior interior cells of the whole grid
 * @return true when every extent is >= 1, some extent is > 1 and the extents > 1 come first
 */
[[nodiscard]] bool heat3d_grid_supported(const index3& global_interior) noexcept;

/**
 * @brief Grid spacing of a global grid, the same along every axis.
 * @param global_interior interior cells of the whole grid
 * @return h = 1 / (N_x + 1): the x axis, boundaries included, spans the unit interval
 */
[[nodiscard]] double heat3d_grid_spacing(const index3& global_interior) noexcept;

/**
 * @brief Decay rate of the mode heat3d_initialize writes: u(t) = u0 * exp(-k2 * alpha * t).
 * @param global_interior interior cells of the whole grid
 * @return k2, the sum of (pi / L_a)^2 over the axes of more than one cell, L_a = (N_a + 1) * h:
 * 3 pi^2 on the unit cube
 */
[[nodiscard]] double heat3d_decay_rate(const index3& global_interior) noexcept;

/**
 * @brief The exact solution at a global cell.
 * @param global_interior interior cells of the whole grid
 * @param global_cell cell index counted from the first global interior cell (-1 and N_a are the
 * boundary, where the value is 0)
 * @param alpha diffusivity
 * @param t time
 * @return the exact value; 0 outside [0, N_a) along an axis with more than one cell
 */
[[nodiscard]] double heat3d_exact_solution(const index3& global_interior, const index3& global_cell,
                                           double alpha, double t) noexcept;

/**
 * @brief Writes the t = 0 mode into every allocated cell of a rank's field: the interior, the
 * halo towards neighbours (so a first exchange is not needed) and exactly 0 on the global
 * boundary.
 *
 * Runs a CUDA kernel on a CUDA stream (device memory), a loop on the host stream (host memory).
 * Host and CUDA values agree to the rounding of their sin() (a few ulp).
 * @param stream stream to run on
 * @param layout the rank's field layout
 * @param global_interior interior cells of the whole grid
 * @param offset global index of this rank's first interior cell
 * @param field the rank's field (layout.allocated_cells() values)
 * @throw funnel::invalid_argument when the rank's box does not lie inside the global grid, or
 * `field` is null
 * @throw funnel::unsupported for a CUDA stream in a build without the CUDA kernels
 */
template <class T>
void heat3d_initialize(stream_view stream, const field_layout& layout,
                       const index3& global_interior, const index3& offset, T* field);

/**
 * @brief Error of a rank's interior against the exact solution (on host memory).
 * @param layout the rank's field layout
 * @param global_interior interior cells of the whole grid
 * @param offset global index of this rank's first interior cell
 * @param alpha diffusivity
 * @param t simulated time of `field`
 * @param host_field the rank's field in host memory
 * @return the rank's share; reduce across ranks as error_norms describes
 * @throw funnel::invalid_argument when the rank's box does not lie inside the global grid, or
 * `host_field` is null
 */
template <class T>
[[nodiscard]] error_norms heat3d_error(const field_layout& layout, const index3& global_interior,
                                       const index3& offset, double alpha, double t,
                                       const T* host_field);

/**
 * @brief The same where `stream` runs: a CUDA stream reads `field` in device memory (a block
 * per plane; the planes' norms are summed on the host in plane order, so a field gives the same
 * figures every run), the host stream reads it in host memory. Returns once the figures are in:
 * on a CUDA stream it waits for the stream, whose earlier work must not wait on other ranks.
 * @param stream where `field` is read
 * @param layout the rank's field layout
 * @param global_interior interior cells of the whole grid
 * @param offset global index of this rank's first interior cell
 * @param alpha diffusivity
 * @param t simulated time of `field`
 * @param field the rank's field, in the stream's memory
 * @return the rank's share; reduce across ranks as error_norms describes
 * @throw funnel::invalid_argument as the host overload
 */
template <class T>
[[nodiscard]] error_norms heat3d_error(stream_view stream, const field_layout& layout,
                                       const index3& global_interior, const index3& offset,
                                       double alpha, double t, const T* field);

}  // namespace funnel::kernels
