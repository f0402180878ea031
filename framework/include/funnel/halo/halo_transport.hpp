// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file halo_transport.hpp
 * @brief The path a halo exchange uses to one neighbour.
 */
#pragma once

#include <string>

namespace funnel {

/// @brief How ghost cells travel between this rank and one neighbour.
enum class halo_transport {
  /// the neighbour is this rank (a periodic axis of one rank): a box copy inside the field
  local,
  mpi_host,        ///< MPI on host buffers (host backend)
  mpi_cuda_aware,  ///< MPI on device buffers (CUDA-aware MPI)
  mpi_staged,      ///< device buffers staged through pinned host buffers, then MPI
  /// this rank writes its boundary straight into the neighbour's ghosts (CUDA IPC, or the memfd
  /// host pool on the host backend), ordered by a host handshake (MPI messages) per exchange
  ipc,
  /// the same copies, ordered by signal words that the streams write and wait on, so the host
  /// only enqueues (neighbours on this node and GPU, with a bound field cycle)
  ipc_ordered,
  /// `ipc_ordered` to a neighbour on another GPU of the node, through peer access (the
  /// neighbour's pool mapped for this GPU, faces and signal words over NVLink or PCIe)
  peer_ordered
};

/**
 * @brief The transport's name, as plan lines print it.
 * @param transport the transport
 * @return "local", "mpi-host", "mpi-cuda-aware", "mpi-staged", "ipc", "ipc-ordered" or
 * "peer-ordered"
 */
[[nodiscard]] std::string to_string(halo_transport transport);

}  // namespace funnel
