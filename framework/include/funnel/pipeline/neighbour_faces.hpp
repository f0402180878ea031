// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file neighbour_faces.hpp
 * @brief Which faces of a rank's box have a neighbour whose values fill that side's halo.
 */
#pragma once

#include <array>

namespace funnel {

/**
 * @brief Marks the faces of a rank's local box whose halo is refreshed by the halo exchange.
 *
 * A face without a neighbour is a physical boundary: its halo holds boundary values that the
 * stencil reads but never writes. A face with a neighbour (or a periodic wrap) holds copies of the
 * neighbour's cells; with k steps per pass those copies go stale after the first step, so the
 * pipeline recomputes them redundantly, which needs a halo at least k·h deep.
 */
struct neighbour_faces {
  /// `open[axis][side]` (side 0 = low, 1 = high): true when a neighbour fills that halo.
  std::array<std::array<bool, 2>, 3> open{};

  /**
   * @brief No neighbour on any face: a single rank, all physical boundaries.
   * @return every face closed
   */
  [[nodiscard]] static constexpr neighbour_faces none() noexcept { return {}; }
  /**
   * @brief Whether one face has a neighbour.
   * @param axis 0 x, 1 y, 2 z (unchecked)
   * @param side 0 low, 1 high (unchecked)
   * @return open[axis][side]
   */
  [[nodiscard]] constexpr bool has(int axis, int side) const noexcept { return open[axis][side]; }
  /**
   * @brief Whether any face has a neighbour.
   * @return true when a halo is refreshed by the exchange (the pipeline must recompute it)
   */
  [[nodiscard]] constexpr bool any() const noexcept {
    for (const auto& sides : open) {
      if (sides[0] || sides[1]) return true;
    }
    return false;
  }
};

}  // namespace funnel
