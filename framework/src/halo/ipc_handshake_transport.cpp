// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "ipc_handshake_transport.hpp"

#include <cstring>
#include <string>
#include <utility>

#include "funnel/error.hpp"
#include "funnel/runtime/event_ipc_handle.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "halo_tags.hpp"
#include "setup_swap.hpp"

namespace funnel::detail {

void* imported_fields::map(const export_bytes& bytes) {
  auto it = mapped_.find(bytes);
  if (it != mapped_.end()) return it->second;
  ipc_pointer p;
  std::memcpy(p.bytes, bytes.data(), bytes.size());
  void* ptr = pool_->import_pointer(p);
  mapped_.emplace(bytes, ptr);
  return ptr;
}

void imported_fields::release() noexcept {
  for (auto& [bytes, ptr] : mapped_) pool_->close_imported_pointer(ptr);
  mapped_.clear();
}

namespace {

// What one rank tells an IPC neighbour at setup: the events it records.
struct event_handles {
  event_ipc_handle free;
  event_ipc_handle written[3];
};

}  // namespace

ipc_handshake_transport::ipc_handshake_transport(std::vector<halo_link> links, MPI_Comm comm,
                                                 backend_kind backend, memory_pool& pool,
                                                 std::map<int, imported_fields> peers)
    : links_(std::move(links)),
      state_(links_.size()),
      comm_(comm),
      backend_(backend),
      pool_(&pool),
      peers_(std::move(peers)) {
  if (backend_ == backend_kind::cuda) exchange_events();
}

// CUDA: each rank records "my ghosts are free" and, per axis, "I wrote your ghosts" in
// interprocess events; its IPC neighbours import them once, here.
void ipc_handshake_transport::exchange_events() {
  free_event_.emplace(backend_, event_flags::interprocess);
  event_handles mine{};
  mine.free = free_event_->export_ipc();
  for (int axis = 0; axis < 3; ++axis) {
    written_events_[static_cast<std::size_t>(axis)].emplace(backend_, event_flags::interprocess);
    mine.written[axis] = written_events_[static_cast<std::size_t>(axis)]->export_ipc();
  }
  const std::vector<event_handles> theirs =
      swap_setup_messages(comm_, links_, mine, "IPC event handles");
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    peer_events& peer = peer_events_[l.path.rank];
    if (!peer.free) peer.free.emplace(event::import_ipc(theirs[i].free));
    auto& written = peer.written[static_cast<std::size_t>(l.path.axis)];
    if (!written) written.emplace(event::import_ipc(theirs[i].written[l.path.axis]));
  }
}

// The neighbours' "free" messages carry the fields they want written this exchange.
void ipc_handshake_transport::begin(const exchange_step& step) {
  if (backend_ == backend_kind::cuda) free_event_->record(step.stream);
  if (exported_field_ != step.field) {
    const ipc_pointer p = pool_->export_pointer(step.field);
    std::memcpy(my_export_.field.data(), p.bytes, my_export_.field.size());
    for (int a = 0; a < 3; ++a) my_export_.interior[a] = step.layout->interior[a];
    my_export_.halo = step.layout->halo;
    my_export_.row_align = step.layout->row_align;
    my_export_.element_size = static_cast<std::int64_t>(step.element_size);
    exported_field_ = step.field;
  }
  std::vector<MPI_Request> recvs;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    recvs.emplace_back();
    FUNNEL_MPI_TRY(
        MPI_Irecv(&state_[i].peer_field, static_cast<int>(sizeof(field_message)), MPI_BYTE,
                  l.path.rank, halo_tag(tag_free, l.path.axis, opposite(l.path.where)), comm_,
                  &recvs.back()),
        "halo_exchange: receiving a neighbour's 'ghosts free'");
    sends_.send(&my_export_, sizeof my_export_, l.path.rank,
                halo_tag(tag_free, l.path.axis, l.path.where), comm_);
  }
  FUNNEL_MPI_TRY(MPI_Waitall(static_cast<int>(recvs.size()), recvs.data(), MPI_STATUSES_IGNORE),
                 "halo_exchange: waiting for the neighbours' 'ghosts free'");
  check_peer_fields(step);
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    state_[i].remote_field = peers_.at(l.path.rank).map(state_[i].peer_field.field);
    if (backend_ == backend_kind::cuda) {
      wait_event(step.stream, peer_events_.at(l.path.rank).free->view());
    }
  }
}

// Every IPC neighbour must lay its field out as this rank computed (remote_layout: the strides
// of the writes into it) and hold elements of our size. On a mismatch the sends already posted
// are completed first (their receives are posted), so the exchange can be destroyed cleanly.
void ipc_handshake_transport::check_peer_fields(const exchange_step& step) {
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    const field_message& m = state_[i].peer_field;
    const index3 theirs{m.interior[0], m.interior[1], m.interior[2]};
    if (theirs == l.remote_layout.interior && m.halo == l.remote_layout.halo &&
        m.row_align == l.remote_layout.row_align &&
        m.element_size == static_cast<std::int64_t>(step.element_size)) {
      continue;
    }
    sends_.wait_quietly();
    throw invalid_argument(
        "halo_exchange: rank " + std::to_string(l.path.rank) + " gives its field interior " +
        describe(theirs) + ", halo " + std::to_string(m.halo) + ", row alignment " +
        std::to_string(m.row_align) + " and elements of " + std::to_string(m.element_size) +
        " B; this rank expects interior " + describe(l.remote_layout.interior) + ", halo " +
        std::to_string(l.remote_layout.halo) + ", row alignment " +
        std::to_string(l.remote_layout.row_align) + " and " + std::to_string(step.element_size) +
        " B (do all ranks build the same decomposition and element size?)");
  }
}

void ipc_handshake_transport::post(const exchange_step& step, int axis) {
  if (!has_axis(axis)) return;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    if (l.path.axis != axis) continue;
    step.copy(
        field_block(state_[i].remote_field, l.remote_layout, l.remote_region, step.element_size),
        step.block(l.send_region), l.send_region);
    FUNNEL_MPI_TRY(MPI_Irecv(&state_[i].flag, 1, MPI_BYTE, l.path.rank,
                             halo_tag(tag_written, axis, opposite(l.path.where)), comm_,
                             &state_[i].recv_request),
                   "halo_exchange: receiving a neighbour's 'written'");
  }
  if (backend_ == backend_kind::cuda) {
    written_events_[static_cast<std::size_t>(axis)]->record(step.stream);
  }
  static const unsigned char written = 1;
  for (const auto& l : links_) {
    if (l.path.axis == axis)
      sends_.send(&written, 1, l.path.rank, halo_tag(tag_written, axis, l.path.where), comm_);
  }
}

void ipc_handshake_transport::complete(const exchange_step& step, int axis) {
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    if (l.path.axis != axis || state_[i].recv_request == MPI_REQUEST_NULL) continue;
    FUNNEL_MPI_TRY(MPI_Wait(&state_[i].recv_request, MPI_STATUS_IGNORE),
                   "halo_exchange: waiting for a neighbour's 'written'");
    if (backend_ == backend_kind::cuda) {
      wait_event(step.stream,
                 peer_events_.at(l.path.rank).written[static_cast<std::size_t>(axis)]->view());
    }
  }
}

void ipc_handshake_transport::finish(const exchange_step& /*step*/) { sends_.wait(); }

void ipc_handshake_transport::release() noexcept {
  for (auto& [rank, peer] : peers_) peer.release();
}

}  // namespace funnel::detail
