// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file concurrency_profile.hpp
 * @brief How many ranks had work running on a GPU, over time.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "funnel/report/busy_interval_set.hpp"

namespace funnel::report {

/**
 * @brief A step function: the number of sets (ranks) covering each instant of a window.
 */
class concurrency_profile {
 public:
  /// @brief One step: [start_ns, end_ns) with `count` ranks' work running.
  struct step {
    std::int64_t start_ns = 0;  ///< first nanosecond
    std::int64_t end_ns = 0;    ///< first nanosecond after
    int count = 0;              ///< ranks with work running
  };

  /**
   * @brief The profile of `ranks` inside [start_ns, end_ns).
   * @param ranks one set per rank (normalized here)
   * @param start_ns the window's start
   * @param end_ns the window's end
   */
  concurrency_profile(std::vector<busy_interval_set> ranks, std::int64_t start_ns,
                      std::int64_t end_ns);

  /// @brief The steps, in order, covering the window without gaps (count 0 where idle).
  [[nodiscard]] const std::vector<step>& steps() const noexcept { return steps_; }

  /**
   * @brief Nanoseconds with exactly k ranks' work running, k = 0..ranks.
   * @return one entry per count
   */
  [[nodiscard]] std::vector<std::int64_t> time_at_count() const;

  /**
   * @brief The profile averaged over consecutive bins, in one pass.
   * @param edges bin edges, ascending: bin i is [edges[i], edges[i + 1])
   * @param busy per bin: the fraction of the bin with at least one rank's work running
   * @param ranks per bin: the mean number of ranks with work running (idle time counts as 0)
   */
  void bin(const std::vector<std::int64_t>& edges, std::vector<double>& busy,
           std::vector<double>& ranks) const;

 private:
  std::vector<step> steps_;
  int ranks_ = 0;
};

}  // namespace funnel::report
