// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file memory_pool_options.hpp
 * @brief How a funnel::memory_pool is created.
 */
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>

namespace funnel {

/// @brief Creation options of a funnel::memory_pool.
struct memory_pool_options {
  /// Name used in error messages and statistics reports.
  std::string name = "funnel";
  /// Value of `device` meaning "the device current on the creating thread".
  static constexpr int current_device = -1;
  /// @brief CUDA device the pool takes memory from (ignored by the host backend).
  ///
  /// By default the device current when the pool is created, i.e. the rank's GPU once it is
  /// bound.
  int device = current_device;
  /// @brief Bytes the pool keeps reserved when memory is freed; more is returned to the system.
  ///
  /// The default keeps all memory (no release).
  std::size_t release_threshold = std::numeric_limits<std::size_t>::max();
  /// @brief Most bytes that may be handed out at once.
  ///
  /// An allocation beyond it raises funnel::out_of_memory before the device is asked (emulates
  /// a smaller GPU).
  std::optional<std::size_t> byte_limit;
  /// The pool can be exported to other processes (POSIX file descriptor handles).
  bool ipc_exportable = false;
  /// Size of the shared memfd arena an IPC-exportable host-backend pool carves allocations from.
  std::size_t host_ipc_capacity = std::size_t{1} << 30;
};

}  // namespace funnel
