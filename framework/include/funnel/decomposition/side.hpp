// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file side.hpp
 * @brief The two sides of a box along one axis.
 */
#pragma once

namespace funnel {

/// @brief The lower (towards index 0) or upper side of a box along one axis.
enum class side { lower = 0, upper = 1 };

/// @brief The other side.
[[nodiscard]] constexpr side opposite(side s) noexcept {
  return s == side::lower ? side::upper : side::lower;
}

}  // namespace funnel
