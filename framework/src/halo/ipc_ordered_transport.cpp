// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "ipc_ordered_transport.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "setup_swap.hpp"

namespace funnel::detail {
namespace {

// What a rank tells each IPC neighbour once: where its signal words and cycle fields are, and
// the layout and element size it gives its fields (checked before anything is written).
struct setup_message {
  export_bytes signals{};
  export_bytes fields[ipc_ordered_transport::max_cycle]{};
  std::int64_t cycle_length = 0;
  std::int64_t interior[3] = {0, 0, 0};
  std::int64_t halo = 0;
  std::int64_t row_align = 0;
  std::int64_t element_size = 0;
  std::int64_t arrive_first = 0;
};

export_bytes export_of(const memory_pool& pool, void* ptr) {
  const ipc_pointer p = pool.export_pointer(ptr);
  export_bytes bytes{};
  std::memcpy(bytes.data(), p.bytes, bytes.size());
  return bytes;
}

}  // namespace

ipc_ordered_transport::ipc_ordered_transport(
    std::vector<halo_link> links, MPI_Comm comm, MPI_Comm node_comm, backend_kind backend,
    memory_pool& pool, std::map<int, imported_fields> peers, const std::vector<void*>& cycle,
    const field_layout& layout, std::size_t element_size, stall_watchdog& watchdog,
    bool kernel_signals, bool arrive_first, bool faces_only)
    : links_(std::move(links)),
      remote_(links_.size()),
      peers_(std::move(peers)),
      watchdog_(&watchdog),
      kernel_signals_(kernel_signals),
      arrive_first_(arrive_first),
      faces_only_(kernel_signals && faces_only) {
  ops_.reserve(links_.size());
  FUNNEL_EXPECTS(!cycle.empty() && cycle.size() <= max_cycle,
                 "halo_exchange: a field cycle of " + std::to_string(cycle.size()) +
                     " fields; the GPU-ordered path takes 1 to " + std::to_string(max_cycle));
  FUNNEL_EXPECTS(!kernel_signals || backend == backend_kind::cuda,
                 "halo_exchange: kernel signals need the cuda backend");
  for (const auto& l : links_) {
    last_axis_ = std::max(last_axis_, l.path.axis);
    first_axis_ = std::min(first_axis_, l.path.axis);
    has_peer_links_ = has_peer_links_ || l.path.transport == halo_transport::peer_ordered;
  }
  std::string error;
  std::vector<setup_message> theirs(links_.size());
  if (!links_.empty()) {
    signals_ = signal_block(backend, pool);
    setup_message mine;
    mine.signals = signals_.export_handle(pool);
    for (std::size_t i = 0; i < cycle.size(); ++i) mine.fields[i] = export_of(pool, cycle[i]);
    mine.cycle_length = static_cast<std::int64_t>(cycle.size());
    for (int a = 0; a < 3; ++a) mine.interior[a] = layout.interior[a];
    mine.halo = layout.halo;
    mine.row_align = layout.row_align;
    mine.element_size = static_cast<std::int64_t>(element_size);
    mine.arrive_first = arrive_first_ ? 1 : 0;

    theirs = swap_setup_messages(comm, links_, mine, "signal words");
    for (std::size_t i = 0; i < links_.size() && error.empty(); ++i) {
      const halo_link& l = links_[i];
      const setup_message& m = theirs[i];
      const index3 interior{m.interior[0], m.interior[1], m.interior[2]};
      if (interior != l.remote_layout.interior || m.halo != l.remote_layout.halo ||
          m.row_align != l.remote_layout.row_align ||
          m.element_size != static_cast<std::int64_t>(element_size) ||
          m.cycle_length != static_cast<std::int64_t>(cycle.size()) ||
          m.arrive_first != mine.arrive_first) {
        error = "halo_exchange: rank " + std::to_string(l.path.rank) +
                " gives its field interior " + describe(interior) + ", halo " +
                std::to_string(m.halo) + ", row alignment " + std::to_string(m.row_align) +
                ", elements of " + std::to_string(m.element_size) + " B and a cycle of " +
                std::to_string(m.cycle_length) + " fields; this rank expects interior " +
                describe(l.remote_layout.interior) + ", halo " +
                std::to_string(l.remote_layout.halo) + ", row alignment " +
                std::to_string(l.remote_layout.row_align) + ", " + std::to_string(element_size) +
                " B and " + std::to_string(cycle.size()) +
                (m.arrive_first != mine.arrive_first ? "; and the two differ on deep halos" : "") +
                " (do all ranks build the same decomposition, element size, field cycle and "
                "steps per exchange?)";
      }
    }
  }
  // A mismatch anywhere is an error everywhere, before any rank maps or writes anything.
  int failed = error.empty() ? 0 : 1;
  FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, node_comm),
                 "halo_exchange: do the neighbours agree on the fields");
  if (!error.empty()) throw invalid_argument(error);
  if (failed != 0) {
    throw invalid_argument(
        "halo_exchange: a rank's IPC neighbour lays out its field differently (see that rank's "
        "error); every rank gives up");
  }
  for (std::size_t i = 0; i < links_.size(); ++i) {
    imported_fields& peer = peers_.at(links_[i].path.rank);
    remote_[i].signals = signals_.map(links_[i].path.rank, theirs[i].signals, peer);
    for (std::size_t f = 0; f < cycle.size(); ++f) {
      remote_[i].fields.push_back(peer.map(theirs[i].fields[f]));
    }
  }
  if (kernel_signals_ && !links_.empty()) {
    std::array<int, 6> neighbour_of_face{-1, -1, -1, -1, -1, -1};
    for (const auto& l : links_)
      neighbour_of_face[static_cast<std::size_t>(l.face())] = l.path.rank;
    watchdog.watch_device(signals_.stall_flag(), neighbour_of_face);
  }
}

