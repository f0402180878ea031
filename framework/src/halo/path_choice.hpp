// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: which transport one halo link takes, from what is known of the two ranks (same node,
// same GPU, exportable pools, whether each could map the other's pool). A pure function, so the
// decision is tested for any topology without GPUs (tests/halo/path_choice_test.cpp).
#pragma once

#include <string>

#include "funnel/halo/halo_method.hpp"
#include "funnel/halo/halo_transport.hpp"

namespace funnel::detail {

/// What one link's two ranks found out about each other.
struct link_facts {
  bool on_node = false;     ///< the neighbour runs on this node
  bool same_gpu = false;    ///< ... and on this rank's GPU
  bool exportable = false;  ///< every pool of the node can be exported (IPC at all)
  bool mapped = true;       ///< each rank mapped the other's pool (peer access where GPUs differ)
  std::string map_error;    ///< why not, when !mapped (the first rank's failure)
  int rank = 0;             ///< the neighbour, for the messages
};

/// The transport of one link and, when an on-node neighbour is not reached through IPC, why.
struct path_choice {
  halo_transport transport = halo_transport::mpi_staged;
  std::string fallback;  ///< why IPC was not used to a neighbour on this node ("" otherwise)
  std::string refusal;   ///< halo_method::ipc only: why this link cannot honour it ("" if it can)
};

/**
 * @brief The path of one link.
 * @param method what the caller asked for
 * @param facts what the two ranks found out
 * @param ordered the node orders IPC on the GPUs (a bound field cycle and signals)
 * @param mpi_kind the MPI transport of this backend and MPI (staged, CUDA-aware or host)
 */
[[nodiscard]] path_choice choose_path(halo_method method, const link_facts& facts, bool ordered,
                                      halo_transport mpi_kind);

/// @brief Whether `transport` maps the neighbour's memory (ipc, ipc_ordered, peer_ordered).
[[nodiscard]] constexpr bool is_ipc(halo_transport transport) noexcept {
  return transport == halo_transport::ipc || transport == halo_transport::ipc_ordered ||
         transport == halo_transport::peer_ordered;
}

/// @brief Whether `method` lets a link try IPC with these facts (before any pool is mapped).
[[nodiscard]] bool ipc_candidate(halo_method method, const link_facts& facts);

}  // namespace funnel::detail
