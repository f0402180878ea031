// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file box_difference.hpp
 * @brief The cells of one box outside another, as at most six disjoint slabs (the pipeline's
 * chunk frame: the input cells the first step does not write).
 *
 * Internal (funnel::detail): installed with the public headers, but not part of funnel's API.
 */
#pragma once

#include <vector>

#include "funnel/decomposition/box.hpp"

namespace funnel::detail {

/**
 * @brief `outer` minus `inner`, as disjoint slabs peeled off axis by axis from the slowest.
 *
 * Along z, then y, then x, the slab below `inner` and the slab above it each span what is left
 * of `outer` along the other axes, so the z slabs are whole xy planes of `outer` and the y slabs
 * whole x rows (in an array whose allocated extents `outer` spans, each z slab is one contiguous
 * range). Empty slabs are left out, so there are at most six. An `inner` that does not meet
 * `outer` removes nothing.
 * @param outer the cells to take from
 * @param inner the cells to leave out (need not lie inside `outer`)
 * @return disjoint non-empty boxes whose union is `outer` minus `inner`: z slabs first (low,
 * high), then y, then x; empty when `inner` covers `outer`
 */
[[nodiscard]] std::vector<box> box_difference(const box& outer, const box& inner);

}  // namespace funnel::detail
