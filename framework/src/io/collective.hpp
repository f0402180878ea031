// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: making every rank of a communicator agree on success or on one error, so that a
// failure on one rank (a file it could not write, a corrupted block it verified) surfaces on all
// ranks as the same exception instead of leaving the others waiting in the next collective.
#pragma once

#include <mpi.h>

#include <exception>
#include <string>
#include <utility>

namespace funnel::io::detail {

/// @brief This rank's number in `comm`.
int rank_of(MPI_Comm comm);
/// @brief Number of ranks in `comm`.
int size_of(MPI_Comm comm);

/// @brief Broadcasts a string from `root` (collective).
std::string broadcast(MPI_Comm comm, std::string text, int root = 0);

/**
 * @brief Collective: if any rank passes an exception, every rank throws the exception of the
 * lowest failing rank (same message and funnel exception type; errno kept for system_error).
 */
void agree(MPI_Comm comm, std::exception_ptr local);

/// @brief Collective: true on every rank when no rank passes an exception (nothing thrown).
bool none_failed(MPI_Comm comm, const std::exception_ptr& local);

/// @brief Runs `fn`; returns what it threw (null when it returned).
template <class F>
std::exception_ptr capture(F&& fn) noexcept {
  try {
    std::forward<F>(fn)();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

/// @brief Runs `fn` on every rank, then agree()s on the outcome.
template <class F>
void on_all(MPI_Comm comm, F&& fn) {
  agree(comm, capture(std::forward<F>(fn)));
}

/// @brief Runs `fn` on rank 0 only, then agree()s on the outcome.
template <class F>
void on_root(MPI_Comm comm, F&& fn) {
  on_all(comm, [&] {
    if (rank_of(comm) == 0) std::forward<F>(fn)();
  });
}

/// @brief MPI_Comm_dup that throws; MPI_COMM_NULL stays null.
MPI_Comm duplicate(MPI_Comm comm);
/// @brief MPI_Comm_free unless MPI is finalized or comm is null; never throws.
void release(MPI_Comm& comm) noexcept;

}  // namespace funnel::io::detail
