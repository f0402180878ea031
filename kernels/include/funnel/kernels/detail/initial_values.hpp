// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file initial_values.hpp
 * @brief Initial and boundary values of the two problems, shared by the host and CUDA fills.
 *
 * Internal (funnel::kernels::detail): installed with the public headers, but not part of
 * funnel's API.
 */
#pragma once

#include <cmath>
#include <cstdint>

#include "funnel/kernels/detail/stencil_arithmetic.hpp"

namespace funnel::kernels::detail {

/// @brief pi rounded to float, as the Jacobi reference code holds it (`real PI` with real=float).
constexpr float jacobi_pi = 3.14159265358979323846F;

/**
 * @brief The heat mode's factor along one axis: sin(pi x / L) with x = (g + 1) h, L = (n + 1) h.
 * @param g global interior index of the cell along the axis
 * @param n interior cells of the whole grid along the axis
 * @return sin(pi * (g + 1) / (n + 1)); exactly 0 outside [0, n), and 1 when the axis has a
 * single cell
 */
FUNNEL_KERNELS_HD inline double heat_mode_factor(std::int64_t g, std::int64_t n) {
  if (n <= 1) return 1.0;
  if (g < 0 || g >= n) return 0.0;
  return sin(3.14159265358979323846 * static_cast<double>(g + 1) / static_cast<double>(n + 1));
}

/**
 * @brief The heat mode at a global cell, at t = 0.
 * @param gx global interior index along x
 * @param gy global interior index along y
 * @param gz global interior index along z
 * @param nx interior cells of the whole grid along x
 * @param ny along y
 * @param nz along z
 * @return the product of heat_mode_factor() along the three axes
 */
FUNNEL_KERNELS_HD inline double heat_mode_value(std::int64_t gx, std::int64_t gy, std::int64_t gz,
                                                std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  return heat_mode_factor(gx, nx) * heat_mode_factor(gy, ny) * heat_mode_factor(gz, nz);
}

/**
 * @brief The Jacobi reference's left/right boundary value of one row.
 * @param iy the row, 0 .. ny - 1
 * @param ny rows of the reference grid
 * @return sin(2 pi iy / (ny - 1)) evaluated in double with pi rounded to float, in the
 * reference's operation order, stored as float
 */
FUNNEL_KERNELS_HD inline float jacobi_boundary(std::int64_t iy, std::int64_t ny) {
  return static_cast<float>(sin(2.0 * static_cast<double>(jacobi_pi) * static_cast<double>(iy) /
                                static_cast<double>(ny - 1)));
}

}  // namespace funnel::kernels::detail
