// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "plan.hpp"

#include <cstdio>
#include <sstream>

namespace funnel::stencil {
namespace {

std::string cells(const index3& n) {
  return std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]);
}

std::string mebibytes(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

}  // namespace

std::string format_plan(const plan_info& p) {
  std::ostringstream out;
  out << "funnel-stencil " << p.version << ": " << p.problem << " " << p.dtype << ", "
      << cells(p.global_cells) << " cells, steps " << p.first_step << " -> " << p.last_step << ", "
      << p.mode << " mode\n";
  if (!p.restart_from.empty()) out << "  restart from " << p.restart_from << "\n";
  if (!p.snapshots.empty()) out << "  snapshots " << p.snapshots << "\n";
  out << "  ranks " << p.ranks << " on " << p.nodes << " node(s); backend " << p.backend
      << ", kernel " << p.kernel << "; GPUs " << p.gpus;
  if (p.gpus > 0) out << ", ranks per GPU " << p.ranks_per_gpu << ", MPS " << p.mps;
  out << "\n";
  if (p.backend == "cuda") {
    out << "  CUDA kernels: "
        << (p.module_loading == "EAGER" ? "loaded at start (CUDA_MODULE_LOADING=EAGER)"
            : p.module_loading.empty()
                ? "CUDA's default loading (CUDA_MODULE_LOADING could not be set)"
                : "CUDA_MODULE_LOADING=" + p.module_loading + " (from the environment, kept)")
        << "\n";
  }
  for (const auto& warning : p.warnings) out << "  WARNING: " << warning << "\n";
  out << "  decomposition " << p.dims[0] << "x" << p.dims[1] << "x" << p.dims[2] << ", local boxes "
      << cells(p.smallest_box);
  if (p.smallest_box != p.largest_box) out << " .. " << cells(p.largest_box);
  out << ", " << mebibytes(p.bytes_per_rank) << " per rank";
  if (p.boxes_by_device) out << ", boxes placed by GPU";
  if (p.row_align_bytes > 0) out << ", rows padded: interior on " << p.row_align_bytes << " B";
  if (p.auto_padded_row > 0) {
    out << " (--row-align auto: rows of " << p.auto_padded_row << " cells)";
  }
  out << "\n";
  out << "  halo: " << p.mpi_links << " MPI, " << p.ipc_links << " IPC, " << p.peer_links
      << " peer (IPC between GPUs) and " << p.local_links << " local neighbour links";
  if (!p.rank0_paths.empty()) {
    out << "; rank 0:";
    for (const auto& path : p.rank0_paths) out << " [" << path << "]";
  }
  if (p.halo_depth > 1)
    out << "; " << p.halo_depth << " cells deep: an exchange every " << p.halo_depth << " steps";
  out << "\n";
  if (p.halo_fallback_ranks > 0) {
    out << "  halo fallback on " << p.halo_fallback_ranks
        << " rank(s), MPI instead of IPC: " << p.halo_fallback << "\n";
  }
  if (p.overlap_off_time_sliced) {
    out << "  steps: exchange, then update every cell (--halo-overlap auto: ranks share a GPU "
           "time-sliced)\n";
  }
  if (p.steps_per_launch == 2) {
    out << "  steps: two per kernel launch after each exchange"
        << (p.steps_per_graph == 0 && p.halo_overlapped
                ? " (the inner cells update while the faces travel)"
                : "")
        << "\n";
  }
  if (p.steps_per_graph > 0) {
    out << "  steps: " << p.steps_per_graph << " per CUDA graph on rank 0 ("
        << (p.halo_pushed             ? "one kernel a step: it updates every cell and pushes its "
                                        "faces into the neighbours' ghosts"
            : p.halo_overlapped       ? "the inner cells update while the faces travel"
            : p.steps_per_launch == 2 ? "exchange, then two steps of every cell"
                                      : "exchange, then update every cell")
        << ")\n";
  }
  if (!p.pipeline.empty()) out << "  pipeline (rank 0): " << p.pipeline << "\n";
  return out.str();
}

}  // namespace funnel::stencil
