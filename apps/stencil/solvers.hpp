// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file solvers.hpp
 * @brief Factories of the per-problem solvers (internal to the app).
 */
#pragma once

#include <memory>

#include "solver.hpp"

namespace funnel::stencil {

/// @brief heat3d, resident or streamed (float or double from setup.opts->dtype).
[[nodiscard]] std::unique_ptr<solver> make_heat3d_solver(const run_setup& setup);
/// @brief jacobi2d in resident mode (float).
[[nodiscard]] std::unique_ptr<solver> make_jacobi2d_solver(const run_setup& setup);

}  // namespace funnel::stencil
