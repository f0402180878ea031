// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file side.hpp
 * @brief The two sides of a box along one axis.
 */
#pragma once

namespace funnel {

/// @brief The lower or upper side of a box along one axis.
enum class side {
  lower = 0,  ///< towards index 0
  upper = 1   ///< towards higher indices
};

/**
 * @brief The other side.
 * @param s a side
 * @return upper for lower, lower for upper
 */
[[nodiscard]] constexpr side opposite(side s) noexcept {
  return s == side::lower ? side::upper : side::lower;
}

}  // namespace funnel
