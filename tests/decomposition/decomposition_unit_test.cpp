// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The split arithmetic and the argument checks of funnel::cartesian_decomposition; box_difference.
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/decomposition/detail/box_difference.hpp"
#include "funnel/decomposition/detail/grid_split.hpp"
#include "funnel/decomposition/detail/placement.hpp"
#include "funnel/error.hpp"

namespace {

using funnel::box;
using funnel::index3;
using dims3 = std::array<int, 3>;

// Expects `fn` to throw funnel::invalid_argument whose message contains every `parts`.
void expect_invalid(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one mentioning '" << parts.front() << "'";
  } catch (const funnel::invalid_argument& e) {
    for (const auto& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "message '" << e.what() << "' lacks '" << part << "'";
    }
  }
}

// Every cell of the grid lies in exactly one box, and box extents differ by at most one cell
// along an axis, the larger ones first.
void expect_tiling(const index3& global, const dims3& dims) {
  std::vector<int> owners(static_cast<std::size_t>(global[0] * global[1] * global[2]), 0);
  for (int cz = 0; cz < dims[2]; ++cz) {
    for (int cy = 0; cy < dims[1]; ++cy) {
      for (int cx = 0; cx < dims[0]; ++cx) {
        const box b = funnel::detail::split_box(global, dims, {cx, cy, cz});
        const std::array<int, 3> c{cx, cy, cz};
        for (int axis = 0; axis < 3; ++axis) {
          const auto base = global[axis] / dims[axis];
          const auto rem = global[axis] % dims[axis];
          EXPECT_EQ(b.extent(axis), base + (c[axis] < rem ? 1 : 0));
        }
        for (auto k = b.lo[2]; k < b.hi[2]; ++k) {
          for (auto j = b.lo[1]; j < b.hi[1]; ++j) {
            for (auto i = b.lo[0]; i < b.hi[0]; ++i) {
              ++owners[static_cast<std::size_t>((k * global[1] + j) * global[0] + i)];
            }
          }
        }
      }
    }
  }
  for (int count : owners) ASSERT_EQ(count, 1);
}

TEST(GridSplit, UnevenSplitGivesTheRemainderToTheFirstRanks) {
  const index3 global{10, 7, 1};
  const dims3 dims{3, 2, 1};
  EXPECT_EQ(funnel::detail::split_box(global, dims, {0, 0, 0}), (box{{0, 0, 0}, {4, 4, 1}}));
  EXPECT_EQ(funnel::detail::split_box(global, dims, {1, 1, 0}), (box{{4, 4, 0}, {7, 7, 1}}));
  EXPECT_EQ(funnel::detail::split_box(global, dims, {2, 0, 0}), (box{{7, 0, 0}, {10, 4, 1}}));
}

TEST(GridSplit, RandomSplitsTileTheGrid) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 30; ++trial) {
    dims3 dims{};
    index3 global{};
    for (int axis = 0; axis < 3; ++axis) {
      dims[axis] = std::uniform_int_distribution<int>(1, 4)(rng);
      global[axis] = std::uniform_int_distribution<int>(2 * dims[axis], 2 * dims[axis] + 9)(rng);
    }
    SCOPED_TRACE("global " + std::to_string(global[0]) + "x" + std::to_string(global[1]) + "x" +
                 std::to_string(global[2]));
    EXPECT_EQ(funnel::detail::checked_dims(dims[0] * dims[1] * dims[2], global, 1, dims), dims);
    expect_tiling(global, dims);
  }
}

TEST(GridSplit, DimsCreateFillsZerosAndKeepsOneCellAxesWhole) {
  for (int ranks : {1, 2, 3, 4, 6, 8, 12, 16}) {
    const dims3 d3 = funnel::detail::checked_dims(ranks, {64, 64, 64}, 1, {0, 0, 0});
    EXPECT_EQ(d3[0] * d3[1] * d3[2], ranks);
    const dims3 d2 = funnel::detail::checked_dims(ranks, {64, 64, 1}, 2, {0, 0, 0});
    EXPECT_EQ(d2[2], 1);
    EXPECT_EQ(d2[0] * d2[1], ranks);
    const dims3 fixed = funnel::detail::checked_dims(ranks, {64, 64, 64}, 1, {0, ranks, 0});
    EXPECT_EQ(fixed, (dims3{1, ranks, 1}));
  }
  expect_tiling({13, 11, 1}, funnel::detail::checked_dims(6, {13, 11, 1}, 1, {0, 0, 0}));
}

