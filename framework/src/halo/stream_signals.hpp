// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: 64-bit signal words written and waited on in stream order, the primitive of the
// GPU-ordered halo path (ipc_ordered_transport). A signal only grows: a writer stores a count,
// a waiter waits until the word holds at least the count it needs, so the order in which the
// two hosts enqueue their halves never matters.
//
// cuda backend: stream memory operations (cuStreamBatchMemOp, reached through the runtime's
// driver entry point, so no link to libcuda): the GPU's front end performs them, no kernel
// spins on an SM, and a write is fenced after the stream's earlier work. host backend: the
// "stream" is the calling thread: a write is a release store, a wait polls with an acquire
// load (spinning briefly, then sleeping) until the count arrives or `deadline` passes.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::detail {

/// One signal operation: wait until `*word >= value`, or store `value` into `*word`.
struct signal_op {
  enum class kind { wait, write };
  kind what = kind::wait;
  std::uint64_t* word = nullptr;
  std::uint64_t value = 0;
};

/**
 * True when `backend` can order signals on its streams: always on the host backend; on CUDA
 * when the driver offers 64-bit stream memory operations on the current device.
 */
[[nodiscard]] bool stream_signals_supported(backend_kind backend);

/**
 * Enqueues `ops` on `stream` in order (one driver call on CUDA). On the host backend the ops run
 * now; a wait that is not satisfied by `deadline` stops and returns the index of that op (the
 * ops after it are not run). Returns ops.size() when every op ran (always on CUDA).
 * @throw funnel::cuda_error when the driver refuses the batch
 */
std::size_t enqueue_signals(stream_view stream, const std::vector<signal_op>& ops,
                            std::chrono::steady_clock::time_point deadline);

/// The current value of a signal word in host memory (host backend).
[[nodiscard]] std::uint64_t load_signal(const std::uint64_t* word) noexcept;

}  // namespace funnel::detail
