// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file exit_codes.hpp
 * @brief funnel-stencil's exit statuses (listed in --help and docs/stencil.md).
 */
#pragma once

#include "funnel/io/termination_request.hpp"

namespace funnel::stencil {

/// @brief The run completed its steps (jacobi2d: or converged).
constexpr int exit_success = 0;
/// @brief A runtime error: I/O, MPI, CUDA, a damaged checkpoint, a full disk, ...
constexpr int exit_failure = 1;
/// @brief A usage error: a bad option, value, combination or --config file.
constexpr int exit_usage = 2;
/// @brief Stopped by SIGTERM/SIGUSR1 with a checkpoint written (or nothing to save yet): requeue.
constexpr int exit_requeue = io::termination_request::requeue_exit_code;

}  // namespace funnel::stencil
