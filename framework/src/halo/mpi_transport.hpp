// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: ghosts travel as MPI messages: faces packed into pool buffers, sent with
// MPI_Isend/MPI_Irecv and unpacked. Host backend: host buffers (mpi_host). CUDA backend: the
// device buffers go to MPI directly when the library is CUDA-aware and the pool is exportable
// (mpi_cuda_aware), else they are staged through pinned host buffers (mpi_staged), each face's
// copies overlapping the other faces' messages. Device faces are sent when complete() needs them,
// so the caller's work enqueued between begin() and finish() overlaps their packing and copies.
#pragma once

#include <mpi.h>

#include <optional>
#include <vector>

#include "funnel/memory/device_buffer.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "funnel/runtime/event.hpp"
#include "funnel/runtime/pinned_buffer.hpp"
#include "halo_link.hpp"
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
   */
  mpi_transport(std::vector<halo_link> links, MPI_Comm comm, backend_kind backend,
                memory_pool& pool);

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
    std::optional<event> staged;  // mpi_staged: the face's device-to-host copy is done
    MPI_Request recv_request = MPI_REQUEST_NULL;
    bool unsent = false;  // staged / CUDA-aware: posted, its message not sent yet
  };

  void send_pending(const exchange_step& step, int axis);

  std::vector<halo_link> links_;
  std::vector<buffers> buffers_;  // one per link
  MPI_Comm comm_;
  pending_sends sends_;
  std::optional<event> idle_;  // staged / CUDA-aware: the last exchange's unpacks are done
};

}  // namespace funnel::detail
