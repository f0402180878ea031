// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file merge_options.hpp
 * @brief What the caller of the merge knows that the records do not.
 */
#pragma once

#include <cstdint>
#include <string>

namespace funnel::report {

/// @brief Inputs of merge_records() besides the records.
struct merge_options {
  /// "on" or "off" as the launcher ran the job, for every GPU; "" takes, per GPU, FUNNEL_MPS
  /// from the records of its ranks (when they agree), else the report says "unknown".
  std::string mps;
  /// The node's ranks; > 0 names the local ranks 0..n-1 that left no record. 0: not known.
  int expected_ranks = 0;
  /// The job's wall window on CLOCK_REALTIME (ns since 1970), e.g. from funnel-run; 0: from the
  /// records (the first process start to the last end or last sign of life).
  std::int64_t job_start_realtime_ns = 0;
  /// End of that window; 0: from the records.
  std::int64_t job_end_realtime_ns = 0;
  /// Bins of the per-GPU timeline in report.json (what report.png draws).
  int timeline_bins = 400;
};

}  // namespace funnel::report
