// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: small collectives the components share. on_all_or_none turns a problem one rank
// sees into an error on every rank; allgather_strings gives every rank each rank's string.
#pragma once

#include <mpi.h>

#include <exception>
#include <string>
#include <vector>

#include "funnel/error.hpp"

namespace funnel::detail {

/**
 * Runs `step` on every rank and throws on every rank when it threw on any, so that a problem
 * one rank sees (its own environment, its own device, its own options) never leaves the others
 * in a collective. The rank that failed throws its own error; the others say that another rank
 * failed, as an invalid_argument when that one was.
 */
template <class Step>
void on_all_or_none(MPI_Comm comm, const char* what, Step&& step) {
  std::exception_ptr failure;
  int kind = 0;  // 0: fine, 1: invalid_argument, 2: another error
  try {
    step();
  } catch (const invalid_argument&) {
    failure = std::current_exception();
    kind = 1;
  } catch (const error&) {
    failure = std::current_exception();
    kind = 2;
  }
  int worst = kind;
  FUNNEL_MPI_TRY(MPI_Allreduce(&kind, &worst, 1, MPI_INT, MPI_MAX, comm), what);
  if (failure) std::rethrow_exception(failure);
  const std::string message = std::string{what} + ": failed on another rank (see its message)";
  if (worst == 1) throw invalid_argument(message);
  if (worst == 2) throw error(message);
}

/**
 * @brief Every rank's `mine`, indexed by rank in `comm` (collective). Strings of any length;
 * they must not hold NUL characters.
 * @throw funnel::mpi_error naming `what` when an MPI call fails
 */
[[nodiscard]] std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& mine,
                                                         const char* what);

}  // namespace funnel::detail
