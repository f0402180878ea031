// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file node_report.hpp
 * @brief Everything the merge of one node's records found.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "funnel/report/gpu_summary.hpp"
#include "funnel/report/rank_summary.hpp"

namespace funnel::report {

/// @brief The merged report of one node: per rank, per GPU, and what was missing or damaged.
struct node_report {
  std::string host;   ///< the records' host (the first one's when they differ)
  std::string clock;  ///< the node clock the records were put on: "monotonic" or "realtime"
  std::string cuda_driver_version;         ///< from the records, "" when none says
  std::int64_t job_start_realtime_ns = 0;  ///< start of the wall window (CLOCK_REALTIME)
  double wall_s = 0;                       ///< the job's wall window
  int records = 0;                         ///< record files read (damaged ones included)
  std::vector<rank_summary> ranks;         ///< by rank
  std::vector<gpu_summary> gpus;           ///< by nvidia-smi index, then UUID
  std::vector<std::string> missing;        ///< ranks expected but without a record
  std::vector<std::string> damaged;        ///< "<record>: <what>" for damaged or unreadable files
  std::vector<std::string> notes;          ///< other things the report should say
};

}  // namespace funnel::report
