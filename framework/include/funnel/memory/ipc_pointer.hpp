// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file ipc_pointer.hpp
 * @brief A pool allocation described so that another process can map it.
 */
#pragma once

namespace funnel {

/**
 * @brief Opaque, trivially copyable description of one allocation of an IPC-exportable pool.
 *
 * Made by memory_pool::export_pointer, sent to another process of the node by any means (e.g.
 * MPI), and turned back into a pointer there by memory_pool::import_pointer on the imported
 * pool. CUDA pools hold cudaMemPoolPtrExportData here, or for an allocation they made outside
 * the stream-ordered pool (see memory_pool::allocate) its cudaIpcMemHandle_t; host pools an
 * offset into their arena. The byte after the driver's 64 says which of the two CUDA kinds it is.
 */
struct ipc_pointer {
  unsigned char bytes[72] = {};  ///< the export data
};

}  // namespace funnel
