// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file grid_split.hpp
 * @brief The arithmetic of a Cartesian split, without a communicator (used by
 * cartesian_decomposition, testable for any rank count in one process).
 *
 * Internal (funnel::detail): installed with the public headers, but not part of funnel's API.
 */
#pragma once

#include <array>

#include "funnel/decomposition/box.hpp"

namespace funnel::detail {

/**
 * @brief Checks a split request and fills the 0 entries of `dims`.
 *
 * Axes of one global cell get 1 rank. The others are filled with the factorisation of `ranks`
 * that exchanges the fewest halo cells per box (x-faces, strided in memory, counted twice) and
 * leaves every box >= max(2, halo) cells. Ties go to fewer ranks along x, then to the split whose
 * busiest box exchanges fewer cells (along a non-periodic axis of 2 ranks a box has one
 * neighbour: 4 ranks on a cube split 1x2x2, not 1x1x4), then to splitting the slowest axes
 * (z, then y), whose faces are contiguous: 2 ranks on a cube split z, not x. MPI must be
 * initialised (MPI_Dims_create is the fallback when no split is feasible), but nothing is
 * communicated.
 * @param ranks number of ranks, >= 1
 * @param global_cells cells along x, y, z, each >= 1, product within int64
 * @param halo ghost width, >= 1
 * @param dims ranks along x, y, z (0 = choose)
 * @param periodic whether each axis wraps around (a box then has two neighbours along it)
 * @return the complete, checked dims
 * @throw funnel::invalid_argument naming the bad value and what is allowed (see
 * cartesian_decomposition's constructor for the list)
 */
[[nodiscard]] std::array<int, 3> checked_dims(int ranks, const index3& global_cells, int halo,
                                              std::array<int, 3> dims,
                                              const std::array<bool, 3>& periodic = {});

/**
 * @brief The cells of the ranks at `coords` (the first N % P ranks of an axis take one more).
 * @param global_cells cells along x, y, z
 * @param dims ranks along x, y, z
 * @param coords process-grid coordinates, each in [0, dims[axis])
 * @return the box in global coordinates
 */
[[nodiscard]] box split_box(const index3& global_cells, const std::array<int, 3>& dims,
                            const std::array<int, 3>& coords) noexcept;

}  // namespace funnel::detail
