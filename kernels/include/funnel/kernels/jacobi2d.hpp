// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file jacobi2d.hpp
 * @brief The 2D 5-point Jacobi relaxation of NVIDIA's multi-gpu-programming-models.
 *
 * Problem (as in that repository's single_gpu/jacobi.cu and mpi_overlap/jacobi.cpp): an
 * `nx` x `ny` float grid whose first and last columns hold the Dirichlet values
 * sin(2 pi iy / (ny - 1)) (computed in double with pi rounded to float, stored as float) and
 * whose first and last rows are periodic images of the last and first interior rows; the
 * interior starts at 0. funnel lays it out as a `field_layout` with interior
 * {nx - 2, ny - 2, 1} and halo 1 (jacobi2d_layout), so those columns and rows are the halo.
 *
 * Split of one Jacobi run:
 * - kernel (jacobi2d_step): a_new = 0.25 * (right + left + below + above), summed in that order
 *   in float, on the cells of `region`; optionally adds sum over region of (a_new - a)^2 to a
 *   float accumulator in the stream's memory space. It never writes halo cells.
 * - kernel helper (jacobi2d_initialize): zeros and the left/right boundary columns.
 * - app: the iteration loop and the swap of a / a_new; the periodic top/bottom rows (the halo
 *   exchange with a periodic y axis: a_new's row 0 gets row ny - 2, row ny - 1 gets row 1,
 *   which the reference kernel writes inline); zeroing the accumulator before a checked
 *   iteration; reducing it across ranks (MPI_SUM) and taking the square root; the `-niter`
 *   limit, the `-nccheck` cadence (norm computed when iter % nccheck == 0) and the stop when
 *   the norm falls to 1e-8 or below.
 */
#pragma once

#include <cstdint>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/kernels/implementation.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::kernels {

/**
 * @brief The field layout of the reference code's `nx` x `ny` grid (boundary included).
 * @param nx columns including the two boundary columns (-nx)
 * @param ny rows including the two periodic rows (-ny)
 * @return interior {nx - 2, ny - 2, 1} with a halo of one cell
 * @throw funnel::invalid_argument unless nx >= 3 and ny >= 3
 */
[[nodiscard]] field_layout jacobi2d_layout(std::int64_t nx, std::int64_t ny);

/**
 * @brief One Jacobi sweep over `region`, with the optional L2 norm contribution.
 *
 * The update of a cell is bitwise that of the reference code (and the same for every
 * implementation and region split). The norm contribution is summed in float per block and
 * added with one atomicAdd per block on CUDA (the kokkos implementation: per team of 256 work
 * items, with one atomic_add each), so its last bits depend on the order blocks finish; the
 * host sums rows in a fixed order (in double) and adds once.
 *
 * @param stream stream to run on; a CUDA stream for `cuda`, the host stream for `host`
 * @param impl implementation to use
 * @param layout the rank's field layout (2D: allocated z extent 1)
 * @param a current field
 * @param a_new next field; must not alias `a`
 * @param region cells to update (allocated coordinates, one cell away from the x and y edges,
 * z = [0, 1)); empty: no-op
 * @param l2_norm_accumulator null, or one float in the stream's memory space (device memory on a
 * CUDA stream) to which the sum of squared updates is added
 * @throw funnel::invalid_argument for a bad region, layout (not 2D) or pointers, or a stream
 * that does not suit `impl`
 * @throw funnel::unsupported when `impl` is not compiled into this build
 * @throw funnel::cuda_error when the launch fails
 */
void jacobi2d_step(stream_view stream, implementation impl, const field_layout& layout,
                   const float* a, float* a_new, const box& region, float* l2_norm_accumulator);

/**
 * @brief Initialises a rank's part of the reference problem in both arrays: 0 everywhere except
 * the global left and right boundary columns, which get sin(2 pi iy / (ny - 1)) on every row iy
 * (the periodic rows included, as the reference does).
 *
 * @param stream stream to run on (CUDA kernel on a CUDA stream, loop on the host stream)
 * @param layout the rank's field layout
 * @param global_interior interior cells of the whole grid: {nx - 2, ny - 2, 1}
 * @param offset global index of this rank's first interior cell ({0, 0, 0} on one rank)
 * @param a first array
 * @param a_new second array (may be null)
 * @throw funnel::invalid_argument when the rank's box does not lie inside the global grid, the
 * grid is not 2D, or `a` is null
 * @throw funnel::unsupported for a CUDA stream in a build without the CUDA kernels
 */
void jacobi2d_initialize(stream_view stream, const field_layout& layout,
                         const index3& global_interior, const index3& offset, float* a,
                         float* a_new);

/**
 * @brief The reference boundary value of global row `iy` (0 .. ny - 1, periodic rows included).
 * @param iy row index in the reference code's numbering
 * @param ny rows of the reference grid (-ny)
 * @return sin(2 pi iy / (ny - 1)) as the reference computes it (pi rounded to float, the sine
 * in double), stored as float
 */
[[nodiscard]] float jacobi2d_boundary_value(std::int64_t iy, std::int64_t ny) noexcept;

}  // namespace funnel::kernels
