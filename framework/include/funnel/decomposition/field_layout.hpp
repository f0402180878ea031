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
 * @brief How a rank's local field is laid out in memory.
 *
 * The array holds `interior` cells plus `halo` ghost cells on both sides of every axis whose
 * interior extent is larger than one (a 2D problem has nz = 1 and no z halo). x is fastest:
 * element (i, j, k) of the *allocated* array, each counted from 0 at the lower halo edge, is at
 * `(k * ny + j) * nx + i` where nx, ny, nz are the allocated extents. Every kernel, the halo
 * exchange, the pipeline and the I/O use this one layout.
 */
struct field_layout {
  index3 interior{1, 1, 1};  ///< interior cells along x, y, z (no halo)
  int halo = 1;              ///< ghost cells on each side of each axis that has them

  /// @brief Ghost width along `axis`: `halo`, or 0 for an axis of one interior cell.
  [[nodiscard]] constexpr std::int64_t halo_along(int axis) const noexcept {
    return interior[axis] > 1 ? halo : 0;
  }
  /// @brief Allocated extent along `axis` (interior + 2 ghosts).
  [[nodiscard]] constexpr std::int64_t allocated(int axis) const noexcept {
    return interior[axis] + 2 * halo_along(axis);
  }
  /// @brief Allocated cells (the array length).
  [[nodiscard]] constexpr std::int64_t allocated_cells() const noexcept {
    return allocated(0) * allocated(1) * allocated(2);
  }
  /// @brief Linear index of allocated-array cell (i, j, k).
  [[nodiscard]] constexpr std::int64_t index(std::int64_t i, std::int64_t j,
                                             std::int64_t k) const noexcept {
    return (k * allocated(1) + j) * allocated(0) + i;
  }
  /// @brief The interior as a box in allocated-array coordinates.
  [[nodiscard]] constexpr box interior_box() const noexcept {
    return box{
        {halo_along(0), halo_along(1), halo_along(2)},
        {halo_along(0) + interior[0], halo_along(1) + interior[1], halo_along(2) + interior[2]}};
  }
};

}  // namespace funnel
