// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel::binding on the CUDA backend (run with 2+ ranks on a GPU machine; skips without a GPU).
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/stat.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "funnel/binding/binding.hpp"
#include "funnel/runtime/device.hpp"

namespace {

// Every node rank's string, gathered independently of funnel::binding.
std::vector<std::string> gather(MPI_Comm comm, const std::string& mine) {
  constexpr int width = 96;
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::string own = mine;
  own.resize(width, '\0');
  std::vector<char> all(static_cast<std::size_t>(size) * width);
  MPI_Allgather(own.data(), width, MPI_CHAR, all.data(), width, MPI_CHAR, comm);
  std::vector<std::string> out;
  for (int r = 0; r < size; ++r) out.emplace_back(all.data() + static_cast<std::size_t>(r) * width);
  return out;
}

TEST(BindingGpu, BindsADeviceAndCountsItsRanksByUuid) {
  const auto b = funnel::binding::detect(MPI_COMM_WORLD, funnel::backend_kind::cuda);
  const auto& report = b.report();
  ASSERT_GE(report.device, 0);
  ASSERT_LT(report.device, funnel::device::count());
  EXPECT_EQ(funnel::device::current().id(), report.device) << "the device was made current";
  EXPECT_EQ(report.gpu_uuid, funnel::device(report.device).properties().uuid);
  EXPECT_EQ(report.gpu_uuid.rfind("GPU-", 0), 0U) << report.gpu_uuid;

  const auto uuids = gather(b.node_comm(), report.gpu_uuid);
  int same = 0;
  int most = 0;
  for (const auto& a : uuids) {
    int count = 0;
    for (const auto& c : uuids) count += a == c ? 1 : 0;
    most = std::max(most, count);
    same += a == report.gpu_uuid ? 1 : 0;
  }
  EXPECT_EQ(report.ranks_on_gpu, same);
  EXPECT_EQ(report.max_ranks_on_gpu, most);

  // MPS serves exactly when the pipe directory the runtime uses holds a control pipe.
  const char* pipe_env = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string pipe = pipe_env != nullptr ? pipe_env : "/tmp/nvidia-mps";
  struct stat info {};
  const bool control = ::stat((pipe + "/control").c_str(), &info) == 0;
  const char* mps_env = std::getenv("FUNNEL_MPS");
  const bool off = mps_env != nullptr && std::string{mps_env} == "off";
  EXPECT_EQ(report.mps_serving, control && !off);

  bool warned = false;
  for (const auto& w : report.warnings) warned |= w.find("without MPS") != std::string::npos;
  int any_unserved_sharing = most > 1 && !report.mps_serving ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &any_unserved_sharing, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(warned, any_unserved_sharing == 1);
  b.print_plan(std::cout);
}

}  // namespace
