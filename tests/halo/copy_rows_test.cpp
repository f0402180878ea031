// The plan of the CUDA strided copy (framework/src/halo/copy_rows.hpp): which dimensions merge
// into runs, which unit moves, and how many threads cover it. Host-only arithmetic; the copies
// themselves are checked against a loop by box_copy_test.cpp on the host and on the GPU.
#include "copy_rows.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "strided_copy.hpp"

namespace {

using funnel::box;
using funnel::field_layout;
using funnel::detail::copy_rows;
using funnel::detail::plan_copy_rows;
using funnel::detail::strided_copy;

// A fake device address, 256-byte aligned like a pool allocation.
void* const aligned_base = reinterpret_cast<void*>(std::uintptr_t{1} << 20);

// A copy of `region` between two fields of `layout` (words of `word` bytes) at aligned bases.
strided_copy field_copy(const field_layout& layout, const box& region, std::size_t word) {
  return {funnel::detail::field_block(aligned_base, layout, region, word),
          funnel::detail::field_block(aligned_base, layout, region, word), region.extents()};
}

// 512 x 256 x 128 floats with a 2-deep halo: one rank's box of 512^3 on 8 ranks (1x2x4).
const field_layout rank_box{{512, 256, 128}, 2};

TEST(CopyRows, WholePlanesAreOneRun) {
  // The z face sent to a neighbour: every x and y of two planes, contiguous in both fields.
  const box face{{0, 0, 2}, {516, 260, 4}};
  const copy_rows p = plan_copy_rows(field_copy(rank_box, face, 4), 4);
  EXPECT_EQ(p.rows, 1);
  EXPECT_EQ(p.unit, 16);
  EXPECT_EQ(p.row_units, 516 * 260 * 2 / 4);
  EXPECT_EQ(p.lanes, 32);
  EXPECT_EQ(p.pieces, (p.row_units + 32 * funnel::detail::units_per_lane - 1) /
                          (32 * funnel::detail::units_per_lane));
  EXPECT_EQ(p.threads(), p.pieces * 32);
}

TEST(CopyRows, FullRowsMergeWithinAPlane) {
  // The y face: two whole rows of every plane; planes are not contiguous.
  const box face{{0, 2, 0}, {516, 4, 132}};
  const copy_rows p = plan_copy_rows(field_copy(rank_box, face, 4), 4);
  EXPECT_EQ(p.unit, 16);
  EXPECT_EQ(p.row_units, 516 * 2 / 4);
  EXPECT_EQ(p.rows, 132);
  EXPECT_EQ(p.src_sy, 516 * 260 / 4);  // the next run is the next plane's
  EXPECT_EQ(p.dst_sy, p.src_sy);
}

TEST(CopyRows, NarrowFacesTakeALaneARow) {
  // The x face: two cells of every row of every plane (8 bytes), planes at whole rows.
  const box face{{2, 0, 0}, {4, 260, 132}};
  const copy_rows p = plan_copy_rows(field_copy(rank_box, face, 4), 4);
  EXPECT_EQ(p.unit, 8);
  EXPECT_EQ(p.row_units, 1);
  EXPECT_EQ(p.lanes, 1);
  EXPECT_EQ(p.pieces, 1);
  EXPECT_EQ(p.rows, 260 * 132);
  EXPECT_EQ(p.rows_y, p.rows);  // no division by the rows of a plane
  EXPECT_EQ(p.src_sy, 516 / 2);
  // Only part of the rows of each plane: planes apart.
  const box part{{2, 2, 2}, {4, 258, 130}};
  const copy_rows q = plan_copy_rows(field_copy(rank_box, part, 4), 4);
  EXPECT_EQ(q.rows_y, 256);
  EXPECT_EQ(q.rows, 256 * 128);
  EXPECT_EQ(q.src_sz, 516 * 260 / 2);
}

TEST(CopyRows, UnitFollowsTheStartAndTheLength) {
  // Interior rows start two floats past a 16-byte boundary: 8-byte units; one more, 4-byte.
  const box interior{{2, 2, 2}, {514, 258, 130}};
  EXPECT_EQ(plan_copy_rows(field_copy(rank_box, interior, 4), 4).unit, 8);
  const box odd_start{{3, 2, 2}, {515, 258, 130}};
  EXPECT_EQ(plan_copy_rows(field_copy(rank_box, odd_start, 4), 4).unit, 4);
  // Rows of an odd number of floats on n + 2 = 131 allocated cells: 4-byte units, and doubles
  // move as 8-byte units.
  const field_layout odd{{129, 10, 10}, 1};
  const box rows{{0, 1, 1}, {131, 3, 10}};
  EXPECT_EQ(plan_copy_rows(field_copy(odd, rows, 4), 4).unit, 4);
  EXPECT_EQ(plan_copy_rows(field_copy(odd, rows, 8), 8).unit, 8);
  // A 1-byte word (elements of 3 bytes) moves in whatever unit the bytes allow.
  const field_layout bytes{{14, 4, 4}, 1};  // rows of 16 cells
  const box all{{0, 0, 0}, {16, 6, 6}};
  EXPECT_EQ(plan_copy_rows(field_copy(bytes, all, 1), 1).unit, 16);
  // An unaligned base caps the unit.
  strided_copy shifted = field_copy(rank_box, box{{0, 0, 2}, {516, 260, 4}}, 4);
  shifted.src.base = static_cast<char*>(shifted.src.base) + 8;
  EXPECT_EQ(plan_copy_rows(shifted, 4).unit, 8);
}

TEST(CopyRows, DenseBufferMergesOnlyWhereTheFieldIsContiguous) {
  // Packing the y face into a dense buffer: the buffer is contiguous, the field only per plane.
  const box face{{0, 2, 0}, {516, 4, 132}};
  strided_copy c = field_copy(rank_box, face, 4);
  c.dst = funnel::detail::dense_block(aligned_base, face.extents());
  const copy_rows p = plan_copy_rows(c, 4);
  EXPECT_EQ(p.rows, 132);
  EXPECT_EQ(p.row_units, 516 * 2 / 4);
  EXPECT_EQ(p.dst_sy, p.row_units);  // consecutive in the buffer
  EXPECT_EQ(p.src_sy, 516 * 260 / 4);
}

TEST(CopyRows, LanesArePowersOfTwoUpToAWarp) {
  const field_layout wide{{1022, 2, 2}, 1};  // rows of 1024 floats
  for (const std::int64_t cells : {1, 3, 4, 8, 33 * 4, 1024}) {
    const box row{{0, 1, 1}, {cells, 2, 2}};
    const copy_rows p = plan_copy_rows(field_copy(wide, row, 4), 4);
    EXPECT_GE(p.lanes, 1);
    EXPECT_LE(p.lanes, 32);
    EXPECT_EQ(p.lanes & (p.lanes - 1), 0) << p.lanes;
    EXPECT_TRUE(p.lanes == 32 || p.lanes >= p.row_units) << cells;
    EXPECT_GE(p.pieces * p.lanes * funnel::detail::units_per_lane, p.row_units) << cells;
    EXPECT_LT((p.pieces - 1) * p.lanes * funnel::detail::units_per_lane, p.row_units) << cells;
  }
}

TEST(CopyRows, EmptyCopyHasNoThreads) {
  strided_copy c = field_copy(rank_box, box{{0, 0, 0}, {4, 4, 4}}, 4);
  c.extent = {4, 0, 4};
  EXPECT_EQ(plan_copy_rows(c, 4).rows, 0);
  EXPECT_EQ(plan_copy_rows(c, 4).threads(), 0);
}

}  // namespace
