/**
 * @file gpu_binding.hpp
 * @brief Which GPU each rank uses and who shares it: the app's one place for the binding
 * decision (until funnel::binding lands, a minimal in-process version of it).
 */
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "funnel/runtime/backend_kind.hpp"

namespace funnel::stencil {

/// @brief The binding facts the plan prints.
struct gpu_binding {
  int gpus = 0;                       ///< distinct GPUs used by the job
  int ranks_per_gpu = 0;              ///< most ranks on one GPU
  std::string mps = "n/a";            ///< "yes (funnel-run)", "no", "unknown"
  std::vector<std::string> warnings;  ///< e.g. ranks sharing a GPU without MPS
};

/**
 * @brief On the cuda backend, makes this rank's GPU current (funnel-run's choice when started
 * through it, else node-local rank modulo the visible GPUs) and gathers who shares which GPU
 * (by UUID). Collective. On the host backend: no GPU.
 * @param comm all ranks
 * @param backend the run's backend
 */
[[nodiscard]] gpu_binding bind_gpu(MPI_Comm comm, backend_kind backend);

}  // namespace funnel::stencil
