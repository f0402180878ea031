// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "mpi_transport.hpp"

#include <cstdint>
#include <string>
#include <utility>

#include "funnel/error.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "halo_tags.hpp"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // OpenMPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

namespace funnel::detail {

namespace {

unsigned char* at(void* base, std::size_t offset) {
  return static_cast<unsigned char*>(base) + offset;
}

}  // namespace

bool mpi_is_cuda_aware() noexcept {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  // The run-time answer, not the macro: the library loaded may differ from the headers'.
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

mpi_transport::mpi_transport(std::vector<halo_link> links, MPI_Comm comm, backend_kind backend,
                             memory_pool& pool, std::size_t chunk)
    : links_(std::move(links)), buffers_(links_.size()), comm_(comm) {
  agree_pieces(chunk);
  const stream_view setup = backend == backend_kind::host
                                ? stream_view::host()
                                : stream_view::from_native_handle(nullptr);
  bool device_buffers = false;
  std::size_t pieces_in = 0;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    buffers& b = buffers_[i];
    b.send = device_buffer<unsigned char>(pool, setup, l.bytes);
    b.recv = device_buffer<unsigned char>(pool, setup, l.bytes);
    if (l.path.transport == halo_transport::mpi_staged) {
      b.send_staging.emplace(backend, l.bytes);
      b.recv_staging.emplace(backend, l.bytes);
      b.staged.reserve(b.out.count());
      for (std::size_t k = 0; k < b.out.count(); ++k) b.staged.emplace_back(backend);
    }
    b.receives.assign(b.in.count(), MPI_REQUEST_NULL);
    pieces_in += b.in.count();
    device_buffers = device_buffers || l.path.transport != halo_transport::mpi_host;
  }
  if (device_buffers) idle_.emplace(backend);
  waiting_.reserve(pieces_in);
  requests_.reserve(pieces_in);
  setup.synchronize();
}

// Each rank cuts what it sends by its own chunk size and tells the neighbour across each link,
// which then posts one receive per piece: ranks need not agree on the chunk.
void mpi_transport::agree_pieces(std::size_t chunk) {
  std::vector<std::uint64_t> mine(links_.size());
  std::vector<std::uint64_t> theirs(links_.size());
  std::vector<MPI_Request> requests(2 * links_.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    buffers_[i].out = message_pieces(l.bytes, chunk);
    mine[i] = buffers_[i].out.piece();
    FUNNEL_MPI_TRY(MPI_Irecv(&theirs[i], 1, MPI_UINT64_T, l.path.rank,
                             halo_tag(tag_pieces, l.path.axis, opposite(l.path.where)), comm_,
                             &requests[2 * i]),
                   "halo_exchange: the piece size of rank " + std::to_string(l.path.rank));
    FUNNEL_MPI_TRY(
        MPI_Isend(&mine[i], 1, MPI_UINT64_T, l.path.rank,
                  halo_tag(tag_pieces, l.path.axis, l.path.where), comm_, &requests[2 * i + 1]),
        "halo_exchange: telling rank " + std::to_string(l.path.rank) + " the piece size");
  }
  FUNNEL_MPI_TRY(
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
      "halo_exchange: agreeing on the pieces of the faces");
  for (std::size_t i = 0; i < links_.size(); ++i) {
    FUNNEL_EXPECTS(theirs[i] >= 1 && theirs[i] <= max_mpi_message,
                   "halo_exchange: rank " + std::to_string(links_[i].path.rank) +
                       " sends its face in pieces of " + std::to_string(theirs[i]) +
                       " bytes (1 to " + std::to_string(max_mpi_message) + " allowed)");
    buffers_[i].in = message_pieces(links_[i].bytes, static_cast<std::size_t>(theirs[i]));
  }
}

void mpi_transport::begin(const exchange_step& /*step*/) {
  // MPI writes the receive buffers outside the stream: the last exchange's unpacks must be done.
  if (idle_) idle_->synchronize();
}

void mpi_transport::post(const exchange_step& step, int axis) {
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    if (l.path.axis != axis) continue;
    buffers& b = buffers_[i];
    const halo_transport t = l.path.transport;
    void* landing = t == halo_transport::mpi_staged ? b.recv_staging->data() : b.recv.data();
    const int incoming = halo_tag(tag_data, axis, opposite(l.path.where));
    b.arrived = 0;
    for (std::size_t k = 0; k < b.in.count(); ++k) {
      // One tag for every piece: MPI keeps a sender's messages of one tag in order.
      FUNNEL_MPI_TRY(MPI_Irecv(at(landing, b.in.offset(k)), static_cast<int>(b.in.size(k)),
                               MPI_BYTE, l.path.rank, incoming, comm_, &b.receives[k]),
                     "halo_exchange: receiving a face from rank " + std::to_string(l.path.rank));
    }
    step.copy(dense_block(b.send.data(), l.send_region.extents()), step.block(l.send_region),
              l.send_region);
    if (t == halo_transport::mpi_host) {
      for (std::size_t k = 0; k < b.out.count(); ++k) {
        sends_.send(at(b.send.data(), b.out.offset(k)), b.out.size(k), l.path.rank,
                    halo_tag(tag_data, axis, l.path.where), comm_);
      }
    } else {
      if (t == halo_transport::mpi_staged) {
        for (std::size_t k = 0; k < b.out.count(); ++k) {
          copy_async(step.stream, at(b.send_staging->data(), b.out.offset(k)),
                     at(b.send.data(), b.out.offset(k)), b.out.size(k));
          b.staged[k].record(step.stream);
        }
      }
      b.unsent = true;
    }
  }
}

