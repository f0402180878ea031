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

/// @brief The user's choice of halo path, made per neighbour by halo_exchange.
enum class halo_method {
  /// IPC to each neighbour on this node whose pool this rank could map (peer access where the
  /// GPUs differ), when every pool of the node can be exported; MPI to the others
  /// (halo_exchange::fallback() says why an on-node neighbour went over MPI)
  automatic,
  /// IPC to every neighbour, across GPUs too; an error when one is on another node or a pool
  /// cannot be exported or mapped
  ipc,
  mpi  ///< MPI messages to every neighbour
};

/**
 * @brief The method's name, as parse_halo_method() reads it.
 * @param method the method
 * @return "auto", "ipc" or "mpi"
 */
[[nodiscard]] std::string to_string(halo_method method);

/**
 * @brief Parses the app's `--halo` value.
 * @param text "auto", "ipc" or "mpi"
 * @return the method
 * @throw funnel::invalid_argument for any other text
 */
[[nodiscard]] halo_method parse_halo_method(std::string_view text);

}  // namespace funnel
