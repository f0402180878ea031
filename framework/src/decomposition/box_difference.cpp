// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/decomposition/detail/box_difference.hpp"

#include <algorithm>

namespace funnel::detail {

std::vector<box> box_difference(const box& outer, const box& inner) {
  std::vector<box> slabs;
  if (outer.empty()) return slabs;
  for (int axis = 0; axis < 3; ++axis) {
    if (std::max(outer.lo[axis], inner.lo[axis]) >= std::min(outer.hi[axis], inner.hi[axis])) {
      slabs.push_back(outer);  // they do not meet: nothing to leave out
      return slabs;
    }
  }
  // Each axis keeps [lo, hi) of inner for the axes peeled after it, so the slabs are disjoint.
  box rest = outer;
  for (int axis = 2; axis >= 0; --axis) {
    const std::int64_t lo = std::max(inner.lo[axis], rest.lo[axis]);
    const std::int64_t hi = std::min(inner.hi[axis], rest.hi[axis]);
    box lower = rest;
    lower.hi[axis] = lo;
    box upper = rest;
    upper.lo[axis] = hi;
    for (const box& slab : {lower, upper}) {
      if (!slab.empty()) slabs.push_back(slab);
    }
    rest.lo[axis] = lo;
    rest.hi[axis] = hi;
  }
  return slabs;
}

}  // namespace funnel::detail
