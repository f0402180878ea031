// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file event_flags.hpp
 * @brief Options an event is created with.
 */
#pragma once

namespace funnel {

/// @brief Options of a funnel::event, combined with `|`.
enum class event_flags : unsigned {
  none = 0,    ///< a synchronisation-only event (the cheapest)
  timing = 1,  ///< records time, for event::elapsed_ms
  /// can be exported to another process of the node (CUDA backend only; not with `timing`)
  interprocess = 2
};

/**
 * @brief Union of two flag sets.
 * @param a one set
 * @param b the other set
 * @return the flags set in either
 */
[[nodiscard]] constexpr event_flags operator|(event_flags a, event_flags b) noexcept {
  return static_cast<event_flags>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

/**
 * @brief Intersection of two flag sets.
 * @param a one set
 * @param b the other set
 * @return the flags set in both
 */
[[nodiscard]] constexpr event_flags operator&(event_flags a, event_flags b) noexcept {
  return static_cast<event_flags>(static_cast<unsigned>(a) & static_cast<unsigned>(b));
}

/**
 * @brief True when `flags` contains every flag of `wanted`.
 * @param flags the set to look in
 * @param wanted the flags to look for
 * @return whether all of `wanted` is set in `flags`
 */
[[nodiscard]] constexpr bool has_flags(event_flags flags, event_flags wanted) noexcept {
  return (flags & wanted) == wanted;
}

}  // namespace funnel
