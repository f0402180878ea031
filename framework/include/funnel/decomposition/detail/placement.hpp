// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file placement.hpp
 * @brief The arithmetic of placement_by_device(), without a communicator (testable for any
 * topology in one process).
 *
 * Internal (funnel::detail): installed with the public headers, but not part of funnel's API.
 */
#pragma once

#include <cstdint>
#include <vector>

namespace funnel::detail {

/// Where one rank runs, as placement_by_device() gathers it.
struct rank_place {
  int node = 0;    ///< the lowest rank on the rank's node
  int device = 0;  ///< the lowest rank on that node with the same device (itself without one)
};

/**
 * @brief The ranks in the order they take the boxes: by node, then by device, then by rank
 * (nodes and devices in the order of their lowest rank).
 * @param places every rank's place, indexed by rank
 * @return a permutation of [0, places.size()); empty when no device holds two ranks and the
 * order by node is the ranks' own (nothing to group: the decomposition's default order)
 */
[[nodiscard]] std::vector<int> placement_of(const std::vector<rank_place>& places);

/**
 * @brief Checks that `placement` holds every rank in [0, ranks) once.
 * @param placement a cartesian_decomposition placement
 * @param ranks the communicator's size
 * @throw funnel::invalid_argument naming the first bad entry, or the size
 */
void check_placement(const std::vector<int>& placement, int ranks);

/**
 * @brief A digest of a placement (FNV-1a over its entries), to compare ranks' placements.
 * @param placement a cartesian_decomposition placement
 * @return its digest
 */
[[nodiscard]] std::uint64_t placement_digest(const std::vector<int>& placement) noexcept;

}  // namespace funnel::detail
