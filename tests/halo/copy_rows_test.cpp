// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The plan of the CUDA strided copy (framework/src/halo/copy_rows.hpp): which dimensions merge
// into runs, which unit moves, and how many threads cover it, without a GPU: single cases, and a
// sweep that copies random boxes between random layouts and buffer offsets on the host by the
// plan's rows and units (the arithmetic of the device loop, cuda/copy_cells.cuh) and compares
// with a cell-by-cell copy. The device loop itself is checked by box_copy_gpu.
#include "copy_rows.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

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
  // A row of an odd number of floats at an aligned start: 4-byte units; as doubles, 8-byte ones.
  const field_layout odd{{126, 1, 1}, 1};  // one row of 128 cells; nothing else to merge
  const box row{{0, 0, 0}, {127, 1, 1}};
  const copy_rows floats = plan_copy_rows(field_copy(odd, row, 4), 4);
  EXPECT_EQ(floats.unit, 4);
  EXPECT_EQ(floats.row_units, 127);
  EXPECT_EQ(plan_copy_rows(field_copy(odd, row, 8), 8).unit, 8);
  // A 1-byte word (elements of 3 bytes) moves in whatever unit the bytes allow.
  const field_layout bytes{{14, 4, 4}, 1};  // rows of 16 cells
  const box all{{0, 0, 0}, {16, 6, 6}};
  EXPECT_EQ(plan_copy_rows(field_copy(bytes, all, 1), 1).unit, 16);
  // An unaligned base caps the unit.
  strided_copy shifted = field_copy(rank_box, box{{0, 0, 2}, {516, 260, 4}}, 4);
  shifted.src.base = static_cast<char*>(shifted.src.base) + 8;
  EXPECT_EQ(plan_copy_rows(shifted, 4).unit, 8);
}

// Strides no field layout makes (planes not a whole number of rows) still bound the unit.
TEST(CopyRows, EveryStrideInUseBoundsTheUnit) {
  strided_copy c{{aligned_base, 8, 18}, {aligned_base, 8, 18}, {4, 2, 2}};  // 4-byte words
  const copy_rows p = plan_copy_rows(c, 4);
  EXPECT_EQ(p.rows, 4);
  EXPECT_EQ(p.rows_y, 2);  // planes apart: 18 is not 2 x 8
  EXPECT_EQ(p.unit, 8);    // rows of 16 bytes 32 bytes apart, but planes 72 bytes apart
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
    EXPECT_EQ(p.row_units * p.unit, cells * 4) << cells;
    EXPECT_GE(p.pieces, 1) << cells;
    EXPECT_GE(p.pieces * p.lanes * funnel::detail::units_per_lane, p.row_units) << cells;
    EXPECT_LT((p.pieces - 1) * p.lanes * funnel::detail::units_per_lane, p.row_units) << cells;
  }
}

// Applies plan `p` to the bytes at `src` and `dst` (the copy's bases) as the device loop does:
// row r at (r / rows_y, r % rows_y), unit i of it at i * unit bytes; every piece of every lane.
// Returns the accesses whose address is not a multiple of the unit (a vector load or store
// there would fault on the GPU).
std::int64_t copy_by_plan(const copy_rows& p, const unsigned char* src, unsigned char* dst) {
  std::int64_t misaligned = 0;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const std::int64_t k = r / p.rows_y;
    const std::int64_t j = r % p.rows_y;
    for (std::int64_t piece = 0; piece < p.pieces; ++piece) {
      for (std::int64_t lane = 0; lane < p.lanes; ++lane) {
        for (int u = 0; u < funnel::detail::units_per_lane; ++u) {
          const std::int64_t i = (piece * funnel::detail::units_per_lane + u) * p.lanes + lane;
          if (i >= p.row_units) continue;
          unsigned char* to = dst + (k * p.dst_sz + j * p.dst_sy + i) * p.unit;
          const unsigned char* from = src + (k * p.src_sz + j * p.src_sy + i) * p.unit;
          const auto unit = static_cast<std::uintptr_t>(p.unit);
          misaligned +=
              static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(to) % unit != 0 ||
                                        reinterpret_cast<std::uintptr_t>(from) % unit != 0);
          std::memcpy(to, from, static_cast<std::size_t>(p.unit));
        }
      }
    }
  }
  return misaligned;
}

