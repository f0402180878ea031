// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file event_ipc_handle.hpp
 * @brief The bytes that identify an interprocess event to another process.
 */
#pragma once

#include <cstddef>

namespace funnel {

/**
 * @brief An exported interprocess event (the bytes of a cudaIpcEventHandle_t).
 *
 * Plain data: send it to another process of the same node (MPI, a socket) and open it there
 * with event::import_ipc.
 */
struct event_ipc_handle {
  /// @brief Size of the handle in bytes (CUDA_IPC_HANDLE_SIZE).
  static constexpr std::size_t size = 64;
  /// @brief The opaque handle bytes.
  unsigned char bytes[size];
};

}  // namespace funnel
