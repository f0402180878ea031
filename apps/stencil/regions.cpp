// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "regions.hpp"

#include <mpi.h>

#include <algorithm>

#include "funnel/decomposition/side.hpp"

namespace funnel::stencil {

neighbour_faces faces_of(const cartesian_decomposition& decomposition) {
  neighbour_faces faces;
  for (int axis = 0; axis < 3; ++axis) {
    faces.open[axis][0] = decomposition.neighbor(axis, side::lower) != MPI_PROC_NULL;
    faces.open[axis][1] = decomposition.neighbor(axis, side::upper) != MPI_PROC_NULL;
  }
  return faces;
}

overlap_regions split_for_overlap(const field_layout& layout, int radius,
                                  const neighbour_faces& exchanged) {
  overlap_regions out;
  box rest = layout.interior_box();
  // Peel slabs off axis by axis (z, y, x); each slab spans what is left of the other axes, so
  // the slabs are disjoint. Axes without ghosts (2D: z) have nothing to wait for.
  for (int axis = 2; axis >= 0; --axis) {
    if (layout.halo_along(axis) == 0) continue;
    const std::int64_t lo = rest.lo[axis];
    const std::int64_t hi = rest.hi[axis];
    const std::int64_t lower_end = exchanged.has(axis, 0) ? std::min(lo + radius, hi) : lo;
    const std::int64_t upper_begin =
        exchanged.has(axis, 1) ? std::max(hi - radius, lower_end) : std::max(hi, lower_end);
    box lower = rest;
    lower.hi[axis] = lower_end;
    box upper = rest;
    upper.lo[axis] = upper_begin;
    for (const box& slab : {lower, upper}) {
      if (!slab.empty()) out.boundary.push_back(slab);
    }
    rest.lo[axis] = lower_end;
    rest.hi[axis] = upper_begin;
  }
  out.inner = rest;
  return out;
}

std::vector<box> regions_after_exchange(const field_layout& layout,
                                        const neighbour_faces& exchanged, int depth) {
  std::vector<box> regions;
  for (int p = 0; p < depth; ++p) {
    box region = layout.interior_box();
    for (int axis = 0; axis < 3; ++axis) {
      if (layout.halo_along(axis) == 0) continue;
      if (exchanged.has(axis, 0)) region.lo[axis] -= depth - 1 - p;
      if (exchanged.has(axis, 1)) region.hi[axis] += depth - 1 - p;
    }
    regions.push_back(region);
  }
  return regions;
}

std::vector<step_pair> overlap_pairs(const field_layout& layout, const neighbour_faces& exchanged) {
  const box reach = regions_after_exchange(layout, exchanged, 2).front();
  const overlap_regions split = split_for_overlap(layout, 2, exchanged);
  std::vector<box> seconds{split.inner};
  seconds.insert(seconds.end(), split.boundary.begin(), split.boundary.end());
  std::vector<step_pair> pairs;
  for (const box& second : seconds) {
    box first = second;
    for (int axis = 0; axis < 3; ++axis) {
      if (layout.halo_along(axis) == 0) continue;
      first.lo[axis] = std::max(second.lo[axis] - 1, reach.lo[axis]);
      first.hi[axis] = std::min(second.hi[axis] + 1, reach.hi[axis]);
    }
    pairs.push_back({second.empty() ? second : first, second});
  }
  return pairs;
}

}  // namespace funnel::stencil
