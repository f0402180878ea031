// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "halo_link.hpp"

#include "funnel/error.hpp"

namespace funnel::detail {
namespace {

bool inside_allocation(const field_layout& layout, const box& region) {
  for (int a = 0; a < 3; ++a) {
    if (region.lo[a] < 0 || region.lo[a] > region.hi[a] || region.hi[a] > layout.allocated(a)) {
      return false;
    }
  }
  return true;
}

}  // namespace

box face_region(const field_layout& layout, int axis, side s, bool ghosts) {
  box b;
  for (int a = 0; a < 3; ++a) {
    const std::int64_t h = layout.halo_along(a);
    const std::int64_t n = layout.interior[a];
    if (a < axis) {
      b.lo[a] = 0;
      b.hi[a] = layout.allocated(a);
    } else if (a > axis) {
      b.lo[a] = h;
      b.hi[a] = h + n;
    } else if (s == side::lower) {
      b.lo[a] = ghosts ? 0 : h;
      b.hi[a] = b.lo[a] + h;
    } else {
      b.lo[a] = ghosts ? h + n : n;
      b.hi[a] = b.lo[a] + h;
    }
  }
  return b;
}

std::string describe(const index3& v) {
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
         ")";
}

std::string describe(const box& b) { return "[" + describe(b.lo) + ", " + describe(b.hi) + ")"; }

// The kernel walks the send region's extents in both arrays, so the neighbour's region must have
// the same extents and lie inside the neighbour's allocated array (for ipc: inside the imported
// allocation).
void check_link(const field_layout& layout, const halo_link& l) {
  const std::string which = "halo_exchange: link to rank " + std::to_string(l.path.rank) +
                            " along axis " + std::to_string(l.path.axis) + ": ";
  FUNNEL_EXPECTS(
      inside_allocation(layout, l.send_region) && inside_allocation(layout, l.recv_region),
      which + "send " + describe(l.send_region) + " or receive region " + describe(l.recv_region) +
          " outside the local array");
  FUNNEL_EXPECTS(inside_allocation(l.remote_layout, l.remote_region),
                 which + "remote region " + describe(l.remote_region) +
                     " outside the neighbour's array " +
                     describe(index3{l.remote_layout.allocated(0), l.remote_layout.allocated(1),
                                     l.remote_layout.allocated(2)}));
  FUNNEL_EXPECTS(l.send_region.extents() == l.remote_region.extents() &&
                     l.send_region.extents() == l.recv_region.extents(),
                 which + "send region " + describe(l.send_region) + ", receive region " +
                     describe(l.recv_region) + " and remote region " + describe(l.remote_region) +
                     " differ in size");
}

}  // namespace funnel::detail
