// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: ghosts travel as MPI messages: faces packed into pool buffers, sent with
// MPI_Isend/MPI_Irecv and unpacked. Host backend: host buffers (mpi_host). CUDA backend: the
// device buffers go to MPI directly when the library is CUDA-aware and the pool is exportable
// (mpi_cuda_aware), else they are staged through pinned host buffers (mpi_staged). A face goes in
// pieces of at most the sender's chunk size (message_pieces): on the staged path each piece is
// sent once its copy to the host is done and copied back to the device as soon as it arrives, so
// the copies across PCIe overlap the other pieces' messages. Device faces are sent when
// complete() needs them, so the caller's work enqueued between begin() and finish() overlaps
// their packing and copies.
#pragma once

#include <mpi.h>

#include <optional>
#include <utility>
#include <vector>

#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/event.hpp"
#include "funnel/runtime/pinned_buffer.hpp"
#include "halo_link.hpp"
#include "message_pieces.hpp"
#include "pending_sends.hpp"

namespace funnel::detail {

/// True when the MPI library loaded says it is CUDA-aware (MPIX_Query_cuda_support).
[[nodiscard]] bool mpi_is_cuda_aware() noexcept;

class mpi_transport final : public link_transport {
 public:
  /**
   * @param links the MPI links (their transport says host, staged or CUDA-aware)
   * @param comm the exchange's private communicator (outlives this object)
   * @param backend backend of the fields
   * @param pool the pool the packing buffers come from
   * @param chunk the largest message this rank sends of a face (0: whole faces); each neighbour
   * is told it here, so the constructor is collective over the links' neighbours
   */
  mpi_transport(std::vector<halo_link> links, MPI_Comm comm, backend_kind backend,
                memory_pool& pool, std::size_t chunk);

  [[nodiscard]] const std::vector<halo_link>& links() const noexcept override { return links_; }
  void begin(const exchange_step& step) override;
  void post(const exchange_step& step, int axis) override;
  void complete(const exchange_step& step, int axis) override;
  void finish(const exchange_step& step) override;

 private:
  struct buffers {
    device_buffer<unsigned char> send;  // packed faces (pool memory)
    device_buffer<unsigned char> recv;
    std::optional<pinned_buffer> send_staging;  // mpi_staged
    std::optional<pinned_buffer> recv_staging;
    message_pieces out;                 // how this rank cuts the face it sends
    message_pieces in;                  // how the neighbour cuts the face it sends here
    std::vector<event> staged;          // mpi_staged: per piece out, its copy to the host is done
    std::vector<MPI_Request> receives;  // per piece in
    std::size_t arrived = 0;            // pieces in of this exchange that have arrived
    bool unsent = false;                // staged / CUDA-aware: posted, its messages not sent yet
  };

  void agree_pieces(std::size_t chunk);
  void send_pending(const exchange_step& step, int axis);
  void arrived(const exchange_step& step, std::size_t link, std::size_t piece);

  std::vector<halo_link> links_;
  std::vector<buffers> buffers_;  // one per link
  MPI_Comm comm_;
  pending_sends sends_;
  std::optional<event> idle_;  // staged / CUDA-aware: the last exchange's unpacks are done
  // complete()'s receives still open, as (link, piece) and their requests: kept here so that
  // no exchange allocates (room for every piece in is reserved at set-up).
  std::vector<std::pair<std::size_t, std::size_t>> waiting_;
  std::vector<MPI_Request> requests_;
};

}  // namespace funnel::detail
