// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file heat3d_params.hpp
 * @brief The coefficient of one explicit Euler step of the heat equation.
 */
#pragma once

namespace funnel::kernels {

/**
 * @brief Parameters of `heat3d_step`.
 *
 * The step is `out = in + c * (sum of the neighbours - n * in)` with `c = alpha * dt / h^2` and
 * n the number of neighbours (6 in 3D). It is stable for `c <= 1 / n`.
 * @tparam T float or double
 */
template <class T>
struct heat3d_params {
  T alpha_dt_over_h2;  ///< c = alpha * dt / h^2 (same grid spacing h on every axis)
};

}  // namespace funnel::kernels