// Faces of z (whole planes) and y (row runs) are contiguous, x-faces are one cell per row: on
// ties the split goes to z, then y; x only when it saves halo cells or nothing else fits.
TEST(GridSplit, ChosenDimsSplitSlowAxesFirst) {
  using funnel::detail::checked_dims;
  EXPECT_EQ(checked_dims(2, {1024, 1024, 1024}, 1, {0, 0, 0}), (dims3{1, 1, 2}));
  // 1x1x4 and 1x2x2 tie on cells per box, but 1x2x2's boxes each have one neighbour per axis
  // (2 faces of 1024 x 512), 1x1x4's inner boxes two (2 faces of 1024 x 1024).
  EXPECT_EQ(checked_dims(4, {1024, 1024, 1024}, 1, {0, 0, 0}), (dims3{1, 2, 2}));
  // Periodic, every box has two neighbours along a split axis: nothing saved, the tie goes to z.
  EXPECT_EQ(checked_dims(4, {1024, 1024, 1024}, 1, {0, 0, 0}, {true, true, true}),
            (dims3{1, 1, 4}));
  // Ties go to fewer ranks along x first: 12x1x4 and 8x2x3 tie on cells per box.
  EXPECT_EQ(checked_dims(48, {768, 96, 96}, 2, {0, 0, 0}), (dims3{8, 2, 3}));
  // 2x2x2 would exchange 2 x 256^2 cells per axis, with the x-faces counted twice.
  EXPECT_EQ(checked_dims(8, {512, 512, 512}, 1, {0, 0, 0}), (dims3{1, 2, 4}));
  EXPECT_EQ(checked_dims(2, {16382, 16382, 1}, 1, {0, 0, 0}), (dims3{1, 2, 1}));
  EXPECT_EQ(checked_dims(4, {4096, 4096, 1}, 1, {0, 0, 0}), (dims3{1, 4, 1}));
  // Fewer halo cells win over the slow-axis preference: a long x axis is split.
  EXPECT_EQ(checked_dims(2, {4096, 64, 64}, 1, {0, 0, 0}), (dims3{2, 1, 1}));
  // z has 3 cells: boxes of 1 cell are not allowed, so the split moves to y.
  EXPECT_EQ(checked_dims(2, {64, 64, 3}, 1, {0, 0, 0}), (dims3{1, 2, 1}));
  // Given entries are kept.
  EXPECT_EQ(checked_dims(4, {64, 64, 64}, 1, {4, 0, 0}), (dims3{4, 1, 1}));
}

