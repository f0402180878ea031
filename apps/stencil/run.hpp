// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file run.hpp
 * @brief One funnel-stencil run from resolved options to the summary.
 */
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "exit_codes.hpp"
#include "funnel/error.hpp"
#include "funnel/io/termination_request.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "options.hpp"

namespace funnel::stencil {

/// @brief The options with every default and choice resolved.
struct run_config {
  options opts;                               ///< resolved options
  backend_kind backend = backend_kind::host;  ///< backend the field lives on
  std::string kernel;                         ///< kernel implementation name
};

/**
 * @brief Parses the arguments and resolves backend, defaults and kernel (no MPI calls, the
 * same result on every rank), so every usage error is found before any collective.
 * @param args the arguments after the program name
 * @throw funnel::invalid_argument / funnel::unsupported with one line for the user
 */
[[nodiscard]] run_config prepare(const std::vector<std::string>& args);

/**
 * @brief A usage error found during run() on some ranks, already printed once (by the lowest
 * rank that found it) and thrown on every rank: main exits cleanly with the usage status.
 */
class reported_usage_error : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
};

/**
 * @brief Prints "funnel-stencil: rank R: <what>" and ends the whole job at once (MPI_Abort,
 * exit status 1), without unwinding.
 * @param rank this rank in MPI_COMM_WORLD
 * @param e the error
 */
[[noreturn]] void abort_job(int rank, const std::exception& e);

/**
 * @brief Where the resident step loop's chunk of `chunk` steps from `step` ends: on a whole
 * number of `granule` steps (the steps of one CUDA graph) counted from `first`, the step the
 * loop started at, so that a chunk after a stop off that grid (a check or an output every 10
 * steps) ends on it again; `step + chunk` when no such end lies beyond `step`.
 * @param step the current step
 * @param chunk the agreed chunk (>= 1)
 * @param first the step the loop started at (<= step)
 * @param granule steps per graph, or 1 without graphs
 */
[[nodiscard]] std::int64_t chunk_end(std::int64_t step, std::int64_t chunk, std::int64_t first,
                                     std::int64_t granule);

/**
 * @brief Runs the simulation the configuration describes (collective over `comm`).
 * @param config the prepared configuration
 * @param comm all ranks of the run
 * @param termination the SIGTERM/SIGUSR1 flag: set before the first step, the run stops there
 * with nothing to save; set later, after the current step with a checkpoint
 * @return the process exit status (exit_success, or exit_requeue after a signal)
 * @throw reported_usage_error on every rank when an option does not fit the job (the split, a
 * rank's box in streamed mode, an output file, Kokkos' options): printed once already
 * @throw funnel::error (any subtype) on failure, on one rank or on all of them; except a
 * funnel::stall_error during the steps, which ends the job at once (abort_job), before the
 * field's CUDA resources are destroyed
 */
[[nodiscard]] int run(const run_config& config, MPI_Comm comm,
                      const io::termination_request& termination);

}  // namespace funnel::stencil
