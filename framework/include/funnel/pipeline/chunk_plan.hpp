// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file chunk_plan.hpp
 * @brief Splits a rank's field into slabs of planes that the pipeline streams through the GPU.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "funnel/decomposition/field_layout.hpp"
#include "funnel/pipeline/chunk.hpp"
#include "funnel/pipeline/neighbour_faces.hpp"

namespace funnel {

/**
 * @brief The chunks of one rank's field for k steps per pass of a stencil of radius h.
 *
 * The interior is cut along the slowest axis with more than one interior cell (z in 3D, y in 2D)
 * into chunks of whole planes; the first `planes % chunks` chunks get one plane more. Each chunk's
 * input carries k·h extra planes each side (clamped to the allocated field), so k steps can run
 * on the device with a valid region that shrinks by h per step; its output is its interior
 * planes, so the outputs tile the field exactly.
 *
 * Faces with a neighbour (see neighbour_faces) are recomputed redundantly into the halo, as
 * chunk edges are, so k steps per pass equal k single steps with an exchange after each; this
 * needs a halo of at least k·h. Physical faces keep their halo as boundary values.
 */
class chunk_plan {
 public:
  /**
   * @brief Plans exactly `chunks` chunks.
   * @param field the rank's field (interior + halo)
   * @param stencil_radius h: the stencil reads cells up to h away (1 for the 7-point stencil)
   * @param steps_per_pass k: stencil steps applied per trip over the host link
   * @param chunks C: number of chunks
   * @param faces which faces of the box have neighbours (default: none)
   * @throw funnel::invalid_argument when h < 1, k < 1, C < 1, the field's halo is shallower than
   * h (or than k·h with a neighbour), a face on an axis without halo is marked open, or a chunk
   * would get fewer than k·h planes (C > planes / (k·h); see max_chunks), or the field's rows
   * are padded (field_layout::row_align)
   */
  chunk_plan(const field_layout& field, int stencil_radius, int steps_per_pass, int chunks,
             neighbour_faces faces = neighbour_faces::none());

  /**
   * @brief Plans as many chunks as needed to keep each chunk's input within a byte budget.
   * @param field the rank's field
   * @param stencil_radius h
   * @param steps_per_pass k
   * @param max_input_bytes largest device buffer one chunk's input may need
   * @param element_bytes sizeof the field's element type
   * @param faces which faces have neighbours
   * @return the plan with the fewest chunks whose largest device buffer fits max_input_bytes
   * @throw funnel::invalid_argument as the constructor, or when even chunks of k·h planes do
   * not fit the budget (the message gives the smallest budget that works)
   */
  [[nodiscard]] static chunk_plan for_chunk_bytes(const field_layout& field, int stencil_radius,
                                                  int steps_per_pass, std::size_t max_input_bytes,
                                                  std::size_t element_bytes,
                                                  neighbour_faces faces = neighbour_faces::none());

  /**
   * @brief The most chunks a field can be cut into (each gets at least k·h planes).
   * @param field the rank's field
   * @param stencil_radius h (≥ 1)
   * @param steps_per_pass k (≥ 1)
   * @return planes along the chunk axis divided by k·h (0 when a chunk of k·h does not fit)
   */
  [[nodiscard]] static int max_chunks(const field_layout& field, int stencil_radius,
                                      int steps_per_pass) noexcept;

  /**
   * @brief The axis chunks are cut along: the slowest one with more than one interior cell.
   * @param field the rank's field
   * @return 2 (z), 1 (y) or 0 (x)
   */
  [[nodiscard]] static int chunk_axis_of(const field_layout& field) noexcept;

  /**
   * @brief The field this plan cuts.
   * @return its layout, as given
   */
  [[nodiscard]] const field_layout& field() const noexcept { return field_; }
  /**
   * @brief The axis chunks are cut along.
   * @return 0 x, 1 y, 2 z (chunk_axis_of(field()))
   */
  [[nodiscard]] int axis() const noexcept { return axis_; }
  /**
   * @brief The stencil radius the plan was made for.
   * @return h
   */
  [[nodiscard]] int stencil_radius() const noexcept { return radius_; }
  /**
   * @brief Stencil steps per pass.
   * @return k
   */
  [[nodiscard]] int steps_per_pass() const noexcept { return steps_; }
  /**
   * @brief Which faces have neighbours.
   * @return the faces given
   */
  [[nodiscard]] const neighbour_faces& faces() const noexcept { return faces_; }
  /**
   * @brief Number of chunks.
   * @return C, at least 1
   */
  [[nodiscard]] int size() const noexcept { return static_cast<int>(chunks_.size()); }
  /**
   * @brief All chunks.
   * @return the chunks, in order along the chunk axis
   */
  [[nodiscard]] const std::vector<chunk>& chunks() const noexcept { return chunks_; }
  /**
   * @brief One chunk.
   * @param i its index, 0 ≤ i < size() (unchecked)
   * @return chunks()[i]
   */
  [[nodiscard]] const chunk& operator[](int i) const noexcept {
    return chunks_[static_cast<std::size_t>(i)];
  }
  /**
   * @brief Cells per plane.
   * @return the product of the allocated extents of the faster axes
   */
  [[nodiscard]] std::int64_t plane_cells() const noexcept { return plane_cells_; }
  /**
   * @brief Size of the largest chunk device buffer: what each device slot must hold.
   * @return cells
   */
  [[nodiscard]] std::int64_t max_buffer_cells() const noexcept { return max_buffer_cells_; }
  /**
   * @brief Work of one pass, the numerator of a cell-update rate.
   * @return cell updates one pass performs on the interior: interior cells × k
   */
  [[nodiscard]] std::int64_t interior_cell_updates() const noexcept;
  /**
   * @brief Host → device traffic of one pass.
   * @return cells copied: the sum of the inputs, more than the allocated cells when chunks
   * overlap
   */
  [[nodiscard]] std::int64_t input_cells_total() const noexcept;
  /**
   * @brief Device → host traffic of one pass.
   * @return cells copied: the interior planes
   */
  [[nodiscard]] std::int64_t output_cells_total() const noexcept;
  /**
   * @brief The plan in words, for plan printouts.
   * @return one line, e.g. "8 chunks along z of 12-13 planes, k=2, h=1"
   */
  [[nodiscard]] std::string describe() const;

 private:
  field_layout field_;
  int axis_ = 2;
  int radius_ = 1;
  int steps_ = 1;
  neighbour_faces faces_;
  std::int64_t plane_cells_ = 0;
  std::int64_t max_buffer_cells_ = 0;
  std::vector<chunk> chunks_;
};

}  // namespace funnel