// Nodes first (in the order of their lowest rank), then devices, then ranks.
TEST(Placement, GroupsRanksByNodeThenDevice) {
  using funnel::detail::placement_of;
  using funnel::detail::rank_place;
  // 8 ranks on 2 nodes bound cyclically (rank r on node r % 2), 2 devices a node round-robin
  // among the node's ranks: node 0 holds 0, 2, 4, 6 (devices {0, 4} and {2, 6}).
  const std::vector<rank_place> cyclic = {{0, 0}, {1, 1}, {0, 2}, {1, 3},
                                          {0, 0}, {1, 1}, {0, 2}, {1, 3}};
  EXPECT_EQ(placement_of(cyclic), (std::vector<int>{0, 4, 2, 6, 1, 5, 3, 7}));
  // Two ranks a device, bound in blocks: rank order, as a placement (counted x fastest).
  EXPECT_EQ(placement_of({{0, 0}, {0, 0}, {0, 2}, {0, 2}}), (std::vector<int>{0, 1, 2, 3}));
  // Each rank a device of its own, nodes in blocks: nothing to group, no placement.
  EXPECT_TRUE(placement_of({{0, 0}, {0, 1}, {2, 2}, {2, 3}}).empty());
  // ... but nodes holding every other rank are grouped.
  EXPECT_EQ(placement_of({{0, 0}, {1, 1}, {0, 2}, {1, 3}}), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_TRUE(placement_of({}).empty());
}

TEST(GridSplit, RejectsBadRequestsNamingTheValue) {
  using funnel::detail::checked_dims;
  expect_invalid(
      [] {
        (void)checked_dims(4, {8, 0, 8}, 1, {0, 0, 0});
      },
      {"along y is 0", ">= 1 cell"});
  expect_invalid([] { (void)checked_dims(4, {8, 8, -3}, 1, {0, 0, 0}); }, {"along z is -3"});
  expect_invalid(
      [] {
        (void)checked_dims(1, {std::int64_t{1} << 40, 1 << 20, 1 << 10}, 1, {});
      },
      {"overflow a 64-bit cell count"});
  expect_invalid([] { (void)checked_dims(4, {8, 8, 8}, 0, {0, 0, 0}); }, {"halo 0", ">= 1"});
  expect_invalid([] { (void)checked_dims(4, {8, 8, 8}, -1, {0, 0, 0}); }, {"halo -1"});
  expect_invalid(
      [] {
        (void)checked_dims(6, {64, 64, 64}, 1, {2, 2, 2});
      },
      {"dims (2, 2, 2) make 8 ranks", "has 6"});
  expect_invalid(
      [] {
        (void)checked_dims(6, {64, 64, 64}, 1, {4, 0, 0});
      },
      {"fixed entries make 4 ranks", "does not divide 6"});
  // Products of the entries are exact (no 64-bit wrap), or said to be too large.
  expect_invalid(
      [] {
        (void)checked_dims(1, {8, 8, 8}, 1, {2000000, 2000000, 2000000});
      },
      {"make 8000000000000000000 ranks"});
  const int most = std::numeric_limits<int>::max();
  expect_invalid(
      [&] {
        (void)checked_dims(1, {8, 8, 8}, 1, {most, most, most});
      },
      {"make more than 2^63 ranks"});
  expect_invalid(
      [&] {
        (void)checked_dims(1, {8, 8, 8}, 1, {most, most, 0});
      },
      {"fixed entries make 4611686014132420609 ranks"});
  // A grid whose axes of one cell leave no axis to split over the ranks (was MPI_ERR_DIMS from
  // MPI_Dims_create, a fatal MPI error).
  expect_invalid(
      [] {
        (void)checked_dims(2, {1, 1, 1}, 1, {0, 0, 0});
      },
      {"global cells (1, 1, 1) over 2 ranks", "takes 1 rank(s)"});
  expect_invalid([] { (void)checked_dims(3, {1, 1, 1}, 1, {0, 0, 0}); }, {"over 3 ranks"});
  expect_invalid(
      [] {
        (void)checked_dims(4, {1, 8, 1}, 1, {0, 2, 0});
      },
      {"--dims fixes the others", "takes 2 rank(s)"});
  // No split fits: the most balanced one is named with its failing axis.
  expect_invalid(
      [] {
        (void)checked_dims(7, {5, 5, 5}, 1, {0, 0, 0});
      },
      {"more ranks than cells along", "7 ranks for 5 cells"});
  expect_invalid(
      [] {
        (void)checked_dims(4, {64, 64, 64}, 1, {-1, 0, 0});
      },
      {"dims (-1, 0, 0)", "must be >= 0"});
  expect_invalid(
      [] {
        (void)checked_dims(4, {64, 64, 1}, 1, {2, 1, 2});
      },
      {"2 ranks along z", "only 1 cell"});
  expect_invalid(
      [] {
        (void)checked_dims(8, {5, 100, 1}, 1, {8, 1, 1});
      },
      {"more ranks than cells along x", "8 ranks for 5 cells"});
  expect_invalid(
      [] {
        (void)checked_dims(4, {7, 100, 1}, 1, {4, 1, 1});
      },
      {"boxes of 1 cell", "along x"});
  expect_invalid(
      [] {
        (void)checked_dims(4, {64, 10, 1}, 3, {1, 4, 0});
      },
      {"halo 3 is wider than the smallest local extent 2 along y"});
}

// Random boxes in [-2, 10)^3 (inverted ones included): every cell of `outer` outside `inner` lies
// in exactly one slab, no other cell in any, and there are at most six non-empty slabs.
TEST(BoxDifference, SlabsTileTheOuterBoxOutsideTheInner) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> coordinate(-2, 9);
  const auto inside = [](const box& b, std::int64_t x, std::int64_t y, std::int64_t z) {
    return x >= b.lo[0] && x < b.hi[0] && y >= b.lo[1] && y < b.hi[1] && z >= b.lo[2] &&
           z < b.hi[2];
  };
  for (int trial = 0; trial < 500; ++trial) {
    box outer;
    box inner;
    for (int axis = 0; axis < 3; ++axis) {
      outer.lo[axis] = coordinate(rng);
      outer.hi[axis] = outer.lo[axis] + std::uniform_int_distribution<int>(0, 6)(rng);
      inner.lo[axis] = coordinate(rng);
      inner.hi[axis] = coordinate(rng);
    }
    const std::vector<box> slabs = funnel::detail::box_difference(outer, inner);
    ASSERT_LE(slabs.size(), 6u);
    for (const box& slab : slabs) ASSERT_FALSE(slab.empty());
    for (std::int64_t z = -2; z < 16; ++z) {
      for (std::int64_t y = -2; y < 16; ++y) {
        for (std::int64_t x = -2; x < 16; ++x) {
          int count = 0;
          for (const box& slab : slabs) count += inside(slab, x, y, z) ? 1 : 0;
          const bool wanted = inside(outer, x, y, z) && !inside(inner, x, y, z);
          ASSERT_EQ(count, wanted ? 1 : 0) << "cell " << x << "," << y << "," << z;
        }
      }
    }
  }
}

