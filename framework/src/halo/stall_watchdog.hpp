// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: host waits on GPU work that may depend on other ranks (GPU-ordered halos), bounded
// by a stall timeout. When nothing completes for that long, the watchdog names the neighbours
// and what became of their processes (exited, stopped, running) and throws funnel::stall_error,
// so one stopped rank ends the job with a clear line instead of hanging it (and, on a GPU, the
// waiting streams of every other rank).
#pragma once

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "funnel/runtime/event.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::detail {

/// A neighbour this rank's GPU work may wait on.
struct peer_process {
  int rank = 0;  ///< its rank in the decomposition's communicator
  int pid = 0;   ///< its process id (on this node)
};

/**
 * @brief The next sleep of a wait that polls: twice the last one, from 2 us, up to 1/32 of the
 * time waited so far but at least 16 us and at most 200 us. A wait for a step of tens of
 * microseconds notices its end within 16 us (the host then has the next step queued before the
 * GPU runs dry); a wait of milliseconds wakes a few thousand times a second, and is late by at
 * most 1/32 of it.
 * @param previous the sleep before (0 for the first)
 * @param waited how long the wait has lasted
 */
[[nodiscard]] std::chrono::microseconds poll_pause(
    std::chrono::microseconds previous, std::chrono::steady_clock::duration waited) noexcept;

class stall_watchdog {
 public:
  stall_watchdog() = default;
  /// @param timeout how long a wait may see no completion
  /// @param peers the neighbours whose work this rank's streams wait on
  stall_watchdog(std::chrono::milliseconds timeout, std::vector<peer_process> peers)
      : timeout_(timeout), peers_(std::move(peers)) {}

  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  /// @brief Returns once `e` has completed; throws stall_error after the timeout.
  void wait(const event& e) const;
  /// @brief Returns once the work submitted to `stream` has completed; the same timeout.
  void wait(stream_view stream) const;
  /// @brief Completes a non-blocking MPI request (a collective other ranks must join); the same
  /// timeout. It tests without sleeping (yielding the core) for its first `mpi_spin`, as
  /// MPI_Wait would: a collective advances only inside MPI calls, round by round.
  void wait(MPI_Request& request) const;

  /// How long wait(MPI_Request&) tests before it polls with sleeps (docs/halo.md, "The stall
  /// watchdog").
  static constexpr std::chrono::microseconds mpi_spin{1000};
  /// @brief Throws stall_error: "no progress for T s <what>; neighbour ... has exited ...".
  [[noreturn]] void stalled(const std::string& what) const;
  /**
   * @brief Also watch a word the GPU writes when one of its own signal waits gave up (kernel
   * signals): every wait checks it once the work it waits for is done (a wait that gave up
   * lets the work end), and throws stall_error naming the neighbour across that face.
   * @param flag face + 1 of the wait that gave up, 0 while none did (pinned host memory)
   * @param neighbour_of_face the neighbour's rank across each face (-1: none)
   */
  void watch_device(const volatile std::uint32_t* flag, std::array<int, 6> neighbour_of_face);
  /// @brief Throws stall_error when the watched device word says a wait gave up.
  void check_device() const;

 private:
  template <class Done>
  void poll(const Done& done, const char* what,
            std::chrono::microseconds spin = std::chrono::microseconds(0)) const;

  std::chrono::milliseconds timeout_{60000};
  std::vector<peer_process> peers_;
  const volatile std::uint32_t* device_flag_ = nullptr;
  std::array<int, 6> neighbour_of_face_{-1, -1, -1, -1, -1, -1};
};

}  // namespace funnel::detail
