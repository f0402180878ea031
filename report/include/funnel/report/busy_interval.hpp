// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file busy_interval.hpp
 * @brief One span of time in which a rank had work running on a GPU.
 */
#pragma once

#include <cstdint>

namespace funnel::report {

/// @brief The half-open span [start_ns, end_ns) of one clock, in nanoseconds.
struct busy_interval {
  std::int64_t start_ns = 0;  ///< first nanosecond of the span
  std::int64_t end_ns = 0;    ///< first nanosecond after it

  /**
   * @brief The span's length.
   * @return end_ns - start_ns, or 0 for an empty or reversed span
   */
  [[nodiscard]] constexpr std::int64_t length_ns() const noexcept {
    return end_ns > start_ns ? end_ns - start_ns : 0;
  }

  /// @brief Equal when both ends are.
  friend constexpr bool operator==(const busy_interval& a, const busy_interval& b) noexcept {
    return a.start_ns == b.start_ns && a.end_ns == b.end_ns;
  }
  /// @brief Not equal when either end differs.
  friend constexpr bool operator!=(const busy_interval& a, const busy_interval& b) noexcept {
    return !(a == b);
  }
};

}  // namespace funnel::report
