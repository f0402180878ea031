// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file grid_block.hpp
 * @brief One rank's block of a global grid and how it sits in the rank's memory.
 */
#pragma once

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"

namespace funnel::io {

/**
 * @brief Where a rank's field lives in the global grid and in its own array.
 *
 * Files hold the whole grid as one array of `global_cells`, stored [z][y][x] (x fastest), so
 * h5py reads it as (nz, ny, nx), or (ny, nx) when nz == 1. A rank contributes (or receives)
 * the cells of `local_box`, taken from (or put into) the interior of its array laid out by
 * `layout`; halo cells are never read or written.
 */
struct grid_block {
  index3 global_cells{1, 1, 1};  ///< cells of the whole grid along x, y, z
  box local_box;                 ///< this rank's cells, in global coordinates (may be empty)
  field_layout layout;           ///< the rank's array; layout.interior == local_box.extents()
};

/**
 * @brief Checks that a block is consistent: positive global extents, the box inside the grid,
 * and the layout's interior equal to the box's extents.
 * @param block the block to check
 * @throw funnel::invalid_argument naming the offending values
 */
void validate(const grid_block& block);

}  // namespace funnel::io