// A chunk's frame: z slabs are whole planes (contiguous), then y rows, then x columns; empty
// slabs are left out; an inner box that covers the outer leaves nothing.
TEST(BoxDifference, PeelsWholePlanesFirst) {
  using funnel::detail::box_difference;
  const box outer{{0, 0, 0}, {6, 5, 8}};
  const std::vector<box> shell = box_difference(outer, {{1, 1, 2}, {5, 4, 7}});
  ASSERT_EQ(shell.size(), 6u);
  EXPECT_EQ(shell[0], (box{{0, 0, 0}, {6, 5, 2}}));
  EXPECT_EQ(shell[1], (box{{0, 0, 7}, {6, 5, 8}}));
  EXPECT_EQ(shell[2], (box{{0, 0, 2}, {6, 1, 7}}));
  EXPECT_EQ(shell[3], (box{{0, 4, 2}, {6, 5, 7}}));
  EXPECT_EQ(shell[4], (box{{0, 1, 2}, {1, 4, 7}}));
  EXPECT_EQ(shell[5], (box{{5, 1, 2}, {6, 4, 7}}));
  // An axis of one cell spanned by both, a face with nothing to peel.
  const std::vector<box> thin = box_difference({{0, 0, 0}, {1, 5, 8}}, {{0, 1, 0}, {1, 4, 8}});
  ASSERT_EQ(thin.size(), 2u);
  EXPECT_EQ(thin[0], (box{{0, 0, 0}, {1, 1, 8}}));
  EXPECT_EQ(thin[1], (box{{0, 4, 0}, {1, 5, 8}}));
  EXPECT_TRUE(box_difference(outer, {{-1, 0, 0}, {6, 9, 8}}).empty());
  EXPECT_EQ(box_difference(outer, {{6, 0, 0}, {9, 5, 8}}), std::vector<box>{outer});
  EXPECT_TRUE(box_difference({{0, 0, 0}, {0, 5, 8}}, {{1, 1, 1}, {2, 2, 2}}).empty());
}

