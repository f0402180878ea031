// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// funnel::cartesian_decomposition across real ranks: every rank's view agrees with the others'.
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/decomposition/placement_by_device.hpp"
#include "funnel/error.hpp"

namespace {

using funnel::box;
using funnel::index3;
using funnel::side;
using dims3 = std::array<int, 3>;

std::vector<box> all_local_boxes(const funnel::cartesian_decomposition& d) {
  std::vector<box> boxes(static_cast<std::size_t>(d.size()));
  box mine = d.local_box();
  MPI_Allgather(&mine, sizeof(box), MPI_BYTE, boxes.data(), sizeof(box), MPI_BYTE, d.comm());
  return boxes;
}

void expect_consistent(const funnel::cartesian_decomposition& d, bool cartesian = true) {
  const std::vector<box> boxes = all_local_boxes(d);
  const index3 g = d.global_cells();
  std::vector<int> owners(static_cast<std::size_t>(g[0] * g[1] * g[2]), 0);
  for (int r = 0; r < d.size(); ++r) {
    EXPECT_EQ(d.box_of(r), boxes[static_cast<std::size_t>(r)]) << "rank " << r;
    const box& b = boxes[static_cast<std::size_t>(r)];
    for (auto k = b.lo[2]; k < b.hi[2]; ++k) {
      for (auto j = b.lo[1]; j < b.hi[1]; ++j) {
        for (auto i = b.lo[0]; i < b.hi[0]; ++i) {
          ++owners[static_cast<std::size_t>((k * g[1] + j) * g[0] + i)];
        }
      }
    }
  }
  for (int count : owners) ASSERT_EQ(count, 1);

  // Neighbours touch this box across one face and name this rank back.
  for (int axis = 0; axis < 3; ++axis) {
    for (side s : {side::lower, side::upper}) {
      const int n = d.neighbor(axis, s);
      const bool edge =
          (s == side::lower) ? d.coords()[axis] == 0 : d.coords()[axis] == d.dims()[axis] - 1;
      if (edge && !d.periodic()[axis]) {
        EXPECT_EQ(n, MPI_PROC_NULL);
        continue;
      }
      if (n == MPI_PROC_NULL) {  // not ASSERT: the other ranks still gather below
        ADD_FAILURE() << "no neighbour on axis " << axis << " inside the grid";
        continue;
      }
      const box nb = d.box_of(n);
      const box& me = d.local_box();
      if (!edge) {
        EXPECT_EQ(s == side::lower ? nb.hi[axis] : nb.lo[axis],
                  s == side::lower ? me.lo[axis] : me.hi[axis]);
      } else {  // wraps around
        EXPECT_EQ(s == side::lower ? nb.hi[axis] : nb.lo[axis],
                  s == side::lower ? g[axis] : index3::value_type{0});
      }
      for (int other = 0; other < 3; ++other) {
        if (other == axis) continue;
        EXPECT_EQ(nb.lo[other], me.lo[other]);
        EXPECT_EQ(nb.hi[other], me.hi[other]);
      }
      if (cartesian) {  // MPI's own topology agrees
        int back = MPI_PROC_NULL;
        int fwd = MPI_PROC_NULL;
        MPI_Cart_shift(d.comm(), axis, s == side::lower ? -1 : 1, &back, &fwd);
        EXPECT_EQ(fwd, n);
      }
    }
  }
  // The neighbour's neighbour on the other side is this rank.
  std::array<int, 6> mine{};
  for (int f = 0; f < 6; ++f) mine[f] = d.neighbor(f / 2, static_cast<side>(f % 2));
  std::vector<int> all(6 * static_cast<std::size_t>(d.size()));
  MPI_Allgather(mine.data(), 6, MPI_INT, all.data(), 6, MPI_INT, d.comm());
  for (int f = 0; f < 6; ++f) {
    if (mine[f] == MPI_PROC_NULL) continue;
    EXPECT_EQ(all[6 * static_cast<std::size_t>(mine[f]) + (f ^ 1)], d.rank()) << "face " << f;
  }
}

// Rank placement[p] takes the p-th box (x fastest): its coordinates say so on every rank.
void expect_placed(const funnel::cartesian_decomposition& d, const std::vector<int>& placement) {
  const dims3 n = d.dims();
  for (std::size_t p = 0; p < placement.size(); ++p) {
    const int pos = static_cast<int>(p);
    const dims3 want{pos % n[0], (pos / n[0]) % n[1], pos / (n[0] * n[1])};
    EXPECT_EQ(d.coords_of(placement[p]), want) << "position " << p;
  }
}

TEST(DecompositionMpi, ThreeDimensionalUnevenSplit) {
  const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {13, 9, 5}, 1);
  ASSERT_EQ(d.size(), 6);
  EXPECT_EQ(d.dims()[0] * d.dims()[1] * d.dims()[2], 6);
  int world_rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  EXPECT_EQ(d.rank(), world_rank);  // no reordering
  EXPECT_EQ(d.layout().interior, d.local_box().extents());
  expect_consistent(d);
}

