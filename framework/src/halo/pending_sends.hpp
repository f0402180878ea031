// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: the MPI_Isend requests a transport posts during one exchange, completed at its end.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "funnel/error.hpp"

namespace funnel::detail {

class pending_sends {
 public:
  /// @brief Posts `bytes` bytes of `data` to rank `to` (the data must stay alive until wait()).
  void send(const void* data, std::size_t bytes, int to, int tag, MPI_Comm comm) {
    requests_.emplace_back();
    FUNNEL_MPI_TRY(
        MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, to, tag, comm, &requests_.back()),
        "halo_exchange: sending to rank " + std::to_string(to));
  }
  /// @brief Completes every send posted so far.
  void wait() {
    if (requests_.empty()) return;
    FUNNEL_MPI_TRY(
        MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
        "halo_exchange: completing the sends");
    requests_.clear();
  }
  /// @brief The same before an error is thrown: a failure here is not reported.
  void wait_quietly() noexcept {
    if (requests_.empty()) return;
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    requests_.clear();
  }

 private:
  std::vector<MPI_Request> requests_;
};

}  // namespace funnel::detail
