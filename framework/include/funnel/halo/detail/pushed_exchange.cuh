// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Device side of funnel::pushed_exchange, and the signal wait every GPU-ordered exchange kernel
// uses. For CUDA sources only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cuda/atomic>

#include "funnel/halo/pushed_exchange.hpp"

namespace funnel::detail {

/// A signal word as the kernels read and write it. System scope: the rank that writes it may run
/// on another GPU of the node (peer-ordered links), and only one thread per kernel touches it.
using device_signal = ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_system>;

__device__ inline unsigned long long& as_signal(std::uint64_t* w) {
  return *reinterpret_cast<unsigned long long*>(w);
}

__device__ inline std::uint64_t global_time_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Waits until `*w >= value`. False when this rank already gave up a wait (`*stalled` != 0) or
/// this one lasts longer than `timeout_ns`: then face + 1 goes to `*stalled` and to the pinned
/// `*stall_flag` the host's watchdog reads. Sleeps 32 to 256 ns between looks.
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

/// Writes `value`, this rank's new value of cell (i, j, k), into the ghosts of every neighbour
/// whose face holds the cell.
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

/// Whether any face of `x` holds a cell of the box [lo, hi) (a thread's cells): the threads
/// that hold none skip push_value.
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

/// The end of every block of a pushing kernel that holds a face cell, by one thread after the
/// block's barrier (every thread's pushes are issued); `blocks` is how many such blocks the
/// launch has. The last of them writes the exchange count + 1 into the neighbours' words, waits
/// until theirs reach it in this rank's, and counts the exchange. Only that block waits, so
/// waiting blocks never keep the neighbours' kernels off the GPU. The blocks without face cells
/// neither push nor read a ghost a neighbour writes, so the signal need not wait for them.
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
