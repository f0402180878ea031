// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/io/grid_block.hpp"

#include <string>

#include "funnel/error.hpp"

namespace funnel::io {
namespace {

std::string to_text(const index3& v) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

std::string to_text(const box& b) { return "[" + to_text(b.lo) + ", " + to_text(b.hi) + ")"; }

}  // namespace

void validate(const grid_block& block) {
  for (int axis = 0; axis < 3; ++axis) {
    FUNNEL_EXPECTS(block.global_cells[axis] > 0, "global cells " + to_text(block.global_cells) +
                                                     " must be positive on every axis");
    FUNNEL_EXPECTS(
        block.local_box.empty() ||
            (block.local_box.lo[axis] >= 0 && block.local_box.hi[axis] <= block.global_cells[axis]),
        "local box " + to_text(block.local_box) + " must lie inside the global grid " +
            to_text(block.global_cells));
  }
  FUNNEL_EXPECTS(block.local_box.empty() || block.layout.interior == block.local_box.extents(),
                 "layout interior " + to_text(block.layout.interior) +
                     " must equal the local box extents " + to_text(block.local_box.extents()));
  FUNNEL_EXPECTS(block.layout.halo >= 0,
                 "layout halo " + std::to_string(block.layout.halo) + " must be >= 0");
  FUNNEL_EXPECTS(block.layout.row_align_valid(), "layout row alignment " +
                                                     std::to_string(block.layout.row_align) +
                                                     " must be a power of two >= 1");
}

}  // namespace funnel::io
