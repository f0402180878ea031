// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
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

namespace {

// "R ranks x CUDA_DEVICE_MAX_CONNECTIONS=C" as far as the rank knows them.
std::string connection_use(const context_failure& f) {
  const std::string ranks =
      f.ranks_on_gpu > 0 ? std::to_string(f.ranks_on_gpu) + " ranks" : "the ranks";
  const std::string each = f.max_connections.empty()
                               ? "CUDA_DEVICE_MAX_CONNECTIONS unset (2 under MPS)"
                               : "CUDA_DEVICE_MAX_CONNECTIONS=" + f.max_connections;
  return ranks + " on this GPU x " + each;
}

std::string likely_causes(const context_failure& f) {
  const std::string pool = "the server's pool of connections is used up (" + connection_use(f) +
                           "; funnel-run's --mps-connection-budget)";
  const std::string clients =
      "the server's client limit is reached (funnel-run's --mps-max-clients)";
  const std::string other_user =
      "an MPS daemon or server of another user holds the GPU (MPS serves one user per GPU at a "
      "time)";
  switch (f.code) {
    case 805:  // cudaErrorMpsConnectionFailed
      return "this client could not reach the MPS control daemon or server" +
             (f.mps_pipe.empty() ? std::string{} : " at " + f.mps_pipe) + ": it quit or died, or " +
             other_user;
    case 806:  // cudaErrorMpsRpcFailure
      return "a call to the MPS server failed: the server died or was stopped";
    case 807:  // cudaErrorMpsServerNotReady
      return "the MPS server is not ready: it is still starting, or " + other_user;
    case 808:  // cudaErrorMpsMaxClientsReached
      return clients;
    case 809:  // cudaErrorMpsMaxConnectionsReached
      return pool;
    case 810:  // cudaErrorMpsClientTerminated
      return "the MPS server terminated this client (e.g. after a fatal GPU fault)";
    default:
      break;
  }
  if (f.mps) {
    if (f.code == 2) {  // cudaErrorMemoryAllocation before the app allocated anything
      return "not an allocation of the application: under MPS a client beyond the server's "
             "pool of connections is refused this way; " +
             pool;
    }
    return "under MPS, " + clients + ", or " + pool + ", or " + other_user;
  }
  if (f.code == 46) {  // cudaErrorDevicesUnavailable
    return "the GPU is busy or unavailable: in exclusive-process mode another process holds it, "
           "or " +
           other_user;
  }
  if (f.code == 2) return "the GPU has no memory left for another context";
  return "see the CUDA error";
}

}  // namespace

std::string context_failure_message(const context_failure& failure) {
  std::string where = failure.device >= 0 ? "device " + std::to_string(failure.device) : "a device";
  if (failure.mps) {
    where += " under MPS" +
             (failure.mps_pipe.empty() ? std::string{} : " (pipe " + failure.mps_pipe + ")");
  }
  return "funnel::binding: cannot create a CUDA context on " + where + ": " + failure.name +
         " (error " + std::to_string(failure.code) + "). Likely cause: " + likely_causes(failure);
}

std::string sharing_warning(int most, bool mps_serving, const std::string& host) {
  if (most <= 1 || mps_serving) return {};
  return "WARNING: " + std::to_string(most) + " ranks share one GPU on " + host +
         " without MPS: their kernels are time-sliced, not concurrent. Start the job through "
         "funnel-run (--mps auto) or run fewer ranks per GPU.";
}

}  // namespace funnel::detail
