// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file binding_report.hpp
 * @brief Where one rank runs: node, GPU, how many ranks share it, and whether MPS serves them.
 */
#pragma once

#include <string>
#include <vector>

#include "funnel/runtime/backend_kind.hpp"

namespace funnel {

/**
 * @brief One rank's binding, as funnel::binding::detect() found it.
 *
 * Ranks sharing a GPU are counted by device UUID over the node's ranks, so the count is right
 * under any launcher and any CUDA_VISIBLE_DEVICES numbering.
 */
struct binding_report {
  /// @brief Host name (MPI_Get_processor_name).
  std::string host;
  /// @brief Rank in the communicator given to detect().
  int rank = 0;
  /// @brief Size of that communicator.
  int size = 1;
  /// @brief Rank among the ranks of this node (MPI_COMM_TYPE_SHARED).
  int local_rank = 0;
  /// @brief Ranks on this node.
  int local_size = 1;
  /// @brief Nodes the communicator spans.
  int node_count = 1;
  /// @brief The backend the rank uses.
  backend_kind backend = backend_kind::host;
  /// @brief True when the app was started through funnel-run (FUNNEL_LAUNCHER).
  bool from_funnel_run = false;
  /// @brief CUDA ordinal made current for this rank; -1 on the host backend.
  int device = -1;
  /// @brief UUID of that GPU ("GPU-..."); empty on the host backend.
  std::string gpu_uuid;
  /// @brief Ranks of this node on the same GPU, this one included; 0 on the host backend.
  int ranks_on_gpu = 0;
  /// @brief The most ranks on any one GPU of this node; 0 on the host backend.
  int max_ranks_on_gpu = 0;
  /// @brief True when an MPS daemon serves this rank (its control pipe exists and funnel-run
  /// did not turn MPS off).
  bool mps_serving = false;
  /// @brief The MPS pipe directory the rank's CUDA runtime uses (empty when MPS is not serving).
  std::string mps_pipe;
  /// @brief Problems found (ranks time-sliced on a GPU, funnel-run's decision not what MPI or
  /// CUDA see); the same sharing warning on every rank of the communicator.
  std::vector<std::string> warnings;

  /**
   * @brief One line describing the binding, e.g.
   * "host=n1 rank=3/8 local_rank=1/4 nodes=2 backend=cuda device=0 uuid=GPU-... ranks_on_gpu=4
   * mps=serving pipe=/tmp/... launcher=funnel-run".
   * @return the line, without a newline
   */
  [[nodiscard]] std::string to_string() const;
};

}  // namespace funnel
