#include "funnel/binding/detail/binding_plan.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "funnel/error.hpp"

namespace funnel::detail {

int round_robin_device(int local_rank, int device_count) {
  FUNNEL_EXPECTS(local_rank >= 0, "funnel::binding: local rank " + std::to_string(local_rank) +
                                      " is not allowed (must be >= 0)");
  FUNNEL_EXPECTS(device_count > 0, "funnel::binding: " + std::to_string(device_count) +
                                       " visible devices; at least one is needed");
  return local_rank % device_count;
}

gpu_sharing count_sharing(const std::vector<std::string>& uuids, const std::string& mine) {
  std::map<std::string, int> per_gpu;
  for (const auto& uuid : uuids) {
    if (!uuid.empty()) ++per_gpu[uuid];
  }
  gpu_sharing sharing;
  for (const auto& [uuid, count] : per_gpu) {
    sharing.most = std::max(sharing.most, count);
    if (uuid == mine) sharing.mine = count;
  }
  return sharing;
}

std::string serving_mps_pipe(const launcher_environment& env,
                             const std::function<bool(const std::string&)>& exists) {
  // funnel-run unsets the pipe variables for ranks it runs without MPS; a rank it says is off
  // must not be reported as served by a daemon somebody left at the default path.
  if (env.from_funnel_run && !env.mps) return {};
  // Without the variable a CUDA client looks in the system default directory.
  const std::string pipe =
      env.cuda_mps_pipe_directory.empty() ? "/tmp/nvidia-mps" : env.cuda_mps_pipe_directory;
  return exists(pipe + "/control") ? pipe : std::string{};
}

std::string sharing_warning(int most, bool mps_serving, const std::string& host) {
  if (most <= 1 || mps_serving) return {};
  return "WARNING: " + std::to_string(most) + " ranks share one GPU on " + host +
         " without MPS: their kernels are time-sliced, not concurrent. Start the job through "
         "funnel-run (--mps auto) or run fewer ranks per GPU.";
}

}  // namespace funnel::detail
