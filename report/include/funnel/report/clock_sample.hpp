// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file clock_sample.hpp
 * @brief One reading of a record's own clock together with the system's clocks.
 */
#pragma once

#include <cstdint>
#include <functional>

namespace funnel::report {

/**
 * @brief The record's clock (CUPTI's timestamps, or CLOCK_MONOTONIC for a writer without one)
 * read at the same moment as CLOCK_MONOTONIC and CLOCK_REALTIME.
 *
 * Each process's CUPTI clock has its own zero; the merger puts every record on one node-wide
 * clock with `monotonic_ns - record_ns` (records of one boot) or `realtime_ns - record_ns`.
 */
struct clock_sample {
  std::int64_t record_ns = 0;     ///< the record's clock
  std::int64_t monotonic_ns = 0;  ///< CLOCK_MONOTONIC
  std::int64_t realtime_ns = 0;   ///< CLOCK_REALTIME (ns since 1970)

  /**
   * @brief Reads the three clocks. The record clock is read between two readings of
   * CLOCK_MONOTONIC, the narrowest of a few tries is kept, and its middle is taken, so the
   * offset is good to well under a microsecond.
   * @param record_clock reads the record's clock in ns; nullptr: the record's clock is
   *        CLOCK_MONOTONIC
   * @return the sample
   */
  [[nodiscard]] static clock_sample take(const std::function<std::int64_t()>& record_clock);

  /// @brief CLOCK_MONOTONIC now, in ns.
  [[nodiscard]] static std::int64_t monotonic_now() noexcept;
  /// @brief CLOCK_REALTIME now, in ns since 1970.
  [[nodiscard]] static std::int64_t realtime_now() noexcept;
};

}  // namespace funnel::report
