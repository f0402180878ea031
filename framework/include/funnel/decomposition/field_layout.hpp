// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file field_layout.hpp
 * @brief Memory layout of one rank's field: its interior cells surrounded by a halo.
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "funnel/decomposition/box.hpp"

namespace funnel {

/**
 * @brief Whether `cells` can be a field_layout::row_align.
 * @param cells the candidate alignment, in cells
 * @return true for a power of two >= 1
 */
[[nodiscard]] constexpr bool valid_row_align(int cells) noexcept {
  return cells >= 1 && (cells & (cells - 1)) == 0;
}

/**
 * @brief How a rank's local field is laid out in memory.
 *
 * The array holds `interior` cells plus `halo` ghost cells on both sides of every axis whose
 * interior extent is larger than one (a 2D problem has nz = 1 and no z halo). Cells are
 * counted from 0 at the lower halo edge along each axis, x fastest.
 *
 * Rows may be padded (`row_align` > 1): each row of nx = allocated(0) cells then sits in a slot
 * of row_pitch() cells, `lead()` cells after the slot's start, so that every row's first
 * interior cell is at an index that is a multiple of `row_align`. An array aligned for
 * `row_align` elements (every CUDA allocation is) then starts each row's interior on such a
 * boundary, and the one-step CUDA kernels (heat3d_step, jacobi2d_step) load its cells as
 * vectors from the interior's edge (16 bytes:
 * `row_align` = 4 for float, 2 for double: row_align_for). Element (i, j, k) is at
 * `(k * ny + j) * row_pitch() + lead() + i`; with `row_align` = 1 (the default) that is
 * `(k * ny + j) * nx + i`, no padding. Code that computes its own strides takes row_pitch() and
 * plane_pitch() (or index()), never allocated(0). The initial fills set padding to 0; steps,
 * exchanges and I/O never write it, and no stored value is computed from it (a CUDA kernel may
 * load it in a vector whose other cells it needs). Every kernel, the halo exchange and the I/O
 * use this one layout; files hold the interior only, so they do not depend on the padding.
 */
struct field_layout {
  index3 interior{1, 1, 1};  ///< interior cells along x, y, z (no halo)
  int halo = 1;              ///< ghost cells on each side of each axis that has them
  int row_align = 1;         ///< cells each row's interior is aligned to: a power of two, >= 1

  /**
   * @brief Whether `row_align` is usable; every other member assumes it is.
   * @return valid_row_align(row_align)
   */
  [[nodiscard]] constexpr bool row_align_valid() const noexcept {
    return valid_row_align(row_align);
  }
  /**
   * @brief Ghost width along one axis.
   * @param axis 0 = x, 1 = y, 2 = z
   * @return `halo`, or 0 for an axis of one interior cell
   */
  [[nodiscard]] constexpr std::int64_t halo_along(int axis) const noexcept {
    return interior[axis] > 1 ? halo : 0;
  }
  /**
   * @brief Allocated extent along one axis, padding not counted.
   * @param axis 0 = x, 1 = y, 2 = z
   * @return interior cells plus the ghosts on both sides
   */
  [[nodiscard]] constexpr std::int64_t allocated(int axis) const noexcept {
    return interior[axis] + 2 * halo_along(axis);
  }
  /**
   * @brief Padding cells in front of each row.
   * @return the count that puts the row's first interior cell on a multiple of `row_align`
   * (0 without padding)
   */
  [[nodiscard]] constexpr std::int64_t lead() const noexcept {
    return (row_align - halo_along(0) % row_align) % row_align;
  }
  /**
   * @brief Elements between (i, j, k) and (i, j + 1, k).
   * @return lead() + allocated(0), rounded up to a multiple of `row_align`
   */
  [[nodiscard]] constexpr std::int64_t row_pitch() const noexcept {
    return (lead() + allocated(0) + row_align - 1) / row_align * row_align;
  }
  /**
   * @brief Elements between (i, j, k) and (i, j, k + 1).
   * @return row_pitch() * allocated(1)
   */
  [[nodiscard]] constexpr std::int64_t plane_pitch() const noexcept {
    return row_pitch() * allocated(1);
  }
  /**
   * @brief The array's length, what a field with this layout must allocate.
   * @return elements, padding included: plane_pitch() * allocated(2)
   */
  [[nodiscard]] constexpr std::int64_t allocated_cells() const noexcept {
    return plane_pitch() * allocated(2);
  }
  /**
   * @brief Linear index of a cell of the allocated array.
   * @param i x index, from 0 at the lower ghost edge
   * @param j y index, likewise
   * @param k z index, likewise
   * @return the element's offset from the array's start
   */
  [[nodiscard]] constexpr std::int64_t index(std::int64_t i, std::int64_t j,
                                             std::int64_t k) const noexcept {
    return (k * allocated(1) + j) * row_pitch() + lead() + i;
  }
  /**
   * @brief Whether rows are padded (a `row_align` > 1 may still need no padding).
   * @return row_pitch() != allocated(0)
   */
  [[nodiscard]] constexpr bool padded() const noexcept { return row_pitch() != allocated(0); }
  /**
   * @brief The interior in allocated-array coordinates, e.g. for box_copy calls on the field.
   * @return the box [halo_along, halo_along + interior) along each axis
   */
  [[nodiscard]] constexpr box interior_box() const noexcept {
    return box{
        {halo_along(0), halo_along(1), halo_along(2)},
        {halo_along(0) + interior[0], halo_along(1) + interior[1], halo_along(2) + interior[2]}};
  }
};

/**
 * @brief The row alignment, in elements, that puts every row's interior on a `bytes` boundary.
 * @param element_bytes size of one element (4 for float, 8 for double)
 * @param bytes the boundary: 0 or 1 for none (returns 1), else a power of two
 * @return bytes / element_bytes, at least 1
 */
[[nodiscard]] constexpr int row_align_for(std::size_t element_bytes, std::size_t bytes) noexcept {
  return bytes > element_bytes && element_bytes > 0 ? static_cast<int>(bytes / element_bytes) : 1;
}

}  // namespace funnel
