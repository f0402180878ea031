// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file binding_plan.hpp
 * @brief The decisions funnel::binding makes, as pure functions (testable without MPI or a GPU).
 *
 * Internal (funnel::detail): installed with the public headers, but not part of funnel's API.
 */
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "funnel/binding/launcher_environment.hpp"

namespace funnel::detail {

/// @brief How many ranks share GPUs: this rank's GPU and the busiest one.
struct gpu_sharing {
  /// @brief Ranks on this rank's GPU, this one included.
  int mine = 0;
  /// @brief Ranks on the busiest GPU.
  int most = 0;
};

/**
 * @brief The device a rank takes without funnel-run: its node-local rank round-robin over the
 * visible devices (what funnel-run's default policy picks, too).
 * @param local_rank node-local rank, >= 0
 * @param device_count visible devices, > 0
 * @return the CUDA ordinal
 * @throw funnel::invalid_argument for a negative rank or no device
 */
[[nodiscard]] int round_robin_device(int local_rank, int device_count);

/**
 * @brief Counts ranks per GPU.
 * @param uuids every node rank's GPU UUID (empty strings are ranks without a GPU and count
 * for nothing)
 * @param mine this rank's UUID
 * @return ranks on `mine` and on the busiest GPU
 */
[[nodiscard]] gpu_sharing count_sharing(const std::vector<std::string>& uuids,
                                        const std::string& mine);

/**
 * @brief The MPS pipe directory the CUDA runtime of this process would use, when a daemon
 * serves it: CUDA_MPS_PIPE_DIRECTORY (or the system default /tmp/nvidia-mps) holding a `control`
 * pipe, unless funnel-run said FUNNEL_MPS=off.
 * @param env the launcher's variables
 * @param exists tells whether a path exists (injected for tests)
 * @return the pipe directory, or "" when MPS does not serve this process
 */
[[nodiscard]] std::string serving_mps_pipe(const launcher_environment& env,
                                           const std::function<bool(const std::string&)>& exists);

/// @brief What a rank knows when its CUDA context cannot be created.
struct context_failure {
  /// @brief The cudaError_t value.
  int code = 0;
  /// @brief Its name, e.g. "cudaErrorDevicesUnavailable".
  std::string name;
  /// @brief The CUDA ordinal asked for; -1 before a device was chosen.
  int device = -1;
  /// @brief True when an MPS daemon was to serve the rank.
  bool mps = false;
  /// @brief That daemon's pipe directory, when known.
  std::string mps_pipe;
  /// @brief Ranks of the node on this GPU as funnel-run planned them; 0 when unknown.
  int ranks_on_gpu = 0;
  /// @brief CUDA_DEVICE_MAX_CONNECTIONS as the rank has it; "" when unset.
  std::string max_connections;
};

/**
 * @brief The one-line error for a CUDA context that could not be created: the CUDA error, and
 * the likely causes for it, under MPS (client limit, connection pool, a daemon of another user,
 * errors 805-810) or without.
 * @param failure what the rank knows
 * @return the message, never worded as an out-of-memory of a pool
 */
[[nodiscard]] std::string context_failure_message(const context_failure& failure);

/**
 * @brief The warning for ranks that share a GPU time-sliced, or "" when there is nothing to say.
 * @param most ranks on the busiest GPU of a node
 * @param mps_serving whether MPS serves those ranks
 * @param host the node, for the message
 * @return one line, or ""
 */
[[nodiscard]] std::string sharing_warning(int most, bool mps_serving, const std::string& host);

}  // namespace funnel::detail
