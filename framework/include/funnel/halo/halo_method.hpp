// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file halo_method.hpp
 * @brief How a halo exchange may move ghost cells (the app's `--halo auto|ipc|mpi`).
 */
#pragma once

#include <string>
#include <string_view>

namespace funnel {

/**
 * @brief The user's choice of halo path.
 *
 * `automatic`: IPC to neighbours on this node and on this rank's GPU (ranks sharing a GPU under
 * MPS) when every rank of the node can export its pool, MPI otherwise (chosen per neighbour):
 * between two GPUs of a node the staged MPI path measured faster than IPC peer copies with
 * interprocess events (see halo_exchange.cpp). `ipc`: IPC to every neighbour, across GPUs too,
 * an error when one is on another node or a pool cannot be exported. `mpi`: MPI messages to
 * every neighbour.
 */
enum class halo_method { automatic, ipc, mpi };

/// @brief "auto", "ipc" or "mpi".
[[nodiscard]] std::string to_string(halo_method method);

/**
 * @brief Parses the app's `--halo` value.
 * @param text "auto", "ipc" or "mpi"
 * @return the method
 * @throw funnel::invalid_argument for any other text
 */
[[nodiscard]] halo_method parse_halo_method(std::string_view text);

}  // namespace funnel
