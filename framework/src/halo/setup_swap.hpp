// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: the one-time setup message the IPC transports swap with each link's neighbour.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "funnel/error.hpp"
#include "halo_link.hpp"
#include "halo_tags.hpp"

namespace funnel::detail {

/**
 * @brief Sends `mine` to the neighbour of every link and returns what each sent back, in link
 * order. Receives are posted first and one wait ends all, so two faces towards one rank (a
 * periodic axis of two ranks) cannot deadlock.
 * @param what what is swapped, for the error message (e.g. "IPC event handles")
 * @throw funnel::mpi_error when a call fails
 */
template <class Message>
std::vector<Message> swap_setup_messages(MPI_Comm comm, const std::vector<halo_link>& links,
                                         const Message& mine, const std::string& what) {
  const std::string context = "halo_exchange: exchanging " + what;
  std::vector<Message> theirs(links.size());
  std::vector<MPI_Request> requests(2 * links.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const halo_link& l = links[i];
    FUNNEL_MPI_TRY(
        MPI_Irecv(&theirs[i], sizeof(Message), MPI_BYTE, l.path.rank,
                  halo_tag(tag_setup, l.path.axis, opposite(l.path.where)), comm, &requests[i]),
        context);
  }
  for (std::size_t i = 0; i < links.size(); ++i) {
    const halo_link& l = links[i];
    FUNNEL_MPI_TRY(MPI_Isend(&mine, sizeof(Message), MPI_BYTE, l.path.rank,
                             halo_tag(tag_setup, l.path.axis, l.path.where), comm,
                             &requests[links.size() + i]),
                   context);
  }
  FUNNEL_MPI_TRY(
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
      context);
  return theirs;
}

}  // namespace funnel::detail