// The device faces of the axis are sent once the stream has them. This waits on the host, so it
// runs when the faces are needed (complete), not in post: between begin() and finish() the
// caller enqueues its inner update, which then runs while the faces are packed and copied.
void mpi_transport::send_pending(const exchange_step& step, int axis) {
  bool synchronized = false;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    buffers& b = buffers_[i];
    if (l.path.axis != axis || !b.unsent) continue;
    b.unsent = false;
    const int tag = halo_tag(tag_data, axis, l.path.where);
    const bool staged = l.path.transport == halo_transport::mpi_staged;
    // MPI does not follow the stream: wait until the packed faces are really there.
    if (!staged && !synchronized) step.stream.synchronize();
    synchronized = synchronized || !staged;
    void* source = staged ? b.send_staging->data() : b.send.data();
    for (std::size_t k = 0; k < b.out.count(); ++k) {
      // Staged pieces go one by one: a piece's message overlaps the next piece's copy.
      if (staged) b.staged[k].synchronize();
      sends_.send(at(source, b.out.offset(k)), b.out.size(k), l.path.rank, tag, comm_);
    }
  }
}

// Piece `piece` of link `link` has arrived: staged, it goes back to the device at once; the face
// is unpacked into the ghosts when its last piece is in.
void mpi_transport::arrived(const exchange_step& step, std::size_t link, std::size_t piece) {
  const halo_link& l = links_[link];
  buffers& b = buffers_[link];
  if (l.path.transport == halo_transport::mpi_staged) {
    copy_async(step.stream, at(b.recv.data(), b.in.offset(piece)),
               at(b.recv_staging->data(), b.in.offset(piece)), b.in.size(piece));
  }
  if (++b.arrived < b.in.count()) return;
  step.copy(step.block(l.recv_region), dense_block(b.recv.data(), l.recv_region.extents()),
            l.recv_region);
}

// Waits for the axis's incoming pieces in arrival order.
void mpi_transport::complete(const exchange_step& step, int axis) {
  send_pending(step, axis);
  waiting_.clear();
  requests_.clear();
  for (std::size_t i = 0; i < links_.size(); ++i) {
    if (links_[i].path.axis != axis) continue;
    for (std::size_t k = 0; k < buffers_[i].receives.size(); ++k) {
      if (buffers_[i].receives[k] == MPI_REQUEST_NULL) continue;
      waiting_.emplace_back(i, k);
      requests_.push_back(buffers_[i].receives[k]);
    }
  }
  for (std::size_t done = 0; done < requests_.size(); ++done) {
    int index = MPI_UNDEFINED;
    FUNNEL_MPI_TRY(MPI_Waitany(static_cast<int>(requests_.size()), requests_.data(), &index,
                               MPI_STATUS_IGNORE),
                   "halo_exchange: waiting for a face");
    const auto [link, piece] = waiting_[static_cast<std::size_t>(index)];
    buffers_[link].receives[piece] = MPI_REQUEST_NULL;
    arrived(step, link, piece);
  }
}

void mpi_transport::finish(const exchange_step& step) {
  sends_.wait();
  if (idle_) idle_->record(step.stream);
}

}  // namespace funnel::detail
