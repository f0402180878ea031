// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The CUDA heat3d_two_steps kernel's block shapes: which are compiled, and which one the kernel
// takes for a region (plain C++, so that every build can name and list them).
#include "funnel/kernels/heat3d_block_shape.hpp"

#include <string>

#include "funnel/error.hpp"

namespace funnel::kernels {
namespace {

// Measured with `funnel-bench kernels` (figures: docs/halo.md, "The second kernel"): regions of
// fewer cells than `small_region_cells` (a grid split among many ranks) finish soonest in
// columns of 32 x 8 cells with 2 rows per thread; larger ones in 32 x 16 columns with 4 rows per
// thread for float (32 x 8 and 2 for double: shared memory). Every shape gains from long chunks
// (a block re-reads two input planes on each side of its chunk) until the launch has too few
// blocks to fill the GPU: the most of 32, 16, 8 and 4 planes that still gives `min_blocks`
// blocks (about three per SM of an H100), else 4.
constexpr std::int64_t small_region_cells = std::int64_t{1} << 21;
constexpr std::int64_t min_blocks = 384;

std::int64_t blocks_along(std::int64_t cells, std::int64_t per_block) {
  return (cells + per_block - 1) / per_block;
}

void check_element_size(std::size_t element_size) {
  FUNNEL_EXPECTS(element_size == 4 || element_size == 8,
                 "funnel::kernels::heat3d_two_steps: elements of " + std::to_string(element_size) +
                     " bytes; the kernel takes float (4) or double (8)");
}

}  // namespace

std::string heat3d_block_shape::to_string() const {
  std::string s =
      std::to_string(tile_x) + "x" + std::to_string(tile_y) + "x" + std::to_string(rows);
  if (planes > 0) s += "/" + std::to_string(planes);
  return s;
}

std::vector<heat3d_block_shape> heat3d_two_steps_shapes(std::size_t element_size) {
  check_element_size(element_size);
  std::vector<heat3d_block_shape> shapes = {{8, 2, 0}, {8, 4, 0}};
  if (element_size == 4) {
    shapes.push_back({16, 2, 0});
    shapes.push_back({16, 4, 0});
  }
  return shapes;
}

heat3d_block_shape resolve_planes(heat3d_block_shape shape, const box& second) {
  if (shape.planes > 0) return shape;
  const std::int64_t columns = blocks_along(second.extent(0), heat3d_block_shape::tile_x) *
                               blocks_along(second.extent(1), shape.tile_y);
  shape.planes = 4;
  for (const std::int64_t planes : {32, 16, 8}) {
    if (columns * blocks_along(second.extent(2), planes) >= min_blocks) {
      shape.planes = planes;
      break;
    }
  }
  return shape;
}

heat3d_block_shape heat3d_two_steps_shape(std::size_t element_size, const box& second) {
  check_element_size(element_size);
  heat3d_block_shape shape{8, 2, 0};
  if (second.cells() >= small_region_cells && element_size == 4) shape = {16, 4, 0};
  return resolve_planes(shape, second);
}

}  // namespace funnel::kernels