TEST(DecompositionMpi, TwoDimensionalPeriodicSplit) {
  const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {12, 10, 1}, 2, {3, 2, 0},
                                          {false, true, false});
  EXPECT_EQ(d.dims(), (dims3{3, 2, 1}));
  EXPECT_EQ(d.layout().allocated(2), 1);
  EXPECT_EQ(d.neighbor(2, side::lower), MPI_PROC_NULL);
  expect_consistent(d);
}

TEST(DecompositionMpi, OneDimensionalSplitAlongZ) {
  const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {4, 4, 20}, 3, {1, 1, 6},
                                          {true, false, true});
  EXPECT_EQ(d.neighbor(0, side::lower), d.rank());  // periodic axis of one rank
  EXPECT_EQ(d.local_box().extent(2), d.coords()[2] < 2 ? 4 : 3);
  expect_consistent(d);
}

TEST(DecompositionMpi, RanksTakeTheBoxesOfAPlacement) {
  int world_rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  for (const std::vector<int>& placement :
       {std::vector<int>{5, 4, 3, 2, 1, 0}, std::vector<int>{0, 2, 4, 1, 3, 5},
        std::vector<int>{3, 0, 5, 1, 4, 2}}) {
    const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {13, 9, 5}, 1, {0, 0, 0},
                                            {false, false, false}, placement);
    EXPECT_EQ(d.rank(), world_rank);  // ranks keep their numbers
    expect_placed(d, placement);
    expect_consistent(d, false);
    const funnel::cartesian_decomposition periodic(MPI_COMM_WORLD, {12, 10, 1}, 2, {3, 2, 0},
                                                   {false, true, false}, placement);
    expect_placed(periodic, placement);
    expect_consistent(periodic, false);
    // Periodic axes of one rank: the rank is its own neighbour there.
    const funnel::cartesian_decomposition along_z(MPI_COMM_WORLD, {4, 4, 20}, 3, {1, 1, 6},
                                                  {true, false, true}, placement);
    EXPECT_EQ(along_z.neighbor(0, side::lower), along_z.rank());
    expect_placed(along_z, placement);
    expect_consistent(along_z, false);
  }
}

TEST(DecompositionMpi, EveryRankRejectsPlacementsThatDiffer) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<int> placement{0, 1, 2, 3, 4, 5};
  if (rank == 3) placement = {1, 0, 2, 3, 4, 5};
  try {
    const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {12, 12, 12}, 1, {0, 0, 0},
                                            {false, false, false}, placement);
    ADD_FAILURE() << "no exception for placements that differ between ranks";
  } catch (const funnel::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the ranks gave different placements"), std::string::npos)
        << e.what();
  }
}

