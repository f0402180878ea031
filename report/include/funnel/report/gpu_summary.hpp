// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file gpu_summary.hpp
 * @brief One GPU's figures: busy fraction, ranks at once, the ranks' GPU times, the verdict.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "funnel/report/verdict.hpp"

namespace funnel::report {

/// @brief GPU time CUPTI's tracing takes per kernel, copy or memset, as measured on an H200 under
/// MPS (docs/report.md, Cost): the report's estimate of its own cost.
inline constexpr double tracing_cost_per_record_s = 0.3e-6;
/// @brief From this estimated share of the job's wall time the report states its own cost.
inline constexpr double tracing_cost_shown_from = 0.01;

/**
 * @brief The figures of one GPU over the job's wall window (docs/report.md defines each).
 */
struct gpu_summary {
  /// @brief One rank's share of this GPU.
  struct rank_share {
    std::string label;                 ///< the rank, as rank_summary::label
    double gpu_s = 0;                  ///< union of its kernels and copies on this GPU
    double kernel_s = 0;               ///< union of its kernels on this GPU
    double copy_s = 0;                 ///< union of its copies on this GPU
    bool ended_early = false;          ///< its record(s) lack the end marker
    std::uint64_t traced_records = 0;  ///< its kernels, copies and memsets traced on this GPU
  };
  /// @brief Min, max, mean and coefficient of variation of the ranks' gpu_s.
  struct spread {
    double min_s = 0;      ///< smallest gpu_s
    double max_s = 0;      ///< largest gpu_s
    double mean_s = 0;     ///< mean gpu_s
    double cv = 0;         ///< population standard deviation / mean (0 when the mean is 0)
    std::string min_rank;  ///< the rank with min_s
    std::string max_rank;  ///< the rank with max_s
  };

  std::string uuid;                 ///< "GPU-..." or "unknown" (ranks whose GPU no record names)
  std::string name;                 ///< e.g. "NVIDIA H200"; "" when unknown
  int index = -1;                   ///< nvidia-smi index as funnel-run saw it; -1 when unknown
  std::string mps;                  ///< "on", "off" or "unknown"
  std::vector<rank_share> ranks;    ///< ranks that used the GPU, by rank
  double wall_s = 0;                ///< the job's wall window
  double busy_s = 0;                ///< the union of every rank's kernels and copies on the GPU
  double busy_fraction = 0;         ///< busy_s / wall_s
  double kernel_busy_fraction = 0;  ///< the union of kernels only / wall_s
  double copy_busy_fraction = 0;    ///< the union of copies only / wall_s
  /// Time-weighted mean, over the busy time, of the number of ranks with work in flight (their
  /// spans overlapping): sum of the ranks' gpu_s / busy_s.
  double ranks_in_flight = 0;
  /// The same for kernels alone: sum of kernel_s / the kernel union.
  double kernel_ranks_in_flight = 0;
  int max_ranks_in_flight = 0;  ///< the most ranks with work in flight at one instant
  /// Time-weighted mean of the number of ranks with work running. With MPS on or unknown, the
  /// spans are the running work: ranks_in_flight. With MPS off the GPU runs one context at a
  /// time, so 1 whenever busy: a time-sliced span also covers the time its context was
  /// switched out.
  double ranks_at_once = 0;
  double kernel_ranks_at_once = 0;  ///< the same for kernels alone
  int max_ranks_at_once = 0;        ///< the most ranks with work running at one instant
  /// Seconds during which exactly k ranks had work running, k = 0..ranks (k = 0: idle).
  std::vector<double> time_at_count_s;
  spread rank_spread;                          ///< over ranks (gpu_s)
  double timeline_bin_s = 0;                   ///< width of a timeline bin
  std::vector<double> timeline_busy;           ///< per bin: busy fraction of the bin
  std::vector<double> timeline_ranks_at_once;  ///< per bin: mean ranks with work running
  verdict outcome;                             ///< what the figures mean

  /// @brief Kernels, copies and memsets traced on this GPU, all ranks (a graph launch counts
  /// once when graphs are traced whole); 0 when the records hold no counts (a producer without
  /// CUPTI).
  [[nodiscard]] std::uint64_t traced_records() const noexcept {
    std::uint64_t sum = 0;
    for (const rank_share& r : ranks) sum += r.traced_records;
    return sum;
  }
  /// @brief traced_records() / wall_s (0 for an empty window).
  [[nodiscard]] double traced_per_s() const noexcept {
    return wall_s > 0 ? static_cast<double>(traced_records()) / wall_s : 0.0;
  }
  /// @brief What tracing is estimated to have added to the job: traced_records() times
  /// tracing_cost_per_record_s (the GPU does each record's timestamps for one client at a time).
  [[nodiscard]] double tracing_cost_s() const noexcept {
    return static_cast<double>(traced_records()) * tracing_cost_per_record_s;
  }
  /// @brief tracing_cost_s() / wall_s (0 for an empty window).
  [[nodiscard]] double tracing_cost_fraction() const noexcept {
    return wall_s > 0 ? tracing_cost_s() / wall_s : 0.0;
  }
};

}  // namespace funnel::report