void ipc_ordered_transport::run(const exchange_step& step, const std::vector<signal_op>& ops,
                                const char* waiting_for) {
  const auto deadline = std::chrono::steady_clock::now() + watchdog_->timeout();
  const std::size_t done = enqueue_signals(step.stream, ops, deadline);
  if (done == ops.size()) return;
  // Host backend only: a wait timed out. Say which neighbour the word belongs to.
  std::string who;
  for (const auto& l : links_) {
    if (ops[done].word == &signals_.words()->written[l.face()] ||
        ops[done].word == &signals_.words()->consumed[l.face()]) {
      who = "rank " + std::to_string(l.path.rank);
    }
  }
  watchdog_->stalled("at exchange " + std::to_string(step.count) + ", waiting for " + who + " " +
                     waiting_for);
}

ipc_ordered_transport::face_target ipc_ordered_transport::interior_face(const exchange_step& step,
                                                                        std::size_t i) const {
  const halo_link& l = links_[i];
  face_target t{l.send_region, field_block(remote_[i].fields[step.field_index], l.remote_layout,
                                           l.remote_region, step.element_size)};
  // The layer sent lies in the interior along the link's axis; along the others it reaches into
  // the ghosts, which the copies of later axes carry on as edges and corners.
  const box interior = step.layout->interior_box();
  std::int64_t skip[3];
  for (int a = 0; a < 3; ++a) {
    t.face.lo[a] = std::max(l.send_region.lo[a], interior.lo[a]);
    t.face.hi[a] = std::min(l.send_region.hi[a], interior.hi[a]);
    skip[a] = t.face.lo[a] - l.send_region.lo[a];
  }
  t.dst.base = static_cast<char*>(t.dst.base) +
               static_cast<std::int64_t>(step.element_size) *
                   (skip[2] * t.dst.stride_z + skip[1] * t.dst.stride_y + skip[0]);
  return t;
}

strided_copy ipc_ordered_transport::face_copy(const exchange_step& step, std::size_t i) const {
  const halo_link& l = links_[i];
  if (faces_only_) {
    const face_target t = interior_face(step, i);
    return {t.dst, step.block(t.face), t.face.extents()};
  }
  return {field_block(remote_[i].fields[step.field_index], l.remote_layout, l.remote_region,
                      step.element_size),
          step.block(l.send_region), l.send_region.extents()};
}

void ipc_ordered_transport::post_kernel(const exchange_step& step, int axis) {
#if FUNNEL_HAS_CUDA
  axis_signals a;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    if (!faces_only_ && l.path.axis != axis) continue;
    a.copies[a.count] = face_copy(step, i);
    a.signal[a.count] = &remote_[i].signals->written[l.remote_face()];
    a.wait[a.count] = &signals_.words()->written[l.face()];
    a.wait_face[a.count] = l.face();
    a.system_scope = a.system_scope || l.path.transport == halo_transport::peer_ordered;
    ++a.count;
  }
  a.context = kernel_wait_context();
  a.axis = axis;
  a.last = faces_only_ || axis == last_axis_;
  exchange_axis_cuda(step.stream.native_handle(), step.element_size, a);
