// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel-stencil's main: the stop signals first, then parse, run, and on any error one line and
// an end of every rank (see docs/stencil.md, "Exit status").
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.hpp"
#include "exit_codes.hpp"
#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/io/termination_request.hpp"
#include "module_loading.hpp"
#include "options.hpp"
#include "run.hpp"

namespace {

using funnel::stencil::exit_failure;
using funnel::stencil::exit_usage;

/// How long a failed rank waits for the others to fail too before it aborts the job alone.
constexpr std::chrono::seconds agreement_wait{5};

void print_error(const std::string& message) {
  std::fprintf(stderr, "funnel-stencil: %s\n", funnel::app::printable(message).c_str());
  std::fflush(stderr);
}

/// Options are parsed and resolved on every rank; a bad value is reported once (by the lowest rank
/// that saw it) and every rank exits cleanly with the usage status, so no rank waits in a
/// collective.
bool prepare_collectively(const std::vector<std::string>& args,
                          funnel::stencil::run_config& config) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string message;
  try {
    config = funnel::stencil::prepare(args);
  } catch (const std::exception& e) {
    message = funnel::user_message(e);
  }
  int first_bad = message.empty() ? INT32_MAX : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first_bad == rank) print_error(message);
  return first_bad == INT32_MAX;
}

/// The exit status of an error: usage for a bad value or request, failure otherwise.
int status_of(const std::exception& e) {
  const bool usage = dynamic_cast<const funnel::invalid_argument*>(&e) != nullptr ||
                     dynamic_cast<const funnel::unsupported*>(&e) != nullptr;
  return usage ? exit_usage : exit_failure;
}

/**
 * Ends a rank whose run threw. When every rank failed (an error the job agreed on, or the same
 * one found everywhere), they learn it on `errors` (a communicator no run collective uses) and
 * the lowest rank prints the one line - its own message, and when the others' differ (an
 * allocation of another size, say) it says so instead of printing one line per rank - and all
 * finish cleanly. A rank that fails alone (the others are computing, or waiting for it in a
 * collective) prints its line and aborts the job, so nobody hangs.
 * @return the exit status (when it does not abort)
 */
int end_with_error(MPI_Comm errors, const std::string& message, int status) {
  int rank = 0;
  MPI_Comm_rank(errors, &rank);
  const auto hash = static_cast<long long>(std::hash<std::string>{}(message) >> 1);
  // MIN over {rank, hash, -hash, -status}: the lowest failed rank, whether all messages hash
  // alike, and the highest status.
  long long mine[4] = {rank, hash, -hash, -status};
  long long all[4] = {0, 0, 0, 0};
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Iallreduce(mine, all, 4, MPI_LONG_LONG, MPI_MIN, errors, &request);
  int done = 0;
  const auto deadline = std::chrono::steady_clock::now() + agreement_wait;
  while (MPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (done == 0) {
    print_error("rank " + std::to_string(rank) + ": " + message);
    MPI_Abort(MPI_COMM_WORLD, status);
    return status;
  }
  const bool alike = all[1] == -all[2];
  if (rank == all[0]) {
    int size = 1;
    MPI_Comm_size(errors, &size);
    print_error(alike
                    ? message
                    : "rank " + std::to_string(rank) + ": " + message + " (all " +
                          std::to_string(size) + " ranks failed, the others with other messages)");
  }
  MPI_Comm_free(&errors);
  MPI_Finalize();
  return static_cast<int>(-all[3]);
}

}  // namespace

int main(int argc, char** argv) {
  // SIGTERM/SIGUSR1 are a request to stop from the first moment on (funnel-run forwards them
  // as soon as the job starts), never a kill: the handlers come before anything else.
  std::optional<funnel::io::termination_request> termination;
  try {
    termination.emplace();
  } catch (const std::exception& e) {
    print_error(funnel::user_message(e));
    return exit_failure;
  }
  funnel::stencil::settle_module_loading();  // before MPI_Init: an MPI library may start CUDA
  // FUNNELED: snapshot blocks are written on a thread that makes no MPI call.
  int thread_level = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &thread_level);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Failures are agreed on here: a rank that failed may have left the run's communicators in
  // the middle of a collective.
  MPI_Comm errors = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &errors);
  funnel::stencil::run_config config;
  if (!prepare_collectively(std::vector<std::string>(argv + 1, argv + argc), config)) {
    MPI_Comm_free(&errors);
    MPI_Finalize();
    return exit_usage;
  }
  const auto& opts = config.opts;
  if (opts.help || opts.version) {
    if (rank == 0) {
      std::fputs(
          opts.help ? funnel::stencil::usage().c_str() : "funnel-stencil " FUNNEL_VERSION "\n",
          stdout);
    }
    MPI_Comm_free(&errors);
    MPI_Finalize();
    return 0;
  }
  int status = exit_failure;
  try {
    status = funnel::stencil::run(config, MPI_COMM_WORLD, *termination);
  } catch (const funnel::stencil::reported_usage_error&) {
    // Printed once already, and thrown on every rank: all of them can finish cleanly.
    status = exit_usage;
  } catch (const std::exception& e) {
    return end_with_error(errors, funnel::user_message(e), status_of(e));
  }
  MPI_Comm_free(&errors);
  MPI_Finalize();
  return status;
}
