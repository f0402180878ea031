// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: one axis of the GPU-ordered halo exchange as a single kernel, for ranks whose GPU is
// shared through MPS. The kernel copies this rank's boundary layers into the neighbours' ghosts;
// its last block to finish then writes each neighbour's signal word and waits (spinning, with a
// bounded sleep between looks) until the neighbours' copies into this rank's ghosts have
// signalled too.
//
// Why a kernel and not stream memory operations (stream_signals.hpp): measured on an H100 under
// MPS (tests/halo/step_probe.cu, docs/halo.md), every stream memory operation is work the GPU's
// front end does for one client at a time, about 2 µs each, so N ranks of one GPU pay N times it
// per step. A kernel node of a CUDA graph costs a fraction of that, and a kernel reads its signal
// values from device memory, so a graph of many steps can be launched again unchanged: the count
// of this rank's exchanges lives on the GPU (signal_words::exchanges), not in the host's call.
//
// Only one block per rank ever waits, so waiting blocks never keep the neighbours' copies from
// running. Without MPS the ranks' contexts are time-sliced and a waiting block would hold its
// context's slice while the neighbour cannot run, so the exchange takes this path only under MPS
// (or when FUNNEL_HALO_SIGNALS=kernel asks for it, for tests).
//
// A wait gives up after the stall timeout: it writes the face it waited on to a device word
// (signal_words::stalled, which makes every later wait of the rank return at once) and to a word
// of pinned host memory (stall_flag), and returns. The host's watchdog reads the pinned word
// after every wait and throws stall_error, so a neighbour that dies
// or stops can never leave a kernel spinning on the GPU (which under MPS would hold up every
// client of the GPU).
#pragma once

#include <cstddef>
#include <cstdint>

#include "funnel/config.hpp"
#include "funnel/runtime/stream_view.hpp"
#include "signal_block.hpp"
#include "strided_copy.hpp"

namespace funnel::detail {

/// What every wait of a rank on the GPU needs.
struct wait_context {
  signal_words* mine = nullptr;         ///< this rank's words (exchanges, tickets, stalled)
  std::uint64_t timeout_ns = 0;         ///< how long a wait may last
  std::uint32_t* stall_flag = nullptr;  ///< device address of the pinned stall word
};

/// One kernel of an exchange: one axis (the copies into its lower and upper neighbour), or
/// every axis at once when the caller reads face ghosts only (halo_options::faces_only). Entry i
/// of copies, signal, wait and wait_face belongs to one link.
struct axis_signals {
  strided_copy copies[6];                       ///< into the neighbours (count used)
  int count = 0;                                ///< links used (1 to 6)
  std::uint64_t* signal[6] = {};                ///< the neighbours' written[face] words
  std::uint64_t* wait[6] = {};                  ///< this rank's written[face] words
  int wait_face[6] = {-1, -1, -1, -1, -1, -1};  ///< their face indices (what stall_flag reports)
  wait_context context;                         ///< this rank's words and stall timeout
  int axis = 0;                                 ///< which ticket the blocks count on
  bool last = false;          ///< the exchange's last kernel: count the exchange done
  bool system_scope = false;  ///< a copy goes to another GPU: its writes are fenced system-wide
};

/// The arrival at an exchange (deep halos, or a cycle of one field): tell every neighbour this
/// rank is done with its ghosts of the exchange before, then wait until every neighbour has
/// said the same, before any copy of this exchange writes into a neighbour's ghosts.
struct arrival_signals {
  std::uint64_t* signal[6] = {};  ///< the neighbours' consumed[face] words (count used)
  std::uint64_t* wait[6] = {};    ///< this rank's consumed[face] words
  int wait_face[6] = {-1, -1, -1, -1, -1, -1};  ///< their face indices
  int count = 0;                                ///< links used
  wait_context context;                         ///< this rank's words and stall timeout
};

#if FUNNEL_HAS_CUDA
/// Enqueues the kernel of `axis` (one axis or all) on `stream` (cuda/kernel_signals.cu).
/// element_size is 4 or 8.
void exchange_axis_cuda(cuda_stream_handle stream, std::size_t element_size,
                        const axis_signals& axis);
/// Enqueues the arrival kernel on `stream` (one thread: it signals, then waits).
void arrive_cuda(cuda_stream_handle stream, const arrival_signals& arrival);
#endif

}  // namespace funnel::detail
