// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: the owner of a communicator a component made (MPI_Comm_dup, MPI_Comm_split_type),
// freed when the owner goes, unless MPI is already finalized.
#pragma once

#include <mpi.h>

#include <utility>

namespace funnel::detail {

class comm_owner {
 public:
  comm_owner() = default;
  explicit comm_owner(MPI_Comm comm) : comm_(comm) {}
  ~comm_owner() { reset(); }
  comm_owner(const comm_owner&) = delete;
  comm_owner& operator=(const comm_owner&) = delete;
  comm_owner(comm_owner&& o) noexcept : comm_(std::exchange(o.comm_, MPI_COMM_NULL)) {}
  comm_owner& operator=(comm_owner&& o) noexcept {
    if (this != &o) {
      reset();
      comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
    }
    return *this;
  }
  [[nodiscard]] MPI_Comm get() const noexcept { return comm_; }
  void reset() noexcept {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && finalized == 0) MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace funnel::detail
