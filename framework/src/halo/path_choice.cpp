// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "path_choice.hpp"

namespace funnel::detail {

bool ipc_candidate(halo_method method, const link_facts& facts) {
  return method != halo_method::mpi && facts.on_node && facts.exportable;
}

path_choice choose_path(halo_method method, const link_facts& facts, bool ordered,
                        halo_transport mpi_kind) {
  path_choice c;
  c.transport = mpi_kind;
  if (method == halo_method::mpi) return c;
  const std::string who = "rank " + std::to_string(facts.rank);
  if (!facts.on_node) {
    // Between nodes MPI is the path, not a fallback.
    if (method == halo_method::ipc) c.refusal = "neighbour " + who + " is on another node";
    return c;
  }
  if (!facts.exportable) {
    c.fallback = "a pool of this node is not ipc_exportable";
  } else if (!facts.mapped) {
    c.fallback = (facts.same_gpu ? "could not map " + who + "'s pool: "
                                 : "no peer access to " + who + "'s GPU: ") +
                 facts.map_error;
  }
  if (!c.fallback.empty()) {
    if (method == halo_method::ipc) c.refusal = c.fallback;
    return c;
  }
  c.transport = !ordered         ? halo_transport::ipc
                : facts.same_gpu ? halo_transport::ipc_ordered
                                 : halo_transport::peer_ordered;
  return c;
}

}  // namespace funnel::detail
