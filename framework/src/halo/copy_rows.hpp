// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Internal: a strided copy as rows of equal length, the plan behind the CUDA copy loop
// (cuda/copy_cells.cuh). The host makes it once per copy and passes it to the kernel with the
// copy (the launch sizes its grid from it); plain C++, so the unit tests check it without a GPU.
//
// A halo face is a box of a field: along x a run of contiguous cells, along y and z strided. The
// plan merges the dimensions that are contiguous in both arrays (a face of whole planes is one
// run), moves the widest unit (16, 8, 4, 2 or 1 bytes, no narrower than the copy's word) that
// every run's length and start and every stride in use allow, and gives each run up to a warp of
// lanes, each lane `units_per_lane` independent accesses. The loop then decodes a piece's row
// with at most two divisions (a row of several pieces, a copy of several planes of rows) instead
// of four 64-bit divisions per cell (docs/halo.md, "The exchange's copies as rows").
#pragma once

#include <cstdint>
#include <string>

#include "funnel/error.hpp"
#include "strided_copy.hpp"

namespace funnel::detail {

/// Accesses one lane makes per piece of a row (independent loads in flight).
constexpr int units_per_lane = 4;

/// A strided copy as `rows` runs of `row_units` units of `unit` bytes each.
struct copy_rows {
  int unit = 1;                ///< bytes per access: 16, 8, 4, 2 or 1
  std::int64_t row_units = 0;  ///< units per row
  std::int64_t rows_y = 1;     ///< rows per plane (row r is (r % rows_y, r / rows_y))
  std::int64_t rows = 0;       ///< rows in all (0: nothing to copy)
  std::int64_t src_sy = 0;     ///< source units between rows of a plane
  std::int64_t src_sz = 0;     ///< source units between planes
  std::int64_t dst_sy = 0;     ///< destination units between rows of a plane
  std::int64_t dst_sz = 0;     ///< destination units between planes
  int lanes = 1;               ///< threads per row: a power of two, at most 32
  std::int64_t pieces = 0;     ///< pieces of lanes * units_per_lane units per row

  /// Threads that cover the copy with one piece each.
  [[nodiscard]] std::int64_t threads() const { return rows * pieces * lanes; }
};

/// The rows of copy `c`, whose extent and strides count words of `word` bytes (a power of two
/// up to 16; the callers use 1, 4 and 8).
inline copy_rows plan_copy_rows(const strided_copy& c, std::int64_t word) {
  FUNNEL_EXPECTS(word == 1 || word == 2 || word == 4 || word == 8 || word == 16,
                 "funnel::halo copy plan: a word of " + std::to_string(word) +
                     " bytes (1, 2, 4, 8 or 16 allowed)");
  copy_rows p;
  std::int64_t n[3] = {c.extent[0], c.extent[1], c.extent[2]};
  if (n[0] <= 0 || n[1] <= 0 || n[2] <= 0) return p;
  std::int64_t src[2] = {c.src.stride_y, c.src.stride_z};
  std::int64_t dst[2] = {c.dst.stride_y, c.dst.stride_z};
  // y into x where the rows follow each other in both arrays, then z into the runs so made.
  for (int merged = 0; merged < 2; ++merged) {
    if (n[1] != 1 && (src[0] != n[0] || dst[0] != n[0])) break;
    n[0] *= n[1];
    n[1] = n[2];
    n[2] = 1;
    src[0] = src[1];
    dst[0] = dst[1];
  }
  // Planes at a whole number of rows in both arrays: every row at r * stride, no division.
  if (n[2] != 1 && src[1] == n[1] * src[0] && dst[1] == n[1] * dst[0]) {
    n[1] *= n[2];
    n[2] = 1;
  }
  // The widest unit that the row length, both starts and every stride in use are multiples of.
  // Every size here is a power of two, so the plan divides by shifting.
  const auto src_at = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(c.src.base));
  const auto dst_at = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(c.dst.base));
  std::int64_t along = n[0] * word | src_at | dst_at;
  if (n[1] > 1) along |= (src[0] | dst[0]) * word;
  if (n[2] > 1) along |= (src[1] | dst[1]) * word;
  p.unit = static_cast<int>(word);
  for (std::int64_t unit = 16; unit > word; unit /= 2) {
    if ((along & (unit - 1)) == 0) {
      p.unit = static_cast<int>(unit);
      break;
    }
  }
  int words_shift = 0;  // log2(unit / word)
  while ((word << words_shift) < p.unit) ++words_shift;
  p.row_units = n[0] >> words_shift;
  p.rows_y = n[1];
  p.rows = n[1] * n[2];
  p.src_sy = src[0] >> words_shift;
  p.src_sz = src[1] >> words_shift;
  p.dst_sy = dst[0] >> words_shift;
  p.dst_sz = dst[1] >> words_shift;
  int piece_shift = 2;  // log2(lanes * units_per_lane)
  static_assert(units_per_lane == 4, "piece_shift starts at log2(units_per_lane)");
  while (p.lanes < 32 && p.lanes < p.row_units) {
    p.lanes *= 2;
    ++piece_shift;
  }
  p.pieces = (p.row_units + (std::int64_t{1} << piece_shift) - 1) >> piece_shift;
  return p;
}

}  // namespace funnel::detail
