// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: where the GPU-ordered halo path's signal words live, this rank's and the mappings of
// its neighbours'. Stream memory operations refuse cudaMemPool memory (measured on an H100,
// driver 580: CUDA_ERROR_INVALID_VALUE for a pool's own and its imported addresses alike; see
// tests/halo/signal_probe.cu), so on CUDA the words are a small cudaMalloc block shared by
// legacy CUDA IPC (cudaIpcGetMemHandle / cudaIpcOpenMemHandle), which they accept. On the host
// backend they come from the exchange's memfd pool, mapped through the neighbour's pool.
#pragma once

#include <cstdint>
#include <map>

#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/backend_kind.hpp"
#include "ipc_handshake_transport.hpp"

namespace funnel::detail {

/// One rank's signal words: one per face for "written" and one for "consumed"; with kernel
/// signals (kernel_signals.hpp) also the count of the rank's exchanges and a ticket per axis.
struct signal_words {
  std::uint64_t written[6];
  std::uint64_t consumed[6];
  std::uint64_t exchanges;
  std::uint32_t tickets[3];
  std::uint32_t stalled;      ///< kernel signals: face + 1 of a wait that gave up (0: none)
  std::uint32_t push_ticket;  ///< blocks of a pushing update kernel done (pushed_exchange)
};

class signal_block {
 public:
  signal_block() = default;
  /**
   * Allocates this rank's words, set to zero.
   * @param backend cuda: a cudaMalloc block; host: an allocation of `pool`
   * @param pool the exchange's exportable pool (host backend)
   */
  signal_block(backend_kind backend, memory_pool& pool);
  ~signal_block();
  signal_block(signal_block&& other) noexcept;
  signal_block& operator=(signal_block&& other) noexcept;
  signal_block(const signal_block&) = delete;
  signal_block& operator=(const signal_block&) = delete;

  /// @brief This rank's words (device memory on CUDA).
  [[nodiscard]] signal_words* words() const noexcept { return mine_; }
  /// @brief CUDA: a word of pinned host memory a kernel signal wait writes the face it gave up
  /// on to (face + 1; 0 while none did), as the device sees it; null on the host backend.
  [[nodiscard]] std::uint32_t* stall_flag_device() const noexcept { return stall_device_; }
  /// @brief The same word as the host reads it (null on the host backend).
  [[nodiscard]] const volatile std::uint32_t* stall_flag() const noexcept { return stall_host_; }
  /// @brief What a neighbour needs to map them (map()); `pool` is the one given at construction.
  [[nodiscard]] export_bytes export_handle(const memory_pool& pool) const;
  /**
   * @brief Rank `rank`'s words, mapped here (once per rank).
   * @param rank the neighbour
   * @param handle its export_handle()
   * @param pool its pool, imported (host backend)
   */
  [[nodiscard]] signal_words* map(int rank, const export_bytes& handle, imported_fields& pool);
  /// @brief Unmaps the neighbours' words.
  void release() noexcept;

 private:
  void reset() noexcept;

  backend_kind backend_ = backend_kind::host;
  signal_words* mine_ = nullptr;
  std::uint32_t* stall_host_ = nullptr;
  std::uint32_t* stall_device_ = nullptr;
  device_buffer<signal_words> host_words_;  // host backend
  std::map<int, signal_words*> mapped_;
};

}  // namespace funnel::detail
