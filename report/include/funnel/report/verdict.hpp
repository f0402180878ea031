// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file verdict.hpp
 * @brief The rules that turn one GPU's figures into a sentence: did sharing pay?
 */
#pragma once

#include <string>

namespace funnel::report {

struct gpu_summary;

/// @brief Below this busy fraction the GPU counts as idle much of the job.
inline constexpr double idle_busy_fraction = 0.5;
/// @brief From this many ranks' kernels at once (time-weighted mean) ranks count as running
/// concurrently.
inline constexpr double concurrent_ranks = 1.5;
/// @brief From this share of the GPU's busy time covered by its busiest rank alone, the other
/// ranks add next to nothing on the GPU.
inline constexpr double dominant_share = 0.9;

/**
 * @brief Which rule spoke. The rules are tried in this order; the first that holds decides
 * (n: ranks on the GPU, b: busy fraction, k: kernel_ranks_at_once, m: ranks_in_flight,
 * d: the busiest rank's GPU time / the GPU's busy time):
 */
enum class verdict_rule {
  no_work,           ///< no busy time recorded
  single_rank,       ///< n = 1
  one_rank_enough,   ///< n >= 2, d >= dominant_share and m < concurrent_ranks
  mps_concurrent,    ///< MPS on and k >= concurrent_ranks
  mps_serial,        ///< MPS on and k < concurrent_ranks
  time_sliced_idle,  ///< MPS off or unknown, b < idle_busy_fraction
  time_sliced_busy,  ///< MPS off or unknown, b >= idle_busy_fraction
};

/**
 * @brief The rule's name in report.json.
 * @param rule a rule
 * @return e.g. "mps_concurrent"
 */
[[nodiscard]] const char* to_string(verdict_rule rule) noexcept;

/// @brief The rule that decided and its sentence.
struct verdict {
  verdict_rule rule = verdict_rule::no_work;  ///< the first rule that held
  std::string text;                           ///< the sentence, e.g. "MPS let 6.2 ranks' ..."
};

/**
 * @brief Applies the rules (see verdict_rule) to one GPU's figures.
 * @param gpu figures as merge_records() computes them (ranks, mps, busy_fraction,
 *        ranks_in_flight, kernel_ranks_at_once, kernel_ranks_in_flight, busy_s and the
 *        ranks' gpu_s are read)
 * @return the verdict
 */
[[nodiscard]] verdict decide_verdict(const gpu_summary& gpu);

}  // namespace funnel::report
