// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: IPC ordered on the GPU (the cuda backend's path between ranks of a node: on one GPU,
// and on different GPUs through peer access, `peer_ordered` links; on the host backend the same
// protocol runs on the calling thread). The host only enqueues work.
//
// Every rank allocates twelve signal words, written[6] and consumed[6] (one per face; see
// signal_block for where they live), and tells each IPC neighbour once, at setup, where they and
// the fields of the bound field cycle are. Exchange c (1, 2, ...) of field cycle[(c - 1) mod n]:
//   post     copy my boundary layer into the neighbour's ghosts of its field of this exchange,
//            then write its written[face] = c;
//   complete wait my written[face] >= c, then the caller may read the ghosts.
// The words only grow, so it never matters which host enqueues its half first. A copy must not
// overwrite ghosts the neighbour still reads. With n >= 2 fields the written words already see
// to it: my copy of exchange c + n waits (through my complete of exchange c + n - 1) for the
// neighbour's copy of exchange c + 1, which its stream enqueues after all its reads of exchange
// c's ghosts (callers order those reads before the next begin). With one field it does not, and
// neither with deep halos (halo_options::steps_per_exchange > 1: the steps between two exchanges
// read and write the ghosts of every field), unless those steps only read the ghosts just
// exchanged (halo_options::ghosts_read_only). Then each exchange starts with an *arrival*: begin
// writes the neighbour's consumed[face] = c - 1 ("I am done with my ghosts of exchange c - 1")
// and, before copying, each rank waits until its own consumed[face] >= c - 1.
//
// Two ways to signal (chosen at setup, the same on every rank of the node): stream memory
// operations (the host passes c), or, with kernel_signals, one kernel per axis that copies,
// signals and waits, taking c from the exchange count it keeps in device memory
// (kernel_signals.hpp), with the arrival as a kernel of its own before the first axis. Its work
// can be captured in a CUDA graph and launched again (replayable()).
#pragma once

#include <mpi.h>

#include <map>
#include <vector>

#include "funnel/memory/memory_pool.hpp"
#include "ipc_handshake_transport.hpp"
#include "kernel_signals.hpp"
#include "signal_block.hpp"
#include "stall_watchdog.hpp"
#include "stream_signals.hpp"

namespace funnel::detail {

class ipc_ordered_transport final : public link_transport {
 public:
  /// The most fields a cycle may hold.
  static constexpr std::size_t max_cycle = 4;

  /**
   * Collective over `node_comm` (every rank of the node constructs its transport, with or
   * without links, so that a mismatch anywhere on the node is thrown on all of its ranks).
   * @param links the IPC links (may be empty)
   * @param comm the exchange's private communicator (the neighbours' ranks are in it)
   * @param node_comm the ranks of this node
   * @param backend backend of the fields
   * @param pool this rank's exportable pool (holds the fields and the signal words)
   * @param peers each IPC neighbour's pool, imported
   * @param cycle the fields, in the order exchanges use them
   * @param layout this rank's layout
   * @param element_size bytes per value
   * @param watchdog names the neighbours when a host-side wait times out; with kernel signals
   *        it also watches the word the GPU writes when a wait there gave up
   * @param kernel_signals signal with the exchange's kernel instead of stream memory operations
   *        (cuda backend)
   * @param arrive_first every exchange starts with the arrival handshake (a cycle of one
   *        field, or deep halos whose steps write ghosts: halo_exchange decides)
   * @param faces_only with kernel signals, one kernel copies every face (interior cells only)
   *        and signals and waits once (halo_options::faces_only); else one kernel per axis
   */
  ipc_ordered_transport(std::vector<halo_link> links, MPI_Comm comm, MPI_Comm node_comm,
                        backend_kind backend, memory_pool& pool,
                        std::map<int, imported_fields> peers, const std::vector<void*>& cycle,
                        const field_layout& layout, std::size_t element_size,
                        stall_watchdog& watchdog, bool kernel_signals, bool arrive_first,
                        bool faces_only);

  [[nodiscard]] const std::vector<halo_link>& links() const noexcept override { return links_; }
  void begin(const exchange_step& step) override;
  void post(const exchange_step& step, int axis) override;
  void complete(const exchange_step& step, int axis) override;
  void release() noexcept override;
  [[nodiscard]] bool replayable() const noexcept override { return kernel_signals_; }
  /// Kernel signals, a cycle of two or more fields and one step per exchange: the written
  /// words alone order the copies, which an update kernel can then push (pushed_exchange.hpp).
  [[nodiscard]] bool pushable() const noexcept override {
    return kernel_signals_ && !arrive_first_ && !links_.empty() && !has_peer_links_;
  }
  void describe_push(const exchange_step& step, pushed_exchange& push) const override;

 private:
  struct remote {
    signal_words* signals = nullptr;
    std::vector<void*> fields;  // the neighbour's cycle, mapped here
  };

  void run(const exchange_step& step, const std::vector<signal_op>& ops, const char* waiting_for);
  void post_kernel(const exchange_step& step, int axis);
  // Link i's layer restricted to its face's interior cells (no edge or corner ghost), and where
  // its first cell lands in the neighbour's field.
  struct face_target {
    box face;
    strided_block dst;
  };
  [[nodiscard]] face_target interior_face(const exchange_step& step, std::size_t i) const;
  // The copy of link i's layer into the neighbour's ghosts (interior_face when faces_only_).
  [[nodiscard]] strided_copy face_copy(const exchange_step& step, std::size_t i) const;
  void arrive_kernel(const exchange_step& step);
  [[nodiscard]] wait_context kernel_wait_context() const;

  std::vector<halo_link> links_;
  std::vector<remote> remote_;  // one per link
  std::map<int, imported_fields> peers_;
  signal_block signals_;
  const stall_watchdog* watchdog_;
  std::vector<signal_op> ops_;  // the signals of one call, reused: no allocation per step
  bool kernel_signals_ = false;
  bool arrive_first_ = false;    // every exchange starts with the arrival handshake
  bool faces_only_ = false;      // kernel signals: every face in one kernel (faces_only)
  bool has_peer_links_ = false;  // a neighbour on another GPU (pushes stay on one GPU)
  int last_axis_ = -1;  // the highest axis with a link (its kernel counts the exchange done)
  int first_axis_ = 3;  // the lowest axis with a link (faces_only_: its kernel does all)
};

}  // namespace funnel::detail
