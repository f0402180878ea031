// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/decomposition/placement_by_device.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "../core/collective.hpp"
#include "../core/comm_owner.hpp"
#include "funnel/decomposition/detail/placement.hpp"
#include "funnel/error.hpp"

namespace funnel {
namespace detail {

std::vector<int> placement_of(const std::vector<rank_place>& places) {
  std::vector<int> order(places.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const rank_place& pa = places[static_cast<std::size_t>(a)];
    const rank_place& pb = places[static_cast<std::size_t>(b)];
    return std::tie(pa.node, pa.device, a) < std::tie(pb.node, pb.device, b);
  });
  // A rank's device is its own rank unless a lower rank shares the device.
  bool shared = false;
  bool moved = false;
  for (std::size_t r = 0; r < places.size(); ++r) {
    shared = shared || places[r].device != static_cast<int>(r);
    moved = moved || order[r] != static_cast<int>(r);
  }
  if (!shared && !moved) return {};
  return order;
}

std::uint64_t placement_digest(const std::vector<int>& placement) noexcept {
  std::uint64_t h = 14695981039346656037ULL;
  for (const int r : placement) {
    h = (h ^ static_cast<std::uint32_t>(r)) * 1099511628211ULL;
  }
  return h;
}

void check_placement(const std::vector<int>& placement, int ranks) {
  FUNNEL_EXPECTS(placement.size() == static_cast<std::size_t>(ranks),
                 "a placement of " + std::to_string(placement.size()) + " ranks for " +
                     std::to_string(ranks) + " ranks (it must hold every rank once)");
  std::vector<bool> seen(placement.size(), false);
  for (std::size_t p = 0; p < placement.size(); ++p) {
    const int r = placement[p];
    FUNNEL_EXPECTS(r >= 0 && r < ranks && !seen[static_cast<std::size_t>(r)],
                   "placement entry " + std::to_string(p) + " is rank " + std::to_string(r) +
                       (r >= 0 && r < ranks ? ", given twice"
                                            : ", outside [0, " + std::to_string(ranks) + ")") +
                       " (it must hold every rank once)");
    seen[static_cast<std::size_t>(r)] = true;
  }
}

}  // namespace detail

namespace {

// The lowest rank (of `comm`) among the ranks of `group` whose key equals this rank's.
int lowest_with_same(MPI_Comm group, int rank, const std::string& key) {
  const std::vector<std::string> keys =
      detail::allgather_strings(group, key, "placement_by_device: the node's devices");
  std::vector<int> ranks(keys.size());
  FUNNEL_MPI_TRY(MPI_Allgather(&rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, group),
                 "placement_by_device");
  int lowest = rank;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) lowest = std::min(lowest, ranks[i]);
  }
  return lowest;
}

}  // namespace

static_assert(sizeof(detail::rank_place) == 2 * sizeof(int), "gathered as 2 MPI_INT");

std::vector<int> placement_by_device(MPI_Comm comm, const std::string& device) {
  int rank = 0;
  int size = 0;
  FUNNEL_MPI_TRY(MPI_Comm_rank(comm, &rank), "placement_by_device");
  FUNNEL_MPI_TRY(MPI_Comm_size(comm, &size), "placement_by_device");
  MPI_Comm split = MPI_COMM_NULL;
  FUNNEL_MPI_TRY(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &split),
                 "placement_by_device: the ranks of this node");
  const detail::comm_owner node(split);
  detail::rank_place mine;
  FUNNEL_MPI_TRY(MPI_Allreduce(&rank, &mine.node, 1, MPI_INT, MPI_MIN, node.get()),
                 "placement_by_device");
  // Without a device each rank is a group of its own: every key differs.
  mine.device =
      lowest_with_same(node.get(), rank, device.empty() ? "#" + std::to_string(rank) : device);
  std::vector<detail::rank_place> places(static_cast<std::size_t>(size));
  FUNNEL_MPI_TRY(MPI_Allgather(&mine, 2, MPI_INT, places.data(), 2, MPI_INT, comm),
                 "placement_by_device");
  return detail::placement_of(places);
}

}  // namespace funnel
