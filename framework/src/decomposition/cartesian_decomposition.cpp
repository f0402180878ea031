// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/decomposition/cartesian_decomposition.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "funnel/decomposition/detail/grid_split.hpp"
#include "funnel/decomposition/detail/placement.hpp"
#include "funnel/error.hpp"

namespace funnel {
namespace {

void check_axis(int axis) {
  FUNNEL_EXPECTS(axis >= 0 && axis < 3,
                 "axis " + std::to_string(axis) + " is not 0 (x), 1 (y) or 2 (z)");
}

}  // namespace

cartesian_decomposition::cartesian_decomposition(MPI_Comm comm, index3 global_cells, int halo,
                                                 std::array<int, 3> dims,
                                                 std::array<bool, 3> periodic,
                                                 std::vector<int> placement)
    : periodic_(periodic), global_(global_cells), halo_(halo) {
  FUNNEL_EXPECTS(comm != MPI_COMM_NULL, "the communicator is MPI_COMM_NULL");
  int ranks = 0;
  FUNNEL_MPI_TRY(MPI_Comm_size(comm, &ranks), "cartesian_decomposition");
  dims_ = detail::checked_dims(ranks, global_cells, halo, dims, periodic);
  if (!placement.empty()) {
    detail::check_placement(placement, ranks);
    FUNNEL_MPI_TRY(MPI_Comm_dup(comm, &comm_), "cartesian_decomposition");
    try {
      FUNNEL_MPI_TRY(MPI_Comm_rank(comm_, &rank_), "cartesian_decomposition");
      size_ = ranks;
      // Ranks that disagree would name each other as neighbours that are not: refuse on all.
      std::uint64_t digest[2] = {detail::placement_digest(placement), 0};
      digest[1] = ~digest[0];
      FUNNEL_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, digest, 2, MPI_UINT64_T, MPI_MIN, comm_),
                     "cartesian_decomposition");
      FUNNEL_EXPECTS(digest[0] == ~digest[1],
                     "the ranks gave different placements (each must give the same one)");
      place(std::move(placement));
    } catch (...) {
      free_comm();
      throw;
    }
    local_ = detail::split_box(global_, dims_, coords_);
    return;
  }

  const std::array<int, 3> wrap{periodic[0] ? 1 : 0, periodic[1] ? 1 : 0, periodic[2] ? 1 : 0};
  FUNNEL_MPI_TRY(MPI_Cart_create(comm, 3, dims_.data(), wrap.data(), /*reorder=*/0, &comm_),
                 "creating the Cartesian communicator");
  try {
    FUNNEL_MPI_TRY(MPI_Comm_rank(comm_, &rank_), "cartesian_decomposition");
    FUNNEL_MPI_TRY(MPI_Comm_size(comm_, &size_), "cartesian_decomposition");
    FUNNEL_MPI_TRY(MPI_Cart_coords(comm_, rank_, 3, coords_.data()), "cartesian_decomposition");
    for (int axis = 0; axis < 3; ++axis) {
      FUNNEL_MPI_TRY(MPI_Cart_shift(comm_, axis, 1, &neighbors_[axis][0], &neighbors_[axis][1]),
                     "finding the neighbours");
    }
  } catch (...) {
    free_comm();
    throw;
  }
  local_ = detail::split_box(global_, dims_, coords_);
}

// Coordinates and neighbours from the placement. Positions count x fastest, so consecutive
// entries fill the grid slab by slab across z (y in 2D), whose faces are contiguous in memory.
void cartesian_decomposition::place(std::vector<int> placement) {
  placement_ = std::move(placement);
  position_.assign(placement_.size(), 0);
  for (std::size_t p = 0; p < placement_.size(); ++p) {
    position_[static_cast<std::size_t>(placement_[p])] = static_cast<int>(p);
  }
  coords_ = coords_at(position_[static_cast<std::size_t>(rank_)]);
  for (int axis = 0; axis < 3; ++axis) {
    for (const int step : {-1, 1}) {
      std::array<int, 3> c = coords_;
      c[axis] += step;
      int& neighbour = neighbors_[axis][step < 0 ? 0 : 1];
      if (c[axis] < 0 || c[axis] >= dims_[axis]) {
        if (!periodic_[axis]) {
          neighbour = MPI_PROC_NULL;
          continue;
        }
        c[axis] = (c[axis] + dims_[axis]) % dims_[axis];
      }
      const int position = (c[2] * dims_[1] + c[1]) * dims_[0] + c[0];  // < size_: no overflow
      neighbour = placement_[static_cast<std::size_t>(position)];
    }
  }
}

