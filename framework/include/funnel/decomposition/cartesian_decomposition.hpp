// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file cartesian_decomposition.hpp
 * @brief A global grid split across the ranks of an MPI communicator (MPI_Cart_create).
 */
#pragma once

#include <mpi.h>

#include <array>
#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/decomposition/side.hpp"

namespace funnel {

/**
 * @brief A Cartesian split of a global grid of cells into one box per rank.
 *
 * Collective construction over `comm`: the process grid `dims` (chosen by funnel where an
 * entry is 0: fewest halo cells, slow axes first; an axis of one global cell always gets 1
 * rank) becomes a communicator this object owns (Cartesian unless a placement is given). Along an
 * axis of N cells and P ranks, rank coordinate c owns N / P cells, plus one when c < N % P (the
 * first ranks take the remainder), starting at c * (N / P) + min(c, N % P).
 *
 * Ranks keep their numbers: the communicator's rank of a process equals its rank in `comm`, so
 * the caller's rank-to-GPU binding, its logs and its I/O need no translation. Which box a rank
 * takes is the `placement`'s choice: without one rank r takes the r-th box counting z fastest,
 * as MPI_Cart_create with `reorder = 0` places them. A placement lists the ranks in the order
 * they take the boxes counting x fastest, so that consecutive entries fill slabs across z (y
 * in 2D), whose faces are contiguous in memory. placement_by_device() gives such an order,
 * which keeps the ranks of one GPU together whatever the launcher's binding.
 *
 * Every check is made from arguments all ranks must agree on, before any communication, so a
 * bad request throws on every rank and none hangs.
 *
 * Move-only; the Cartesian communicator is freed (MPI_Comm_free) by the destructor when MPI
 * is still initialised.
 */
class cartesian_decomposition {
 public:
  /**
   * @brief Splits `global_cells` across the ranks of `comm` (collective).
   * @param comm the ranks to split over (not freed; may be MPI_COMM_WORLD)
   * @param global_cells cells along x, y, z; each >= 1 (a 2D problem has z = 1)
   * @param halo ghost width, >= 1; no local extent of an axis that has ghosts may be smaller
   * @param dims ranks along x, y, z; 0 entries are chosen by funnel (fewest halo cells; on ties
   * fewest ranks along x, then the busiest box's cells, then slow axes first; see
   * detail::checked_dims)
   * @param periodic whether each axis wraps around (its edge ranks are then neighbours)
   * @param placement empty (rank r takes the r-th box, z fastest), or every rank of `comm` once,
   * in the order they take the boxes counting x fastest; the same on every rank
   * @throw funnel::invalid_argument for MPI_COMM_NULL, a placement that is not every rank once, a
   * non-positive cell count or halo, a cell count whose product overflows 64 bits, negative dims,
   * dims whose product is not (or whose fixed entries do not divide) the rank count, more ranks
   * than cells along an axis, ranks along an axis of one cell, a local extent of 1 on an axis that
   * has more cells (the field layout would drop its ghosts), or a halo wider than the smallest
   * local extent
   * @throw funnel::mpi_error when an MPI call fails
   */
  cartesian_decomposition(MPI_Comm comm, index3 global_cells, int halo,
                          std::array<int, 3> dims = {0, 0, 0},
                          std::array<bool, 3> periodic = {false, false, false},
                          std::vector<int> placement = {});
  /// @brief Frees the communicator (errors are logged, never thrown).
  ~cartesian_decomposition();
  cartesian_decomposition(const cartesian_decomposition&) = delete;
  cartesian_decomposition& operator=(const cartesian_decomposition&) = delete;
  /**
   * @brief Takes over `other`'s communicator.
   * @param other the decomposition to take; may then only be destroyed or assigned to
   */
  cartesian_decomposition(cartesian_decomposition&& other) noexcept;
  /**
   * @brief Frees the held communicator, then takes over `other`'s.
   * @param other the decomposition to take; may then only be destroyed or assigned to
   * @return this decomposition
   */
  cartesian_decomposition& operator=(cartesian_decomposition&& other) noexcept;

