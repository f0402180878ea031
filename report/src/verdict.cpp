// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/report/verdict.hpp"

#include <algorithm>
#include <cstdio>

#include "funnel/report/gpu_summary.hpp"
#include "funnel/report/report_text.hpp"

namespace funnel::report {
namespace {

std::string one_decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

}  // namespace

const char* to_string(verdict_rule rule) noexcept {
  switch (rule) {
    case verdict_rule::no_work:
      return "no_work";
    case verdict_rule::single_rank:
      return "single_rank";
    case verdict_rule::one_rank_enough:
      return "one_rank_enough";
    case verdict_rule::mps_concurrent:
      return "mps_concurrent";
    case verdict_rule::mps_serial:
      return "mps_serial";
    case verdict_rule::time_sliced_idle:
      return "time_sliced_idle";
    case verdict_rule::time_sliced_busy:
      return "time_sliced_busy";
  }
  return "unknown";
}

verdict decide_verdict(const gpu_summary& gpu) {
  const std::size_t n = gpu.ranks.size();
  const std::string busy = format_percent(gpu.busy_fraction);
  const std::string at_once = one_decimal(gpu.kernel_ranks_at_once);
  double busiest = 0;
  for (const auto& r : gpu.ranks) busiest = std::max(busiest, r.gpu_s);
  const double dominance = gpu.busy_s > 0 ? busiest / gpu.busy_s : 0.0;
  const bool idle = gpu.busy_fraction < idle_busy_fraction;

  if (gpu.busy_s <= 0) return {verdict_rule::no_work, "no GPU work was recorded on this GPU"};
  if (n == 1) {
    return {verdict_rule::single_rank,
            "one rank kept the GPU busy " + busy + " of the job" +
                (idle ? std::string("; more ranks per GPU (with MPS) could use the idle time")
                      : std::string())};
  }
  if (dominance >= dominant_share && gpu.ranks_in_flight < concurrent_ranks) {
    return {verdict_rule::one_rank_enough,
            "one rank alone would have kept it as busy: fewer ranks per GPU would lose nothing "
            "(the busiest rank covers " +
                format_percent(dominance) + " of the busy time; the GPU was busy " + busy + ")"};
  }
  const std::string ranks = std::to_string(n) + " ranks";
  if (gpu.mps == "on") {
    if (gpu.kernel_ranks_at_once >= concurrent_ranks) {
      return {verdict_rule::mps_concurrent, "MPS let " + at_once +
                                                " ranks' kernels run at once; the GPU was busy " +
                                                busy + " of the job"};
    }
    return {verdict_rule::mps_serial,
            "MPS was on, yet " + at_once + " ranks' kernels ran at once" +
                (idle ? " and the GPU was busy " + busy + ": the ranks give it too little work"
                      : "; the GPU was busy " + busy +
                            ": each rank's kernels fill it, fewer ranks per GPU would lose "
                            "little")};
  }
  const std::string shared =
      gpu.mps == "off" ? ranks + " time-sliced" : ranks + " shared it, MPS unknown";
  if (idle) {
    return {verdict_rule::time_sliced_idle,
            "the GPU was busy " + busy + ": " + shared + ", try --mps on"};
  }
  // Time-sliced ranks whose spans overlap had work waiting for the GPU at the same time: that
  // is what MPS would have run together.
  const std::string waiting = gpu.mps == "off" && gpu.kernel_ranks_in_flight >= concurrent_ranks
                                  ? " (" + one_decimal(gpu.kernel_ranks_in_flight) +
                                        " ranks' kernels in flight at once, run one at a time)"
                                  : std::string();
  return {verdict_rule::time_sliced_busy, "the GPU was busy " + busy + " with " + shared + waiting +
                                              ": --mps on lets their kernels run at once"};
}

}  // namespace funnel::report
