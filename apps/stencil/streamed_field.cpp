// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "streamed_field.hpp"

#include <algorithm>

#include "funnel/config.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel::stencil {

void pass_totals::add(const pass_statistics& s) noexcept {
  ++passes;
  pass_seconds += s.pass_seconds;
  h2d_seconds += s.h2d_seconds;
  d2h_seconds += s.d2h_seconds;
  kernel_seconds += s.kernel_seconds;
  h2d_bytes += static_cast<double>(s.h2d_bytes);
  d2h_bytes += static_cast<double>(s.d2h_bytes);
  staged = staged || s.staged_input || s.staged_output;
}

pipeline_report reduce_pipeline_report(const pass_totals& totals, const std::string& choice,
                                       MPI_Comm comm) {
  const double bound = std::max({totals.h2d_seconds, totals.d2h_seconds, totals.kernel_seconds});
  const double efficiency = totals.pass_seconds > 0.0 ? bound / totals.pass_seconds : 0.0;
  double slowest[4] = {totals.pass_seconds, totals.h2d_seconds, totals.d2h_seconds,
                       totals.kernel_seconds};
  double least_efficient = efficiency;
  double bandwidth[2] = {totals.h2d_seconds > 0.0 ? totals.h2d_bytes / totals.h2d_seconds : 0.0,
                         totals.d2h_seconds > 0.0 ? totals.d2h_bytes / totals.d2h_seconds : 0.0};
  int ranks = 1;
  FUNNEL_MPI_TRY(MPI_Comm_size(comm, &ranks), "pipeline report");
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, slowest, 4, MPI_DOUBLE, MPI_MAX, comm),
                 "pipeline report");
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &least_efficient, 1, MPI_DOUBLE, MPI_MIN, comm),
                 "pipeline report");
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, bandwidth, 2, MPI_DOUBLE, MPI_SUM, comm),
                 "pipeline report");
  pipeline_report r;
  r.efficiency = least_efficient;
  r.pass_seconds = slowest[0];
  r.h2d_seconds = slowest[1];
  r.d2h_seconds = slowest[2];
  r.kernel_seconds = slowest[3];
  r.h2d_bytes_per_s = bandwidth[0] / ranks;
  r.d2h_bytes_per_s = bandwidth[1] / ranks;
  r.passes = totals.passes;
  r.choice = choice;
  return r;
}

std::size_t default_device_budget(backend_kind backend, int ranks_per_device,
                                  std::size_t field_bytes) {
#if FUNNEL_HAS_CUDA
  if (backend == backend_kind::cuda) {
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    FUNNEL_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes), "streamed mode device budget");
    return free_bytes / 2 / static_cast<std::size_t>(std::max(ranks_per_device, 1));
  }
#else
  (void)backend;
  (void)ranks_per_device;
#endif
  // Room for 2·S whole fields: the overlap targets alone decide the chunk count.
  return std::max<std::size_t>(field_bytes, 1) * 64;
}

}  // namespace funnel::stencil
