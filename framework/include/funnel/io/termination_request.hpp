// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file termination_request.hpp
 * @brief SIGTERM/SIGUSR1 turned into a flag that a time-stepping loop polls collectively.
 */
#pragma once

#include <mpi.h>

namespace funnel::io {

/**
 * @brief Catches the "your job is about to end" signals so the app can checkpoint and exit.
 *
 * Batch systems warn a job before killing it: Slurm's `#SBATCH --signal=B:USR1@120` sends
 * SIGUSR1 (funnel-run forwards it to the ranks), scancel and time limits send SIGTERM. While an
 * object of this class exists, those two signals only set a flag (async-signal-safe); the app
 * finishes its current step, calls agreed() (collective, so all ranks stop at the same step),
 * writes a checkpoint and exits with requeue_exit_code, which a job script tests to requeue:
 *
 * @code
 *   srun funnel-run -- ./funnel-stencil --checkpoint-dir ckpt --restart ckpt ...
 *   if [ $? -eq 75 ]; then scontrol requeue "$SLURM_JOB_ID"; fi
 * @endcode
 *
 * Only one object may exist at a time (signal dispositions are process-wide); the previous
 * handlers are restored on destruction.
 */
class termination_request {
 public:
  /// @brief Exit status meaning "checkpointed on request, requeue me" (EX_TEMPFAIL, sysexits.h).
  static constexpr int requeue_exit_code = 75;

  /**
   * @brief Installs the handlers for SIGTERM and SIGUSR1.
   * @throw funnel::invalid_argument when another termination_request exists
   * @throw funnel::system_error when sigaction fails
   */
  termination_request();
  /// @brief Restores the previous handlers; a signal caught so far stays visible via requested().
  ~termination_request();
  termination_request(const termination_request&) = delete;
  termination_request& operator=(const termination_request&) = delete;
  termination_request(termination_request&&) = delete;
  termination_request& operator=(termination_request&&) = delete;

  /**
   * @brief Whether this process was asked to stop (local, never blocks).
   * @return true once SIGTERM or SIGUSR1 arrived, until reset(); use agreed() to stop every
   * rank at the same step
   */
  [[nodiscard]] bool requested() const noexcept;
  /**
   * @brief Which signal asked, for the app's log line.
   * @return the first signal number caught (SIGTERM or SIGUSR1); 0 if none
   */
  [[nodiscard]] int signal_number() const noexcept;
  /**
   * @brief Collective: true on every rank of `comm` when any rank caught a signal.
   * @param comm the ranks that must stop together
   * @return the agreed decision
   * @throw funnel::mpi_error when the reduction fails
   */
  [[nodiscard]] bool agreed(MPI_Comm comm) const;
  /// @brief Forgets a caught signal (e.g. in tests).
  void reset() noexcept;
};

}  // namespace funnel::io
