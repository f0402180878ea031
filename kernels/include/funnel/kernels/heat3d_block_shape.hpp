// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file heat3d_block_shape.hpp
 * @brief The block shapes of the CUDA heat3d_two_steps kernel, for measuring them against each
 * other (`funnel-bench kernels`) on a new GPU.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "funnel/decomposition/box.hpp"

namespace funnel::kernels {

/**
 * @brief How the CUDA heat3d_two_steps kernel cuts its region into blocks.
 *
 * A block takes a column of 32 x `tile_y` cells of the second step's region and marches along z
 * through `planes` of its planes; each thread updates `rows` cells of the column, one above the
 * other. The shapes compiled into the kernel are those of heat3d_two_steps_shapes(): the
 * others are refused.
 */
struct heat3d_block_shape {
  static constexpr int tile_x = 32;  ///< cells of a column along x (one warp)
  int tile_y = 8;                    ///< cells of a column along y: 8 or 16
  int rows = 2;                      ///< cells along y each thread updates: 2 or 4
  std::int64_t planes = 0;           ///< z-planes per block; 0: heat3d_two_steps' own rule

  /**
   * @brief The shape as `funnel-bench kernels` names it.
   * @return "<tile_x>x<tile_y>x<rows>", e.g. "32x8x2", with "/<planes>" when `planes` is set
   */
  [[nodiscard]] std::string to_string() const;
  /**
   * @brief Whether two shapes are the same.
   * @param other the shape to compare with
   * @return true for the same columns, rows and planes
   */
  [[nodiscard]] bool operator==(const heat3d_block_shape& other) const noexcept {
    return tile_y == other.tile_y && rows == other.rows && planes == other.planes;
  }
};

/**
 * @brief The shapes compiled for elements of `element_size` bytes (`planes` 0): 32x8x2,
 * 32x8x4, 32x16x2 and 32x16x4 for float; 32x8x2 and 32x8x4 for double (the shared-memory rings
 * of a 16-row column of doubles exceed the 48 KiB a block may have statically).
 * @param element_size sizeof the element type: 4 (float) or 8 (double)
 * @return the shapes, `planes` 0
 * @throw funnel::invalid_argument for a size other than 4 or 8
 */
[[nodiscard]] std::vector<heat3d_block_shape> heat3d_two_steps_shapes(std::size_t element_size);

/**
 * @brief The shape heat3d_two_steps takes for `second` (planes resolved), chosen by measurement
 * with `funnel-bench kernels` (figures: docs/halo.md, "The second kernel"): regions under 2^21
 * cells 32x8x2, larger ones 32x16x4 (float) or 32x8x2 (double), with planes as
 * resolve_planes() gives them.
 * @param element_size sizeof the element type: 4 (float) or 8 (double)
 * @param second the region of the kernel's second step
 * @return the shape, `planes` resolved
 * @throw funnel::invalid_argument for a size other than 4 or 8
 */
[[nodiscard]] heat3d_block_shape heat3d_two_steps_shape(std::size_t element_size,
                                                        const box& second);

/**
 * @brief `shape` with its planes resolved for `second`: the shape's own `planes` when set, else
 * heat3d_two_steps' rule: the most of 32, 16, 8 and 4 planes per block that still gives 384
 * blocks (about three per SM of an H100), else 4.
 * @param shape a shape, `planes` 0 to have it chosen
 * @param second the region of the kernel's second step
 * @return `shape` with `planes` set
 */
[[nodiscard]] heat3d_block_shape resolve_planes(heat3d_block_shape shape, const box& second);

}  // namespace funnel::kernels
