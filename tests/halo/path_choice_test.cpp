// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The halo path decision on fake topologies: peer access, none, another node, a hidden device.
#include "path_choice.hpp"

#include <gtest/gtest.h>

namespace {

using funnel::halo_method;
using funnel::halo_transport;
using funnel::detail::choose_path;
using funnel::detail::ipc_candidate;
using funnel::detail::link_facts;

link_facts on_node(bool same_gpu) {
  link_facts f;
  f.on_node = true;
  f.same_gpu = same_gpu;
  f.exportable = true;
  f.rank = 5;
  return f;
}

constexpr auto staged = halo_transport::mpi_staged;

TEST(PathChoice, SameGpuIsOrderedIpc) {
  const auto c = choose_path(halo_method::automatic, on_node(true), true, staged);
  EXPECT_EQ(c.transport, halo_transport::ipc_ordered);
  EXPECT_TRUE(c.fallback.empty());
  EXPECT_EQ(choose_path(halo_method::automatic, on_node(true), false, staged).transport,
            halo_transport::ipc);
}

TEST(PathChoice, PeerGpuTakesPeerAccessByDefault) {
  const link_facts f = on_node(false);
  EXPECT_TRUE(ipc_candidate(halo_method::automatic, f));
  const auto c = choose_path(halo_method::automatic, f, true, staged);
  EXPECT_EQ(c.transport, halo_transport::peer_ordered);
  EXPECT_TRUE(c.fallback.empty());
  EXPECT_TRUE(c.refusal.empty());
}

TEST(PathChoice, NoPeerAccessFallsBackToStagedAndSaysWhy) {
  link_facts f = on_node(false);
  f.mapped = false;
  f.map_error = "cudaErrorPeerAccessUnsupported";
  const auto c = choose_path(halo_method::automatic, f, true, staged);
  EXPECT_EQ(c.transport, staged);
  EXPECT_NE(c.fallback.find("no peer access to rank 5's GPU"), std::string::npos) << c.fallback;
  EXPECT_NE(c.fallback.find("cudaErrorPeerAccessUnsupported"), std::string::npos);
  EXPECT_TRUE(c.refusal.empty());
  const auto asked = choose_path(halo_method::ipc, f, true, staged);
  EXPECT_EQ(asked.refusal, c.fallback);
}

TEST(PathChoice, HiddenDeviceIsAFailedMapping) {
  // A scheduler that hides the other GPU's device files makes the import fail on one side.
  link_facts f = on_node(false);
  f.mapped = false;
  f.map_error = "rank 5 could not map this rank's pool (see its plan)";
  const auto c = choose_path(halo_method::automatic, f, true, staged);
  EXPECT_EQ(c.transport, staged);
  EXPECT_NE(c.fallback.find("could not map this rank's pool"), std::string::npos);
}

TEST(PathChoice, OtherNodeIsMpiWithoutAFallback) {
  link_facts f;
  f.rank = 9;
  EXPECT_FALSE(ipc_candidate(halo_method::automatic, f));
  const auto c = choose_path(halo_method::automatic, f, true, halo_transport::mpi_cuda_aware);
  EXPECT_EQ(c.transport, halo_transport::mpi_cuda_aware);
  EXPECT_TRUE(c.fallback.empty());
  const auto asked = choose_path(halo_method::ipc, f, true, staged);
  EXPECT_EQ(asked.refusal, "neighbour rank 9 is on another node");
}

TEST(PathChoice, UnexportablePoolsAndMpiMethod) {
  link_facts f = on_node(true);
  f.exportable = false;
  EXPECT_FALSE(ipc_candidate(halo_method::automatic, f));
  const auto c = choose_path(halo_method::automatic, f, true, staged);
  EXPECT_EQ(c.transport, staged);
  EXPECT_NE(c.fallback.find("not ipc_exportable"), std::string::npos);
  EXPECT_FALSE(ipc_candidate(halo_method::mpi, on_node(false)));
  const auto m = choose_path(halo_method::mpi, on_node(false), true, staged);
  EXPECT_EQ(m.transport, staged);
  EXPECT_TRUE(m.fallback.empty());
}

}  // namespace
