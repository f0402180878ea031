// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "mpi_transport.hpp"

#include <string>
#include <utility>

#include "funnel/error.hpp"
#include "funnel/runtime/stream_operations.hpp"
#include "halo_tags.hpp"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // OpenMPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

namespace funnel::detail {

bool mpi_is_cuda_aware() noexcept {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  // The run-time answer, not the macro: the library loaded may differ from the headers'.
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

mpi_transport::mpi_transport(std::vector<halo_link> links, MPI_Comm comm, backend_kind backend,
                             memory_pool& pool)
    : links_(std::move(links)), buffers_(links_.size()), comm_(comm) {
  const stream_view setup = backend == backend_kind::host
                                ? stream_view::host()
                                : stream_view::from_native_handle(nullptr);
  bool device_buffers = false;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const halo_link& l = links_[i];
    buffers& b = buffers_[i];
    b.send = device_buffer<unsigned char>(pool, setup, l.bytes);
    b.recv = device_buffer<unsigned char>(pool, setup, l.bytes);
    if (l.path.transport == halo_transport::mpi_staged) {
      b.send_staging.emplace(backend, l.bytes);
      b.recv_staging.emplace(backend, l.bytes);
      b.staged.emplace(backend);
    }
    device_buffers = device_buffers || l.path.transport != halo_transport::mpi_host;
  }
  if (device_buffers) idle_.emplace(backend);
  setup.synchronize();
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
    FUNNEL_MPI_TRY(
        MPI_Irecv(landing, static_cast<int>(l.bytes), MPI_BYTE, l.path.rank,
                  halo_tag(tag_data, axis, opposite(l.path.where)), comm_, &b.recv_request),
        "halo_exchange: receiving a face from rank " + std::to_string(l.path.rank));
    step.copy(dense_block(b.send.data(), l.send_region.extents()), step.block(l.send_region),
              l.send_region);
    if (t == halo_transport::mpi_host) {
      sends_.send(b.send.data(), l.bytes, l.path.rank, halo_tag(tag_data, axis, l.path.where),
                  comm_);
    } else {
      if (t == halo_transport::mpi_staged) {
        copy_async(step.stream, b.send_staging->data(), b.send.data(), l.bytes);
        b.staged->record(step.stream);
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
    if (l.path.transport == halo_transport::mpi_staged) {
      // Staged faces go one by one: the first face's message overlaps the second face's copy.
      b.staged->synchronize();
      sends_.send(b.send_staging->data(), l.bytes, l.path.rank, tag, comm_);
    } else {
      // MPI does not follow the stream: wait until the packed faces are really there.
      if (!synchronized) step.stream.synchronize();
      synchronized = true;
      sends_.send(b.send.data(), l.bytes, l.path.rank, tag, comm_);
    }
  }
}

// Waits for the axis's incoming faces in arrival order and unpacks each into the ghosts.
void mpi_transport::complete(const exchange_step& step, int axis) {
  send_pending(step, axis);
  std::vector<std::size_t> waiting;
  std::vector<MPI_Request> requests;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    if (links_[i].path.axis != axis || buffers_[i].recv_request == MPI_REQUEST_NULL) continue;
    waiting.push_back(i);
    requests.push_back(buffers_[i].recv_request);
  }
  for (std::size_t done = 0; done < requests.size(); ++done) {
    int index = MPI_UNDEFINED;
    FUNNEL_MPI_TRY(
        MPI_Waitany(static_cast<int>(requests.size()), requests.data(), &index, MPI_STATUS_IGNORE),
        "halo_exchange: waiting for a face");
    const std::size_t i = waiting[static_cast<std::size_t>(index)];
    const halo_link& l = links_[i];
    buffers& b = buffers_[i];
    b.recv_request = MPI_REQUEST_NULL;
    if (l.path.transport == halo_transport::mpi_staged) {
      copy_async(step.stream, b.recv.data(), b.recv_staging->data(), l.bytes);
    }
    step.copy(step.block(l.recv_region), dense_block(b.recv.data(), l.recv_region.extents()),
              l.recv_region);
  }
}

void mpi_transport::finish(const exchange_step& step) {
  sends_.wait();
  if (idle_) idle_->record(step.stream);
}

}  // namespace funnel::detail