// Random boxes copied between fields of different layouts (or into a dense buffer), at random
// byte offsets of 16-byte-aligned buffers, for words of 1, 4 and 8 bytes: the plan's copy equals
// a cell-by-cell one, and its unit divides every start, length and stride it moves by.
TEST(CopyRows, PlannedCopiesEqualACellByCellCopy) {
  std::mt19937_64 rng(20261127);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  int units_seen[17] = {};
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t word = std::vector<std::int64_t>{1, 4, 8}[trial % 3];
    const field_layout src_lay{{pick(1, 40), pick(1, 6), pick(1, 5)}, static_cast<int>(pick(1, 2))};
    box region;
    for (int a = 0; a < 3; ++a) {
      region.lo[a] = pick(0, src_lay.allocated(a) - 1);
      region.hi[a] = pick(region.lo[a] + 1, src_lay.allocated(a));
    }
    // Whole rows of the source (x full) in two shapes of four, with whole planes (x and y
    // full) in one of them; each shape with a dense and a field destination.
    const int shape = (trial / 2) % 4;
    for (int a = 0; a < 2; ++a) {
      if (shape == 1 + a || (a == 0 && shape == 2)) {
        region.lo[a] = 0;
        region.hi[a] = src_lay.allocated(a);
      }
    }
    // Half the time a dense buffer, else a field as large or larger with the box shifted.
    const bool dense = trial % 2 == 0;
    field_layout dst_lay = src_lay;
    box dst_region = region;
    if (!dense) {
      for (int a = 0; a < 3; ++a) {
        dst_lay.interior[a] = src_lay.interior[a] + (src_lay.interior[a] > 1 ? pick(0, 3) : 0);
      }
      for (int a = 0; a < 3; ++a) {
        const std::int64_t room = dst_lay.allocated(a) - region.extent(a);
        dst_region.lo[a] = pick(0, room);
        dst_region.hi[a] = dst_region.lo[a] + region.extent(a);
      }
    }
    const std::int64_t src_shift = pick(0, 3) * word;
    const std::int64_t dst_shift = pick(0, 3) * word;
    const auto src_bytes = static_cast<std::size_t>(src_lay.allocated_cells() * word);
    const auto dst_bytes =
        static_cast<std::size_t>((dense ? region.cells() : dst_lay.allocated_cells()) * word);
    // 16-byte-aligned storage (std::vector of 16-byte elements), the arrays at the shifts.
    struct alignas(16) chunk {
      unsigned char b[16];
    };
    std::vector<chunk> src_store(src_bytes / 16 + 2);
    std::vector<chunk> dst_store(dst_bytes / 16 + 2);
    auto* src = reinterpret_cast<unsigned char*>(src_store.data()) + src_shift;
    auto* dst = reinterpret_cast<unsigned char*>(dst_store.data()) + dst_shift;
    for (std::size_t b = 0; b < src_bytes; ++b) src[b] = static_cast<unsigned char>(rng());
    std::memset(dst, 0xA5, dst_bytes);
    std::vector<unsigned char> want(dst, dst + dst_bytes);

    strided_copy c{
        dense
            ? funnel::detail::dense_block(dst, region.extents())
            : funnel::detail::field_block(dst, dst_lay, dst_region, static_cast<std::size_t>(word)),
        funnel::detail::field_block(src, src_lay, region, static_cast<std::size_t>(word)),
        region.extents()};
    const copy_rows p = plan_copy_rows(c, word);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": word " + std::to_string(word) + ", unit " +
                 std::to_string(p.unit) + (dense ? ", dense" : ", field"));
    ++units_seen[p.unit];
    // The unit divides what it moves by: the copy's bytes, both starts, the strides in use.
    EXPECT_EQ(p.row_units * p.unit * p.rows, region.cells() * word);
    const auto at = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q); };
    EXPECT_EQ(at(c.src.base) % static_cast<std::uintptr_t>(p.unit), 0U);
    EXPECT_EQ(at(c.dst.base) % static_cast<std::uintptr_t>(p.unit), 0U);
    EXPECT_EQ(p.unit % word, 0);

    // want is indexed from dst, the copy's destination starts at c.dst.base inside it.
    const auto dst_start = static_cast<std::size_t>(static_cast<unsigned char*>(c.dst.base) - dst);
    const std::int64_t cells = region.cells();
    for (std::int64_t n = 0; n < cells; ++n) {
      const std::int64_t i = n % region.extent(0);
      const std::int64_t j = n / region.extent(0) % region.extent(1);
      const std::int64_t k = n / region.extent(0) / region.extent(1);
      const auto from =
          static_cast<std::size_t>((k * c.src.stride_z + j * c.src.stride_y + i) * word);
      const auto to =
          static_cast<std::size_t>((k * c.dst.stride_z + j * c.dst.stride_y + i) * word);
      std::memcpy(&want[dst_start + to], static_cast<const unsigned char*>(c.src.base) + from,
                  static_cast<std::size_t>(word));
    }
    EXPECT_EQ(copy_by_plan(p, static_cast<const unsigned char*>(c.src.base),
                           static_cast<unsigned char*>(c.dst.base)),
              0);
    EXPECT_EQ(std::vector<unsigned char>(dst, dst + dst_bytes), want);
  }
  // The sweep reached every unit width.
  for (const int unit : {1, 4, 8, 16}) EXPECT_GT(units_seen[unit], 0) << unit;
}

TEST(CopyRows, EmptyCopyHasNoThreads) {
  strided_copy c = field_copy(rank_box, box{{0, 0, 0}, {4, 4, 4}}, 4);
  c.extent = {4, 0, 4};
  EXPECT_EQ(plan_copy_rows(c, 4).rows, 0);
  EXPECT_EQ(plan_copy_rows(c, 4).threads(), 0);
}

}  // namespace
