// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file regions.hpp
 * @brief The split of a rank's interior into the part updated while halos travel (inner) and
 * the boundary layer updated once they have arrived.
 */
#pragma once

#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/decomposition/field_layout.hpp"
#include "funnel/pipeline/neighbour_faces.hpp"

namespace funnel::stencil {

/**
 * @brief Interior cells split for overlapping the halo exchange with compute.
 *
 * `inner` needs no ghost cell the exchange writes (it keeps `radius` cells away from every
 * exchanged face); `boundary` holds disjoint slabs covering the rest of the interior (the cells
 * within `radius` of those faces). inner plus boundary tile the interior exactly. Faces whose
 * ghosts the exchange never writes (a non-periodic global boundary) need no slab: their ghosts
 * are fixed, so the inner update reaches them.
 */
struct overlap_regions {
  box inner;                  ///< updated on the compute stream during the exchange
  std::vector<box> boundary;  ///< updated on the halo stream after it (non-empty boxes only)
};

/// @brief Every face exchanged.
inline constexpr neighbour_faces all_faces{{{{true, true}, {true, true}, {true, true}}}};

/// @brief The faces of the rank's box that the halo exchange fills (a neighbour, or a wrap).
[[nodiscard]] neighbour_faces faces_of(const cartesian_decomposition& decomposition);

/**
 * @brief Splits the interior of `layout` (allocated-array coordinates).
 * @param layout the rank's field layout
 * @param radius stencil radius (1 for both stencils)
 * @param exchanged the faces whose ghosts the exchange writes (default: all)
 * @return the inner box and the boundary slabs; tiny boxes give an empty inner box
 */
[[nodiscard]] overlap_regions split_for_overlap(const field_layout& layout, int radius,
                                                const neighbour_faces& exchanged = all_faces);

/**
 * @brief What each step between two exchanges of a halo `depth` cells deep updates (a stencil of
 * radius 1): entry p (0 <= p < depth) is the interior grown by `depth - 1 - p` cells on every
 * exchanged face, so the last step before the next exchange updates the interior alone.
 * @param layout the rank's field layout (its halo at least `depth`)
 * @param exchanged the faces whose ghosts the exchange writes
 * @param depth steps per exchange (>= 1)
 */
[[nodiscard]] std::vector<box> regions_after_exchange(const field_layout& layout,
                                                      const neighbour_faces& exchanged, int depth);

/// @brief The two regions of one two-step launch (kernels::heat3d_two_steps): the first step's
/// cells and the second's.
struct step_pair {
  box first;   ///< cells of the first step
  box second;  ///< cells of the second step, inside `first`
};

/**
 * @brief The overlapped order for two steps per launch after each exchange of a halo two cells
 * deep: the interior split as split_for_overlap() with a radius of 2 (the second step reads
 * cells two away), each part the `second` of a pair whose `first` is that part grown by one cell
 * on every side, kept inside the first step's region after an exchange (regions_after_exchange
 * with depth 2, entry 0). The first pair (the inner part, empty when the box is too small to
 * have one) reads no ghost the exchange writes; the others tile the rest of the interior.
 * @param layout the rank's field layout (a halo of at least 2)
 * @param exchanged the faces whose ghosts the exchange writes
 */
[[nodiscard]] std::vector<step_pair> overlap_pairs(const field_layout& layout,
                                                   const neighbour_faces& exchanged);

}  // namespace funnel::stencil