std::array<int, 3> cartesian_decomposition::coords_at(int position) const noexcept {
  return {position % dims_[0], (position / dims_[0]) % dims_[1], position / (dims_[0] * dims_[1])};
}

cartesian_decomposition::~cartesian_decomposition() { free_comm(); }

cartesian_decomposition::cartesian_decomposition(cartesian_decomposition&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      rank_(other.rank_),
      size_(other.size_),
      dims_(other.dims_),
      periodic_(other.periodic_),
      coords_(other.coords_),
      global_(other.global_),
      halo_(other.halo_),
      row_align_(other.row_align_),
      local_(other.local_),
      neighbors_(other.neighbors_),
      placement_(std::move(other.placement_)),
      position_(std::move(other.position_)) {}

cartesian_decomposition& cartesian_decomposition::operator=(
    cartesian_decomposition&& other) noexcept {
  if (this != &other) {
    free_comm();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    rank_ = other.rank_;
    size_ = other.size_;
    dims_ = other.dims_;
    periodic_ = other.periodic_;
    coords_ = other.coords_;
    global_ = other.global_;
    halo_ = other.halo_;
    row_align_ = other.row_align_;
    local_ = other.local_;
    neighbors_ = other.neighbors_;
    placement_ = std::move(other.placement_);
    position_ = std::move(other.position_);
  }
  return *this;
}

void cartesian_decomposition::free_comm() noexcept {
  if (comm_ == MPI_COMM_NULL) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  // After MPI_Finalize the communicator is gone with MPI; freeing it would be an error.
  if (finalized == 0) {
    const int rc = MPI_Comm_free(&comm_);
    if (rc != MPI_SUCCESS) {
      detail::log_error("MPI_Comm_free of the Cartesian communicator failed with code " +
                        std::to_string(rc));
    }
  }
  comm_ = MPI_COMM_NULL;
}

void cartesian_decomposition::set_row_align(int cells) {
  FUNNEL_EXPECTS(valid_row_align(cells), "cartesian_decomposition: row alignment " +
                                             std::to_string(cells) +
                                             " cells; it must be a power of two >= 1");
  row_align_ = cells;
}

field_layout cartesian_decomposition::layout_of(const box& interior) const noexcept {
  return field_layout{interior.extents(), halo_, row_align_};
}

int cartesian_decomposition::neighbor(int axis, side s) const {
  check_axis(axis);
  return neighbors_[axis][static_cast<int>(s)];
}

std::array<int, 3> cartesian_decomposition::coords_of(int rank) const {
  FUNNEL_EXPECTS(rank >= 0 && rank < size_, "rank " + std::to_string(rank) +
                                                " is outside the communicator's [0, " +
                                                std::to_string(size_) + ")");
  if (!position_.empty()) return coords_at(position_[static_cast<std::size_t>(rank)]);
  std::array<int, 3> coords{};
  FUNNEL_MPI_TRY(MPI_Cart_coords(comm_, rank, 3, coords.data()), "coords_of");
  return coords;
}

box cartesian_decomposition::box_of(int rank) const { return box_at(coords_of(rank)); }

box cartesian_decomposition::box_at(const std::array<int, 3>& coords) const {
  for (int axis = 0; axis < 3; ++axis) {
    FUNNEL_EXPECTS(coords[axis] >= 0 && coords[axis] < dims_[axis],
                   "process coordinate " + std::to_string(coords[axis]) + " along axis " +
                       std::to_string(axis) + " is outside [0, " + std::to_string(dims_[axis]) +
                       ")");
  }
  return detail::split_box(global_, dims_, coords);
}

}  // namespace funnel