// Padded rows: every cell has its own element inside the array, each row's cells are
// contiguous inside its slot of row_pitch() elements, and each row's first interior cell sits on
// a multiple of row_align; row_align 1 is the unpadded (k * ny + j) * nx + i.
TEST(FieldLayout, PaddedRowsPutEveryRowsInteriorOnTheAlignment) {
  for (const int align : {1, 2, 4, 8}) {
    for (int halo = 1; halo <= 3; ++halo) {
      for (std::int64_t nx : {1, 2, 3, 5, 8, 13}) {
        const funnel::field_layout layout{{nx, 3, 2}, halo, align};
        SCOPED_TRACE("row_align " + std::to_string(align) + ", halo " + std::to_string(halo) +
                     ", nx " + std::to_string(nx));
        ASSERT_TRUE(layout.row_align_valid());
        EXPECT_EQ(layout.row_pitch() % align, 0);
        EXPECT_LE(layout.lead() + layout.allocated(0), layout.row_pitch());
        EXPECT_LT(layout.lead(), align);
        // The least padding that aligns: less than one more `align` would be wasted.
        EXPECT_LT(layout.row_pitch(), layout.lead() + layout.allocated(0) + align);
        EXPECT_EQ(layout.plane_pitch(), layout.row_pitch() * layout.allocated(1));
        EXPECT_EQ(layout.allocated_cells(), layout.plane_pitch() * layout.allocated(2));
        EXPECT_EQ(layout.padded(), layout.row_pitch() != layout.allocated(0));
        std::vector<int> used(static_cast<std::size_t>(layout.allocated_cells()), 0);
        for (std::int64_t k = 0; k < layout.allocated(2); ++k) {
          for (std::int64_t j = 0; j < layout.allocated(1); ++j) {
            const std::int64_t row = layout.index(0, j, k);
            EXPECT_EQ(row, (k * layout.allocated(1) + j) * layout.row_pitch() + layout.lead());
            EXPECT_EQ(layout.index(layout.halo_along(0), j, k) % align, 0);
            for (std::int64_t i = 0; i < layout.allocated(0); ++i) {
              const std::int64_t at = layout.index(i, j, k);
              ASSERT_EQ(at, row + i);
              ASSERT_GE(at, 0);
              ASSERT_LT(at, layout.allocated_cells());
              ++used[static_cast<std::size_t>(at)];
            }
          }
        }
        for (const int count : used) ASSERT_LE(count, 1);
        if (align == 1) {
          EXPECT_FALSE(layout.padded());
          EXPECT_EQ(layout.index(1, 2, 1),
                    (1 * layout.allocated(1) + 2) * (nx + 2 * layout.halo_along(0)) + 1);
        }
      }
    }
  }
  EXPECT_EQ(funnel::row_align_for(4, 16), 4);
  EXPECT_EQ(funnel::row_align_for(8, 16), 2);
  EXPECT_EQ(funnel::row_align_for(8, 8), 1);
  EXPECT_EQ(funnel::row_align_for(4, 0), 1);
  EXPECT_FALSE((funnel::field_layout{{4, 4, 4}, 1, 3}.row_align_valid()));
  EXPECT_FALSE((funnel::field_layout{{4, 4, 4}, 1, 0}.row_align_valid()));
  EXPECT_TRUE(funnel::valid_row_align(1));
  EXPECT_TRUE(funnel::valid_row_align(16));
  EXPECT_FALSE(funnel::valid_row_align(6));
  EXPECT_FALSE(funnel::valid_row_align(-4));
}

