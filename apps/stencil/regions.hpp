/**
 * @file regions.hpp
 * @brief The split of a rank's interior into the part updated while halos travel (inner) and
 * the boundary layer updated once they have arrived.
 */
#pragma once

#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"

namespace funnel::stencil {

/**
 * @brief Interior cells split for overlapping the halo exchange with compute.
 *
 * `inner` needs no ghost cell (it keeps `radius` cells away from every face that has ghosts);
 * `boundary` holds disjoint slabs covering the rest of the interior (the cells within `radius`
 * of the local box faces). inner plus boundary tile the interior exactly.
 */
struct overlap_regions {
  box inner;                  ///< updated on the compute stream during the exchange
  std::vector<box> boundary;  ///< updated on the halo stream after it (non-empty boxes only)
};

/**
 * @brief Splits the interior of `layout` (allocated-array coordinates).
 * @param layout the rank's field layout
 * @param radius stencil radius (1 for both stencils)
 * @return the inner box and the boundary slabs; tiny boxes give an empty inner box
 */
[[nodiscard]] overlap_regions split_for_overlap(const field_layout& layout, int radius);

}  // namespace funnel::stencil
