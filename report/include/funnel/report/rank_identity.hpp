// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file rank_identity.hpp
 * @brief Who wrote a record: rank, process, host and the launcher's view of its GPU.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "funnel/report/clock_sample.hpp"

namespace funnel::report {

/**
 * @brief The identity a record starts with. Every field may be unknown (-1 or ""): a record
 * written by a program that no launcher started is still a record.
 */
struct rank_identity {
  std::string producer;      ///< what wrote the record: "cupti-inject" or an app's name
  std::string host;          ///< the host name (uname)
  std::string boot_id;       ///< /proc/sys/kernel/random/boot_id: same value, same monotonic clock
  std::int64_t pid = -1;     ///< the process id
  int global_rank = -1;      ///< the rank in the job (OMPI_COMM_WORLD_RANK, PMIX_RANK, ...)
  int world_size = -1;       ///< the job's ranks (OMPI_COMM_WORLD_SIZE, ...)
  int local_rank = -1;       ///< the rank on its node (FUNNEL_LOCAL_RANK, then the launcher's)
  int local_size = -1;       ///< the node's ranks (FUNNEL_LOCAL_SIZE, then the launcher's)
  std::string job_id;        ///< FUNNEL_JOB_ID, SLURM_JOB_ID, PBS_JOBID or LSB_JOBID
  std::string launcher_mps;  ///< FUNNEL_MPS as funnel-run set it: "on", "off" or ""
  std::string launcher_gpu_uuid;  ///< FUNNEL_GPU_UUID: the GPU funnel-run gave the rank
  int launcher_gpu_index = -1;    ///< FUNNEL_GPU_INDEX: its nvidia-smi index
  std::string command;            ///< the program's name (argv[0] without its directory)
  /// CLOCK_MONOTONIC when the process started (from /proc/self/stat); 0 when unknown.
  std::int64_t process_start_monotonic_ns = 0;
  /// CLOCK_REALTIME when the process started; 0 when unknown.
  std::int64_t process_start_realtime_ns = 0;
  std::string cuda_driver_version;  ///< e.g. "13.0" (the injection library fills it in)
  clock_sample start_clock;         ///< the clocks when the record was opened

  /**
   * @brief The identity of this process, read once, here: ranks and job from the launcher's
   * variables, host, boot id, pid, command and start time from the system. Variables that are
   * not whole non-negative numbers count as unset (a record must never fail the app).
   * @param producer what writes the record
   * @param lookup reads an environment variable (nullptr when unset); std::getenv in use, a
   *        map in tests
   * @return the identity; start_clock is left for the writer's clock to fill
   */
  [[nodiscard]] static rank_identity of_this_process(
      const std::string& producer, const std::function<const char*(const char*)>& lookup);

  /**
   * @brief The rank as the report names it.
   * @return "rank G" (global rank known), else "local rank L", else "pid P"
   */
  [[nodiscard]] std::string label() const;
};

}  // namespace funnel::report