#else
  (void)step;
  (void)axis;
#endif
}

void ipc_ordered_transport::arrive_kernel(const exchange_step& step) {
#if FUNNEL_HAS_CUDA
  arrival_signals a;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    a.signal[a.count] = &remote_[i].signals->consumed[l.remote_face()];
    a.wait[a.count] = &signals_.words()->consumed[l.face()];
    a.wait_face[a.count] = l.face();
    ++a.count;
  }
  a.context = kernel_wait_context();
  arrive_cuda(step.stream.native_handle(), a);
#else
  (void)step;
#endif
}

void ipc_ordered_transport::describe_push(const exchange_step& step, pushed_exchange& push) const {
  FUNNEL_EXPECTS(pushable(), "halo_exchange: these links cannot be pushed by an update kernel");
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    // The face's interior cells only: an update kernel computes no ghost.
    const face_target t = interior_face(step, i);
    pushed_face& f = push.faces[push.count++];
    for (int a = 0; a < 3; ++a) {
      f.lo[a] = t.face.lo[a];
      f.hi[a] = t.face.hi[a];
    }
    f.dst = t.dst.base;
    f.dst_sy = t.dst.stride_y;
    f.dst_sz = t.dst.stride_z;
    f.signal = &remote_[i].signals->written[l.remote_face()];
    f.wait = &signals_.words()->written[l.face()];
    f.face = l.face();
  }
  const wait_context context = kernel_wait_context();
  push.exchanges = &context.mine->exchanges;
  push.ticket = &context.mine->push_ticket;
  push.stalled = &context.mine->stalled;
  push.stall_flag = context.stall_flag;
  push.timeout_ns = context.timeout_ns;
}

wait_context ipc_ordered_transport::kernel_wait_context() const {
  wait_context context;
  context.mine = signals_.words();
  context.timeout_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(watchdog_->timeout()).count());
  context.stall_flag = signals_.stall_flag_device();
  return context;
}

void ipc_ordered_transport::begin(const exchange_step& step) {
  if (links_.empty() || !arrive_first_) return;
  if (kernel_signals_) {
    arrive_kernel(step);  // c comes from the GPU's count: the same kernel serves every replay
    return;
  }
  if (step.count <= 1) return;
  ops_.clear();
  for (std::size_t i = 0; i < links_.size(); ++i) {
    ops_.push_back({signal_op::kind::write, &remote_[i].signals->consumed[links_[i].remote_face()],
                    step.count - 1});
  }
  run(step, ops_, "");
}

void ipc_ordered_transport::post(const exchange_step& step, int axis) {
  if (!has_axis(axis)) return;
  if (kernel_signals_) {
    // Copies, signals and waits: complete() has nothing left to do. Faces only: every axis in
    // the kernel of the first.
    if (!faces_only_ || axis == first_axis_) post_kernel(step, axis);
    return;
  }
  ops_.clear();
  if (arrive_first_ && step.count > 1) {
    for (const auto& l : links_) {
      if (l.path.axis != axis) continue;
      ops_.push_back(
          {signal_op::kind::wait, &signals_.words()->consumed[l.face()], step.count - 1});
    }
    run(step, ops_, "to be done with the ghosts this rank is about to overwrite");
    ops_.clear();
  }
  // Every face of the axis in one copy launch, then every signal in one batch.
  strided_copy copies[max_batch];
  int count = 0;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    if (l.path.axis != axis) continue;
    void* target = remote_[i].fields[step.field_index];
    copies[count++] = {field_block(target, l.remote_layout, l.remote_region, step.element_size),
                       step.block(l.send_region), l.send_region.extents()};
    ops_.push_back(
        {signal_op::kind::write, &remote_[i].signals->written[l.remote_face()], step.count});
  }
  copy_strided_batch(step.stream, step.element_size, copies, count);
  run(step, ops_, "");
}

void ipc_ordered_transport::complete(const exchange_step& step, int axis) {
  if (!has_axis(axis) || kernel_signals_) return;
  ops_.clear();
  for (const auto& l : links_) {
    if (l.path.axis == axis) {
      ops_.push_back({signal_op::kind::wait, &signals_.words()->written[l.face()], step.count});
    }
  }
  run(step, ops_, "to write this rank's ghosts");
}

void ipc_ordered_transport::release() noexcept {
  signals_.release();
  for (auto& [rank, peer] : peers_) peer.release();
  for (auto& r : remote_) {
    r.signals = nullptr;
    r.fields.clear();
  }
}

}  // namespace funnel::detail
