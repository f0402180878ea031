// funnel-stencil's main: parse, run, and on any error print one line and end every rank.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "options.hpp"
#include "run.hpp"

namespace {

using funnel::stencil::exit_failure;
using funnel::stencil::exit_usage;

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
    message = e.what();
  }
  int first_bad = message.empty() ? INT32_MAX : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first_bad == rank) {
    std::fprintf(stderr, "funnel-stencil: %s\n", message.c_str());
    std::fflush(stderr);
  }
  return first_bad == INT32_MAX;
}

}  // namespace

int main(int argc, char** argv) {
  // FUNNELED: snapshot blocks are written on a thread that makes no MPI call.
  int thread_level = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &thread_level);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  funnel::stencil::run_config config;
  if (!prepare_collectively(std::vector<std::string>(argv + 1, argv + argc), config)) {
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
    MPI_Finalize();
    return 0;
  }
  int status = exit_failure;
  try {
    status = funnel::stencil::run(config, MPI_COMM_WORLD);
  } catch (const funnel::stencil::reported_usage_error&) {
    // Printed once already, and thrown on every rank: all of them can finish cleanly.
    MPI_Finalize();
    return exit_usage;
  } catch (const std::exception& e) {
    // Errors after parsing may hit one rank only (a GPU fault, a full disk): abort the job so
    // that no rank hangs in a collective the failed one never reaches.
    std::fprintf(stderr, "funnel-stencil: rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    const int code =
        dynamic_cast<const funnel::invalid_argument*>(&e) != nullptr ? exit_usage : exit_failure;
    MPI_Abort(MPI_COMM_WORLD, code);
    return code;
  }
  MPI_Finalize();
  return status;
}
