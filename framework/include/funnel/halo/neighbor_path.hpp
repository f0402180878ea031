// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file neighbor_path.hpp
 * @brief One neighbour of a halo exchange and the path to it (for plan printouts).
 */
#pragma once

#include <string>

#include "funnel/decomposition/side.hpp"
#include "funnel/halo/halo_transport.hpp"

namespace funnel {

/// @brief A neighbour across one face of this rank's box and how ghosts travel to it.
struct neighbor_path {
  int axis = 0;                                         ///< 0 = x, 1 = y, 2 = z
  side where = side::lower;                             ///< which face of this rank's box
  int rank = 0;                                         ///< the neighbour's rank
  halo_transport transport = halo_transport::mpi_host;  ///< how ghosts travel
};

/**
 * @brief The path in words, as plan lines print it.
 * @param path the path
 * @return axis and face, the neighbour's rank and the transport, e.g. "x- rank 3 ipc"
 */
[[nodiscard]] std::string to_string(const neighbor_path& path);

}  // namespace funnel
