// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file rank_summary.hpp
 * @brief One rank's figures in the node's report.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace funnel::report {

/**
 * @brief One rank (all records of one rank: a rank may run several CUDA processes), on the
 * node's clock, with times relative to the job's start.
 */
struct rank_summary {
  std::string label;                 ///< "rank 3", "local rank 3" or "pid 1234"
  int global_rank = -1;              ///< -1 when unknown
  int local_rank = -1;               ///< -1 when unknown
  std::vector<std::int64_t> pids;    ///< its processes
  std::vector<std::string> records;  ///< its record files (names inside the record directory)
  std::vector<std::string> gpus;     ///< UUIDs of the GPUs it used
  std::string command;               ///< the program
  double start_s = 0;        ///< process start (or the record's start when unknown), from job start
  double end_s = 0;          ///< clean end, or the last sign of life for a rank that ended early
  double wall_s = 0;         ///< end_s - start_s
  double gpu_s = 0;          ///< the union of its kernels and copies, all its GPUs
  double kernel_s = 0;       ///< the union of its kernels
  double copy_s = 0;         ///< the union of its copies and memsets
  bool ended_early = false;  ///< some record of it has no end marker
  std::vector<std::string> damage;    ///< "<record>: <what stopped the reader>" per damaged record
  std::vector<std::string> notes;     ///< lines its producer left
  std::uint64_t dropped_records = 0;  ///< activity records CUPTI lost
  std::uint64_t spans = 0;            ///< spans its records held
  std::uint64_t record_bytes = 0;     ///< bytes of its records
};

}  // namespace funnel::report
