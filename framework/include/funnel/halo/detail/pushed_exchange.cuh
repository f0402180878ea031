// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pushed_exchange.cuh
 * @brief Device side of funnel::pushed_exchange, and the signal wait every GPU-ordered exchange
 * kernel uses. For CUDA sources only.
 *
 * Internal (funnel::detail): installed with the public headers, but not part of funnel's API.
 */
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cuda/atomic>

#include "funnel/halo/pushed_exchange.hpp"

namespace funnel::detail {

/// @brief A signal word as the kernels read and write it.
///
/// System scope: the rank that writes it may run on another GPU of the node (peer-ordered
/// links), and only one thread per kernel touches it.
using device_signal = ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_system>;

/**
 * @brief A signal word as the type cuda::atomic_ref takes (the same 64 bits).
 * @param w the word
 * @return the same word
 */
__device__ inline unsigned long long& as_signal(std::uint64_t* w) {
  return *reinterpret_cast<unsigned long long*>(w);
}

/**
 * @brief The GPU's global timer, which the bounded waits measure with.
 * @return nanoseconds, as PTX's `%globaltimer` counts them
 */
__device__ inline std::uint64_t global_time_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/**
 * @brief Waits until `*w >= value`, bounded.
 *
 * When this rank already gave up a wait (`*stalled` != 0) or this one lasts longer than
 * `timeout_ns`, face + 1 goes to `*stalled` and to the pinned `*stall_flag` the host's watchdog
 * reads. Sleeps 32 to 256 ns between looks.
 * @param w the signal word a neighbour writes
 * @param value the count to wait for
 * @param face 2 * axis + side of the face waited on, for the stall report
 * @param stalled the device copy of the stall word
 * @param stall_flag the stall word in pinned host memory
 * @param timeout_ns how long the wait may last
 * @return true when the value arrived; false when the wait gave up or an earlier one had
 */
__device__ inline bool wait_for_signal(std::uint64_t* w, std::uint64_t value, int face,
                                       std::uint32_t* stalled, std::uint32_t* stall_flag,
                                       std::uint64_t timeout_ns) {
  // The device copy of the stall word: a look at pinned host memory would put a PCIe round
  // trip on every step's critical path.
  volatile std::uint32_t* gave_up = stalled;
  if (*gave_up != 0) return false;
  device_signal signal(as_signal(w));
  const std::uint64_t start = global_time_ns();
  unsigned pause = 32;
  while (signal.load(::cuda::memory_order_acquire) < value) {
    if (global_time_ns() - start > timeout_ns) {
      *gave_up = static_cast<std::uint32_t>(face + 1);
      *static_cast<volatile std::uint32_t*>(stall_flag) = static_cast<std::uint32_t>(face + 1);
      __threadfence_system();
      return false;
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    __nanosleep(pause);  // older GPUs have no sleep: they look again at once
#endif
    pause = min(pause * 2, 256U);
  }
  return true;
}

/**
 * @brief Writes `value`, this rank's new value of cell (i, j, k), into the ghosts of every
 * neighbour whose face holds the cell.
 * @tparam T the field's element type
 * @param x the exchange
 * @param i x index of the cell in this rank's allocated array
 * @param j y index
 * @param k z index
 * @param value the cell's new value
 */
template <class T>
__device__ inline void push_value(const pushed_exchange& x, std::int64_t i, std::int64_t j,
                                  std::int64_t k, T value) {
  for (int f = 0; f < x.count; ++f) {
    const pushed_face& p = x.faces[f];
    if (i >= p.lo[0] && i < p.hi[0] && j >= p.lo[1] && j < p.hi[1] && k >= p.lo[2] && k < p.hi[2]) {
      static_cast<T*>(p.dst)[(k - p.lo[2]) * p.dst_sz + (j - p.lo[1]) * p.dst_sy + (i - p.lo[0])] =
          value;
    }
  }
}

/**
 * @brief Whether any face of `x` holds a cell of a thread's cells, so the threads that hold
 * none skip push_value.
 * @param x the exchange
 * @param lo the thread's first cell, in this rank's allocated array
 * @param hi one past its last cell
 * @return true when a face of `x` overlaps the box [lo, hi)
 */
__device__ inline bool touches_face(const pushed_exchange& x, const std::int64_t lo[3],
                                    const std::int64_t hi[3]) {
  for (int f = 0; f < x.count; ++f) {
    const pushed_face& p = x.faces[f];
    if (lo[0] < p.hi[0] && p.lo[0] < hi[0] && lo[1] < p.hi[1] && p.lo[1] < hi[1] &&
        lo[2] < p.hi[2] && p.lo[2] < hi[2]) {
      return true;
    }
  }
  return false;
}

/**
 * @brief The end of every block of a pushing kernel that holds a face cell, by one thread after
 * the block's barrier (every thread's pushes are issued).
 *
 * The last of these blocks writes the exchange count + 1 into the neighbours' words, waits
 * until theirs reach it in this rank's, and counts the exchange. Only that block waits, so
 * waiting blocks never keep the neighbours' kernels off the GPU. The blocks without face cells
 * neither push nor read a ghost a neighbour writes, so the signal need not wait for them.
 * @param x the exchange
 * @param blocks how many blocks of the launch hold a face cell
 */
__device__ inline void pushed_block_done(const pushed_exchange& x, unsigned blocks) {
  __threadfence();  // this block's pushes are visible before its ticket is
  if (atomicAdd(x.ticket, 1U) != blocks - 1) return;
  *x.ticket = 0;
  __threadfence();  // every block's pushes are visible before the signals
  const std::uint64_t c = *x.exchanges + 1;
  for (int f = 0; f < x.count; ++f) {
    device_signal(as_signal(x.faces[f].signal)).store(c, ::cuda::memory_order_release);
  }
  for (int f = 0; f < x.count; ++f) {
    if (!wait_for_signal(x.faces[f].wait, c, x.faces[f].face, x.stalled, x.stall_flag,
                         x.timeout_ns)) {
      break;
    }
  }
  *x.exchanges = c;
}

}  // namespace funnel::detail
