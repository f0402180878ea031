#include "gpu_binding.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include "funnel/error.hpp"
#include "funnel/runtime/device.hpp"
#include "funnel/runtime/device_properties.hpp"

namespace funnel::stencil {
namespace {

constexpr int uuid_length = 64;

int node_local_rank(MPI_Comm comm) {
  int rank = 0;
  FUNNEL_MPI_TRY(MPI_Comm_rank(comm, &rank), "bind_gpu");
  MPI_Comm node = MPI_COMM_NULL;
  FUNNEL_MPI_TRY(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
                 "bind_gpu");
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  return local;
}

}  // namespace

gpu_binding bind_gpu(MPI_Comm comm, backend_kind backend) {
  gpu_binding b;
  if (backend != backend_kind::cuda) return b;
  const int local = node_local_rank(comm);
  // funnel-run narrows CUDA_VISIBLE_DEVICES to the rank's GPU, which is then device 0.
  const char* launcher = std::getenv("FUNNEL_LAUNCHER");
  const bool via_funnel_run = launcher != nullptr && std::strcmp(launcher, "funnel-run") == 0;
  const int count = device::count();
  const device gpu(via_funnel_run ? 0 : local % count);
  gpu.make_current();

  char uuid[uuid_length] = {};
  const std::string mine = gpu.properties().uuid;
  std::strncpy(uuid, mine.c_str(), uuid_length - 1);
  int size = 0;
  FUNNEL_MPI_TRY(MPI_Comm_size(comm, &size), "bind_gpu");
  std::vector<char> all(static_cast<std::size_t>(size) * uuid_length);
  FUNNEL_MPI_TRY(
      MPI_Allgather(uuid, uuid_length, MPI_CHAR, all.data(), uuid_length, MPI_CHAR, comm),
      "bind_gpu");
  std::map<std::string, int> ranks_on;
  for (int r = 0; r < size; ++r) ++ranks_on[std::string(all.data() + r * uuid_length)];
  b.gpus = static_cast<int>(ranks_on.size());
  for (const auto& entry : ranks_on) b.ranks_per_gpu = std::max(b.ranks_per_gpu, entry.second);

  const char* mps = std::getenv("FUNNEL_MPS");
  if (mps != nullptr && std::strcmp(mps, "on") == 0) {
    b.mps = "yes (funnel-run)";
  } else {
    b.mps = via_funnel_run ? "no" : "unknown (not started through funnel-run)";
    if (b.ranks_per_gpu > 1) {
      b.warnings.push_back(std::to_string(b.ranks_per_gpu) +
                           " ranks share a GPU without MPS: their kernels are time-sliced; "
                           "start the job through funnel-run (--mps on)");
    }
  }
  return b;
}

}  // namespace funnel::stencil
