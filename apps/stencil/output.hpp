// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file output.hpp
 * @brief The app's one connection to funnel::io: snapshots, checkpoints, restart and the
 * SIGTERM/SIGUSR1 checkpoint-and-exit.
 */
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "options.hpp"
#include "solver.hpp"

namespace funnel::stencil {

/// @brief A validated checkpoint to restart from (opened before anything is allocated).
class restart_source {
 public:
  /**
   * @brief Opens and validates the checkpoint named by --restart against the run (collective).
   * @param comm all ranks
   * @param opts resolved options (restart set)
   * @param global_cells the run's global interior
   * @param field field name of the problem
   * @throw funnel::error / funnel::invalid_argument naming the file and what is wrong
   * @throw funnel::unsupported without HDF5
   */
  restart_source(MPI_Comm comm, const options& opts, const index3& global_cells,
                 const std::string& field);
  ~restart_source();
  restart_source(const restart_source&) = delete;
  restart_source& operator=(const restart_source&) = delete;

  /// @brief Step stored in the checkpoint.
  [[nodiscard]] std::int64_t step() const;
  /// @brief Path of the checkpoint file.
  [[nodiscard]] std::string path() const;
  /// @brief The run (checkpoint series) that wrote it: the restarted run continues it.
  [[nodiscard]] std::string run_id() const;
  /**
   * @brief Loads the checkpoint into the solver (collective; any decomposition).
   * @param s the solver
   * @param decomposition the run's split
   */
  void restore(solver& s, const cartesian_decomposition& decomposition) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/**
 * @brief Snapshots every --output-every steps, checkpoints every --checkpoint-every steps, and
 * a checkpoint when the job is told to stop.
 */
class run_output {
 public:
  /**
   * @param comm all ranks
   * @param opts resolved options
   * @param configuration the run configuration stored in checkpoints
   * @param s the solver (spacing, field name)
   * @param backend the run's backend (snapshot downloads land in pinned memory of it)
   * @param field_bytes bytes of the rank's field in its allocated layout (the pinned buffer
   * snapshots are written from is allocated here, before the step loop)
   * @param run_id the checkpoint series this run continues (the restart's), "" for a new one
   * @throw funnel::unsupported when output is asked for without HDF5
   * @throw funnel::error when the checkpoint directory is locked by another run, or holds
   * another run's checkpoints (unless --checkpoint-start-over)
   */
  run_output(MPI_Comm comm, const options& opts, std::string configuration, const solver& s,
             backend_kind backend, std::size_t field_bytes, std::string run_id = {});
  ~run_output();
  run_output(const run_output&) = delete;
  run_output& operator=(const run_output&) = delete;

  /**
   * @brief Writes what is due after the step the solver just completed (collective).
   *
   * A snapshot (--output-overlap on) is only started: the field is downloaded into a pinned
   * buffer of its own and the rank's block is written by a background thread while the next
   * steps run; it is completed by the next snapshot, a checkpoint, save_for_stop() or
   * finish(). Checkpoints are written before this returns.
   * @param s the solver
   * @param decomposition the run's split
   * @return seconds this call took; exactly 0 when nothing was due
   */
  double after_step(solver& s, const cartesian_decomposition& decomposition);

  /**
   * @brief Completes the snapshot still being written, if any (collective); call after the
   * step loop.
   * @return seconds this call took
   */
  double finish();

  /// @brief Seconds this rank spent writing snapshot blocks on the background thread.
  [[nodiscard]] double background_seconds() const noexcept;

  /// @brief How snapshots are written, for the plan ("" without snapshots).
  [[nodiscard]] std::string describe() const;

  /**
   * @brief Collective, once the ranks agreed to stop on SIGTERM/SIGUSR1: makes sure a checkpoint
   * of the current step is written (without HDF5 there is nothing to save).
   * @param s the solver
   * @param decomposition the run's split
   */
  void save_for_stop(solver& s, const cartesian_decomposition& decomposition);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace funnel::stencil