TEST(DecompositionMpi, PlacementByDeviceKeepsEachDevicesRanksTogether) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Bound round-robin to 2 devices: each device's ranks become consecutive boxes.
  const std::string round_robin = "GPU-" + std::to_string(rank % 2);
  EXPECT_EQ(funnel::placement_by_device(MPI_COMM_WORLD, round_robin),
            (std::vector<int>{0, 2, 4, 1, 3, 5}));
  // Bound in blocks: rank order, counting x fastest (slabs across z).
  const std::string blocks = "GPU-" + std::to_string(rank / 3);
  EXPECT_EQ(funnel::placement_by_device(MPI_COMM_WORLD, blocks),
            (std::vector<int>{0, 1, 2, 3, 4, 5}));
  // One device per rank, or none: nothing to group, no placement.
  EXPECT_TRUE(funnel::placement_by_device(MPI_COMM_WORLD, "GPU-" + std::to_string(rank)).empty());
  EXPECT_TRUE(funnel::placement_by_device(MPI_COMM_WORLD, "").empty());
  // Three devices, the first bound to ranks 2 and 5.
  const char* three[] = {"b", "c", "a", "b", "c", "a"};
  EXPECT_EQ(funnel::placement_by_device(MPI_COMM_WORLD, three[rank]),
            (std::vector<int>{0, 3, 1, 4, 2, 5}));
  const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {8, 12, 8}, 1, {1, 3, 2},
                                          {false, false, false},
                                          funnel::placement_by_device(MPI_COMM_WORLD, round_robin));
  // The even ranks share "GPU-0" and take the slab z = 0: the 3 boxes along y.
  EXPECT_EQ(d.coords()[2], rank % 2);
  expect_consistent(d, false);
}

TEST(DecompositionMpi, EveryRankRejectsABadPlacement) {
  for (const auto& [placement, part] :
       {std::pair{std::vector<int>{0, 1, 2}, "a placement of 3 ranks for 6 ranks"},
        std::pair{std::vector<int>{0, 1, 2, 3, 4, 4}, "entry 5 is rank 4, given twice"},
        std::pair{std::vector<int>{0, 1, 2, 3, 4, 6}, "entry 5 is rank 6, outside [0, 6)"},
        std::pair{std::vector<int>{-1, 1, 2, 3, 4, 5}, "entry 0 is rank -1, outside [0, 6)"}}) {
    try {
      const funnel::cartesian_decomposition d(MPI_COMM_WORLD, {12, 12, 12}, 1, {0, 0, 0},
                                              {false, false, false}, placement);
      ADD_FAILURE() << "no exception; expected '" << part << "'";
    } catch (const funnel::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  }
}

TEST(DecompositionMpi, EveryRankRejectsImpossibleRequests) {
  auto expect_invalid = [](auto fn, const std::string& part) {
    try {
      fn();
      ADD_FAILURE() << "no exception; expected '" << part << "'";
    } catch (const funnel::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_invalid(
      [] {
        funnel::cartesian_decomposition(MPI_COMM_WORLD, {64, 64, 1}, 1, {4, 1, 1});
      },
      "make 4 ranks but the communicator has 6");
  expect_invalid(
      [] {
        funnel::cartesian_decomposition(MPI_COMM_WORLD, {5, 64, 1}, 1, {6, 1, 1});
      },
      "more ranks than cells along x: 6 ranks for 5 cells");
  expect_invalid(
      [] {
        funnel::cartesian_decomposition(MPI_COMM_WORLD, {2, 3, 1}, 1);
      },
      "more ranks than cells");
  expect_invalid(
      [] {
        funnel::cartesian_decomposition(MPI_COMM_WORLD, {64, 12, 1}, 3, {1, 6, 1});
      },
      "halo 3 is wider than the smallest local extent 2 along y");
  // The communicator still works after every rank threw.
  int sum = 0;
  int one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sum, 6);
}

}  // namespace
