// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file box.hpp
 * @brief A half-open box of cells in a 3D index space (2D problems use one cell along z).
 */
#pragma once

#include <array>
#include <cstdint>

namespace funnel {

/// @brief Cell index triple (x, y, z); x varies fastest in memory.
using index3 = std::array<std::int64_t, 3>;

/**
 * @brief The cells [lo, hi) along each axis, in global or local coordinates.
 */
struct box {
  index3 lo{0, 0, 0};  ///< first cell along x, y, z
  index3 hi{0, 0, 0};  ///< one past the last cell along x, y, z

  /**
   * @brief Number of cells along one axis.
   * @param axis 0 = x, 1 = y, 2 = z (not checked)
   * @return hi - lo along it; 0 for an inverted box
   */
  [[nodiscard]] constexpr std::int64_t extent(int axis) const noexcept {
    return hi[axis] > lo[axis] ? hi[axis] - lo[axis] : 0;
  }
  /**
   * @brief Cells along every axis.
   * @return extent() along x, y, z
   */
  [[nodiscard]] constexpr index3 extents() const noexcept {
    return {extent(0), extent(1), extent(2)};
  }
  /**
   * @brief Total number of cells.
   * @return the product of the extents; 0 when any axis is empty or inverted
   */
  [[nodiscard]] constexpr std::int64_t cells() const noexcept {
    return extent(0) * extent(1) * extent(2);
  }
  /**
   * @brief Whether the box holds no cell.
   * @return cells() == 0
   */
  [[nodiscard]] constexpr bool empty() const noexcept { return cells() == 0; }
  /**
   * @brief Whether two boxes have the same corners (two empty boxes may differ).
   * @param a one box
   * @param b the other box
   * @return true when lo and hi are equal
   */
  friend constexpr bool operator==(const box& a, const box& b) noexcept {
    // Element-wise: std::array's == is not constexpr before C++20.
    for (int axis = 0; axis < 3; ++axis) {
      if (a.lo[axis] != b.lo[axis] || a.hi[axis] != b.hi[axis]) return false;
    }
    return true;
  }
  /**
   * @brief Negation of ==.
   * @param a one box
   * @param b the other box
   * @return true when a corner differs
   */
  friend constexpr bool operator!=(const box& a, const box& b) noexcept { return !(a == b); }
};

}  // namespace funnel
