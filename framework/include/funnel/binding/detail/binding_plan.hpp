/**
 * @file binding_plan.hpp
 * @brief The decisions funnel::binding makes, as pure functions (testable without MPI or a GPU).
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

/**
 * @brief The warning for ranks that share a GPU time-sliced, or "" when there is nothing to say.
 * @param most ranks on the busiest GPU of a node
 * @param mps_serving whether MPS serves those ranks
 * @param host the node, for the message
 * @return one line, or ""
 */
[[nodiscard]] std::string sharing_warning(int most, bool mps_serving, const std::string& host);

}  // namespace funnel::detail
