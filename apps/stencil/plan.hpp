// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file plan.hpp
 * @brief The plan rank 0 prints before the first step: who runs where, how the grid is split,
 * how much memory and which halo paths.
 */
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "funnel/decomposition/box.hpp"

namespace funnel::stencil {

/// @brief The facts of the plan printout (gathered collectively, printed by rank 0).
struct plan_info {
  std::string version;                   ///< funnel version
  std::string problem;                   ///< heat3d | jacobi2d
  std::string dtype;                     ///< float | double
  std::string mode;                      ///< resident | streamed
  std::string backend;                   ///< host | cuda
  std::string kernel;                    ///< cuda | host | kokkos
  index3 global_cells{1, 1, 1};          ///< interior cells of the grid
  std::int64_t first_step = 0;           ///< step the run starts at
  std::int64_t last_step = 0;            ///< step the run ends at
  int ranks = 1;                         ///< MPI ranks
  int nodes = 1;                         ///< nodes
  int gpus = 0;                          ///< distinct GPUs used (0 on the host backend)
  int ranks_per_gpu = 0;                 ///< most ranks sharing one GPU
  std::string mps;                       ///< "yes (confirmed)", "no", "n/a"
  std::string module_loading;            ///< CUDA_MODULE_LOADING on the CUDA backend ("": unset)
  std::vector<std::string> warnings;     ///< binding warnings (ranks sharing a GPU without MPS)
  std::array<int, 3> dims{1, 1, 1};      ///< ranks along x, y, z
  bool boxes_by_device = false;          ///< --placement device chose the boxes
  index3 smallest_box{0, 0, 0};          ///< smallest local interior
  index3 largest_box{0, 0, 0};           ///< largest local interior
  std::size_t bytes_per_rank = 0;        ///< largest device footprint of a rank's fields
  std::vector<std::string> rank0_paths;  ///< rank 0's halo path per neighbour
  std::int64_t steps_per_graph = 0;      ///< rank 0's steps per CUDA graph (0: none)
  int halo_depth = 1;                    ///< resident steps per exchange (--halo-depth)
  int steps_per_launch = 1;              ///< resident steps per kernel launch
  int row_align_bytes = 0;               ///< rows' interior aligned to this many bytes (0: none)
  std::int64_t auto_padded_row = 0;      ///< the row --row-align auto padded for (0: none)
  bool halo_pushed = false;              ///< rank 0's graphs push the exchange (one launch a step)
  bool halo_overlapped = false;          ///< the steps overlap the exchange with the inner update
  bool overlap_off_time_sliced = false;  ///< --halo-overlap auto chose off (time-sliced GPU)
  int mpi_links = 0;                     ///< neighbour links over MPI, all ranks
  int ipc_links = 0;                     ///< neighbour links over IPC on one GPU, all ranks
  int peer_links = 0;                    ///< neighbour links over IPC between GPUs, all ranks
  std::string halo_fallback;    ///< why some on-node neighbour goes over MPI (lowest such rank)
  int halo_fallback_ranks = 0;  ///< ranks with such a neighbour
  int local_links = 0;          ///< links of a rank to itself (a periodic axis of one rank)
  std::string restart_from;     ///< checkpoint path when restarting
  std::string pipeline;   ///< streamed mode: rank 0's chunks, streams, k and why ("" resident)
  std::string snapshots;  ///< how snapshots are written ("" without)
};

/**
 * @brief The plan as printed (several lines, ending with a newline).
 * @param plan the facts
 */
[[nodiscard]] std::string format_plan(const plan_info& plan);

}  // namespace funnel::stencil