  /**
   * @brief The communicator, for the caller's own communication over the grid: Cartesian
   * (MPI_Cart_shift and MPI_Cart_coords agree with neighbor() and coords()) without a
   * placement, a duplicate of `comm` with one (then ask neighbor() and coords_of()).
   * @return the communicator, owned by this object (do not free it); MPI_COMM_NULL after a move
   */
  [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }
  /**
   * @brief This process's rank.
   * @return its rank in comm(), equal to its rank in the constructor's `comm`
   */
  [[nodiscard]] int rank() const noexcept { return rank_; }
  /**
   * @brief Number of ranks.
   * @return the size of comm()
   */
  [[nodiscard]] int size() const noexcept { return size_; }
  /**
   * @brief The process grid.
   * @return ranks along x, y, z (0 entries of the request filled in)
   */
  [[nodiscard]] const std::array<int, 3>& dims() const noexcept { return dims_; }
  /**
   * @brief Whether each axis wraps around.
   * @return the `periodic` given at construction, per axis
   */
  [[nodiscard]] const std::array<bool, 3>& periodic() const noexcept { return periodic_; }
  /**
   * @brief This rank's place in the process grid.
   * @return its coordinates along x, y, z, each in [0, dims()[axis])
   */
  [[nodiscard]] const std::array<int, 3>& coords() const noexcept { return coords_; }
  /**
   * @brief Size of the whole grid.
   * @return cells along x, y, z, as given at construction
   */
  [[nodiscard]] const index3& global_cells() const noexcept { return global_; }
  /**
   * @brief Ghost width of the layouts.
   * @return the `halo` given at construction
   */
  [[nodiscard]] int halo() const noexcept { return halo_; }
  /**
   * @brief Row alignment of the layouts this decomposition gives.
   * @return field_layout::row_align, in cells: 1 unless set_row_align() changed it
   */
  [[nodiscard]] int row_align() const noexcept { return row_align_; }
  /**
   * @brief Pads the rows of every layout this decomposition gives (layout(), layout_of()) so
   * that each row's interior starts on a multiple of `cells` elements: for CUDA kernels that
   * load rows as 16-byte vectors, row_align_for(sizeof(T), 16). Not collective, but every rank
   * must set the same value before building fields or a halo exchange (the IPC paths check).
   * @param cells a power of two >= 1 (1: no padding)
   * @throw funnel::invalid_argument for any other value
   */
  void set_row_align(int cells);

  /**
   * @brief This rank's cells.
   * @return the box, in global coordinates (box_of(rank()))
   */
  [[nodiscard]] const box& local_box() const noexcept { return local_; }
  /**
   * @brief Memory layout of this rank's field (its interior plus ghosts).
   * @return layout_of(local_box())
   */
  [[nodiscard]] field_layout layout() const noexcept { return layout_of(local_); }
  /**
   * @brief Memory layout of a field holding `interior`, with this decomposition's halo.
   * @param interior a box, e.g. box_of(r) for another rank's layout
   * @return the layout
   */
  [[nodiscard]] field_layout layout_of(const box& interior) const noexcept;

  /**
   * @brief The neighbouring rank along an axis.
   * @param axis 0 = x, 1 = y, 2 = z
   * @param s which side
   * @return its rank in comm(), this rank itself for a periodic axis of one rank, or
   * MPI_PROC_NULL at a non-periodic edge
   * @throw funnel::invalid_argument for an axis outside 0..2
   */
  [[nodiscard]] int neighbor(int axis, side s) const;

  /**
   * @brief Whether a placement chose the boxes (see the constructor).
   * @return true when the constructor was given a non-empty placement
   */
  [[nodiscard]] bool placed() const noexcept { return !placement_.empty(); }

  /**
   * @brief Process-grid coordinates of any rank.
   * @param rank a rank of comm()
   * @return its coordinates
   * @throw funnel::invalid_argument for a rank outside [0, size())
   */
  [[nodiscard]] std::array<int, 3> coords_of(int rank) const;
  /**
   * @brief The cells of any rank, in global coordinates (for I/O and restart).
   * @param rank a rank of comm()
   * @return its box
   * @throw funnel::invalid_argument for a rank outside [0, size())
   */
  [[nodiscard]] box box_of(int rank) const;
  /**
   * @brief The cells owned by the ranks at process-grid coordinates `coords`.
   * @param coords coordinates, each in [0, dims()[axis])
   * @return the box, in global coordinates
   * @throw funnel::invalid_argument for coordinates outside the process grid
   */
  [[nodiscard]] box box_at(const std::array<int, 3>& coords) const;

 private:
  void free_comm() noexcept;
  void place(std::vector<int> placement);
  [[nodiscard]] std::array<int, 3> coords_at(int position) const noexcept;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 0;
  std::array<int, 3> dims_{1, 1, 1};
  std::array<bool, 3> periodic_{false, false, false};
  std::array<int, 3> coords_{0, 0, 0};
  index3 global_{1, 1, 1};
  int halo_ = 1;
  int row_align_ = 1;
  box local_{};
  std::array<std::array<int, 2>, 3> neighbors_{};
  std::vector<int> placement_;  // the rank at each position (empty: the identity)
  std::vector<int> position_;   // the position of each rank (empty: the identity)
};

}  // namespace funnel
