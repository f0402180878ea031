// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file machine.hpp
 * @brief The machine and date a funnel-bench run is recorded with.
 */
#pragma once

#include <string>

#include "funnel/runtime/backend_kind.hpp"
#include "json.hpp"

namespace funnel::bench {

/**
 * @brief Host, date, GPUs (name, UUID, SMs, memory), NVIDIA driver, CUDA runtime/driver
 * versions, MPI library and compiler. Callable before MPI_Init (MPI_Get_library_version is).
 * @param backend the backend the run uses
 * @return the description as a JSON object
 */
[[nodiscard]] json describe_machine(backend_kind backend);

/// @brief The current UTC time as ISO 8601, e.g. "2026-11-22T06:41:00Z".
[[nodiscard]] std::string utc_timestamp();

/**
 * @brief First line of a shell command's output ("" when it fails or prints nothing).
 * @param command run through /bin/sh
 */
[[nodiscard]] std::string first_line_of(const std::string& command);

}  // namespace funnel::bench