TEST(CartesianDecomposition, RowAlignmentReachesEveryLayout) {
  funnel::cartesian_decomposition d(MPI_COMM_SELF, {10, 6, 4}, 1);
  EXPECT_EQ(d.row_align(), 1);
  EXPECT_EQ(d.layout().row_align, 1);
  d.set_row_align(4);
  EXPECT_EQ(d.row_align(), 4);
  EXPECT_EQ(d.layout().row_align, 4);
  EXPECT_EQ(d.layout_of(d.box_of(0)).row_align, 4);
  EXPECT_EQ(d.layout().row_pitch(), 16);  // lead 3 + 12 cells, rounded up to 4
  expect_invalid([&] { d.set_row_align(3); }, {"row alignment 3", "power of two"});
  expect_invalid([&] { d.set_row_align(0); }, {"row alignment 0"});
  EXPECT_EQ(d.row_align(), 4);
  funnel::cartesian_decomposition moved(std::move(d));
  EXPECT_EQ(moved.layout().row_align, 4);
}

TEST(CartesianDecomposition, OneRankOwnsEverything) {
  const funnel::cartesian_decomposition d(MPI_COMM_SELF, {12, 5, 1}, 2);
  EXPECT_EQ(d.size(), 1);
  EXPECT_EQ(d.rank(), 0);
  EXPECT_EQ(d.dims(), (dims3{1, 1, 1}));
  EXPECT_EQ(d.local_box(), (box{{0, 0, 0}, {12, 5, 1}}));
  EXPECT_EQ(d.box_of(0), d.local_box());
  const funnel::field_layout layout = d.layout();
  EXPECT_EQ(layout.interior, (index3{12, 5, 1}));
  EXPECT_EQ(layout.halo, 2);
  EXPECT_EQ(layout.allocated(2), 1);
  for (int axis = 0; axis < 3; ++axis) {
    EXPECT_EQ(d.neighbor(axis, funnel::side::lower), MPI_PROC_NULL);
    EXPECT_EQ(d.neighbor(axis, funnel::side::upper), MPI_PROC_NULL);
  }
}

TEST(CartesianDecomposition, PeriodicAxisOfOneRankIsItsOwnNeighbour) {
  const funnel::cartesian_decomposition d(MPI_COMM_SELF, {8, 8, 8}, 1, {0, 0, 0},
                                          {false, true, false});
  EXPECT_EQ(d.neighbor(1, funnel::side::lower), 0);
  EXPECT_EQ(d.neighbor(1, funnel::side::upper), 0);
  EXPECT_EQ(d.neighbor(0, funnel::side::upper), MPI_PROC_NULL);
  EXPECT_EQ(d.periodic(), (std::array<bool, 3>{false, true, false}));
}

TEST(CartesianDecomposition, MovesTheCommunicator) {
  funnel::cartesian_decomposition a(MPI_COMM_SELF, {8, 8, 1}, 1);
  const MPI_Comm comm = a.comm();
  ASSERT_NE(comm, MPI_COMM_NULL);
  funnel::cartesian_decomposition b(std::move(a));
  EXPECT_EQ(b.comm(), comm);
  EXPECT_EQ(a.comm(), MPI_COMM_NULL);  // NOLINT(bugprone-use-after-move): checking the move
  funnel::cartesian_decomposition c(MPI_COMM_SELF, {4, 4, 1}, 1);
  c = std::move(b);
  EXPECT_EQ(c.comm(), comm);
  EXPECT_EQ(c.local_box().hi, (index3{8, 8, 1}));
}

TEST(CartesianDecomposition, RejectsBadArguments) {
  expect_invalid(
      [] {
        funnel::cartesian_decomposition(MPI_COMM_NULL, {8, 8, 8}, 1);
      },
      {"MPI_COMM_NULL"});
  expect_invalid(
      [] {
        funnel::cartesian_decomposition(MPI_COMM_SELF, {8, 8, 8}, 9);
      },
      {"halo 9 is wider"});
  const funnel::cartesian_decomposition d(MPI_COMM_SELF, {8, 8, 8}, 1);
  expect_invalid([&] { (void)d.box_of(1); }, {"rank 1 is outside", "[0, 1)"});
  expect_invalid([&] { (void)d.box_of(-1); }, {"rank -1"});
  expect_invalid([&] { (void)d.neighbor(3, funnel::side::lower); }, {"axis 3"});
  expect_invalid([&] { (void)d.box_at({0, 1, 0}); }, {"coordinate 1 along axis 1"});
}

}  // namespace
