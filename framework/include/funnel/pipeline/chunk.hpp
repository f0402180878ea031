// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file chunk.hpp
 * @brief One chunk of a chunk_plan: what is copied in, what is updated, what is copied out.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"

namespace funnel {

/**
 * @brief One slab of whole planes of a rank's field, streamed through the GPU in one piece.
 *
 * Boxes named `input`/`output` are in the host field's allocated-array coordinates; `layout` and
 * `regions` describe the device buffer, whose plane 0 is `input.lo` along the chunk axis. Both
 * `input` and `output` span the whole allocated extent of the other axes, so each is one
 * contiguous range of the host array.
 */
struct chunk {
  int index = 0;  ///< position in the plan, 0-based along the chunk axis
  box input;      ///< planes copied host → device: the interior planes plus up to k·h each side
  box output;     ///< the chunk's interior planes, copied device → host; outputs tile the field

  /// @brief Shape of the device buffer holding `input` (x fastest, same x/y strides as the
  /// field).
  ///
  /// Its interior/halo split along the chunk axis is nominal; it may have a few unused planes
  /// past the input so that the shape is a valid field_layout.
  field_layout layout;
  /// @brief `regions[s-1]`: cells step s (1..k) updates, in device-buffer coordinates.
  ///
  /// They shrink by the stencil radius each step on sides that face a neighbouring chunk or
  /// rank, never cover a physical boundary's halo, and `regions.back()` is exactly the chunk's
  /// interior cells.
  std::vector<box> regions;
  std::int64_t input_offset = 0;   ///< first input cell's index in the host field array
  std::int64_t input_cells = 0;    ///< cells in `input`
  std::int64_t output_offset = 0;  ///< first output cell's index in the host field array
  std::int64_t output_cells = 0;   ///< cells in `output`
  /**
   * @brief Where the output starts in the device buffer.
   * @return index of the first output cell there: output_offset - input_offset
   */
  [[nodiscard]] std::int64_t output_offset_in_buffer() const noexcept {
    return output_offset - input_offset;
  }
};

}  // namespace funnel
