// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/decomposition/detail/grid_split.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "funnel/error.hpp"

namespace funnel::detail {
namespace {

constexpr const char* axis_names[3] = {"x", "y", "z"};

std::string axis_name(int axis) { return axis_names[axis]; }

std::string triple(const index3& v) {
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
         ")";
}

std::string triple(const std::array<int, 3>& v) { return triple(index3{v[0], v[1], v[2]}); }

// Cells of the smallest box along an axis: the last ranks get floor(N / P).
std::int64_t smallest_extent(std::int64_t cells, int parts) noexcept { return cells / parts; }

// Cells of the largest box along an axis: the first N % P ranks get one more.
std::int64_t largest_extent(std::int64_t cells, int parts) noexcept {
  return (cells + parts - 1) / parts;
}

void check_cells(const index3& global_cells) {
  std::int64_t total = 1;
  for (int axis = 0; axis < 3; ++axis) {
    FUNNEL_EXPECTS(global_cells[axis] >= 1, "global cell count along " + axis_name(axis) + " is " +
                                                std::to_string(global_cells[axis]) +
                                                "; every axis needs >= 1 cell");
    FUNNEL_EXPECTS(!__builtin_mul_overflow(total, global_cells[axis], &total),
                   "global cells " + triple(global_cells) +
                       " overflow a 64-bit cell count; use a smaller grid");
  }
}

void check_given_dims(int ranks, const index3& global_cells, const std::array<int, 3>& dims) {
  std::int64_t fixed = 1;  // product of the given entries
  bool overflow = false;   // ... more than 2^63 (three entries of up to 2^31)
  bool all_given = true;
  for (int axis = 0; axis < 3; ++axis) {
    FUNNEL_EXPECTS(dims[axis] >= 0, "dims " + triple(dims) + ": ranks along " + axis_name(axis) +
                                        " must be >= 0 (0 = let funnel choose)");
    FUNNEL_EXPECTS(global_cells[axis] > 1 || dims[axis] <= 1,
                   "dims " + triple(dims) + " puts " + std::to_string(dims[axis]) +
                       " ranks along " + axis_name(axis) + ", which has only 1 cell; use 1 or 0");
    if (dims[axis] > 0) {
      overflow = overflow || __builtin_mul_overflow(fixed, std::int64_t{dims[axis]}, &fixed);
    } else {
      all_given = false;
    }
  }
  const std::string product = overflow ? "more than 2^63" : std::to_string(fixed);
  if (all_given) {
    FUNNEL_EXPECTS(!overflow && fixed == ranks, "dims " + triple(dims) + " make " + product +
                                                    " ranks but the communicator has " +
                                                    std::to_string(ranks) +
                                                    "; their product must equal it");
  } else {
    FUNNEL_EXPECTS(!overflow && ranks % fixed == 0,
                   "dims " + triple(dims) + ": the fixed entries make " + product +
                       " ranks, which does not divide " + std::to_string(ranks) + " ranks");
  }
}

void check_extents(const index3& global_cells, int halo, const std::array<int, 3>& dims) {
  std::int64_t largest_allocated = 1;  // the first box is the largest; with its ghosts
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t cells = global_cells[axis];
    FUNNEL_EXPECTS(dims[axis] <= cells, "more ranks than cells along " + axis_name(axis) + ": " +
                                            std::to_string(dims[axis]) + " ranks for " +
                                            std::to_string(cells) + " cells (dims " + triple(dims) +
                                            "); give fewer ranks along it");
    if (cells == 1) continue;  // no ghosts along this axis
    const std::int64_t smallest = smallest_extent(cells, dims[axis]);
    FUNNEL_EXPECTS(smallest >= 2, "splitting " + std::to_string(cells) + " cells along " +
                                      axis_name(axis) + " over " + std::to_string(dims[axis]) +
                                      " ranks leaves boxes of 1 cell, which field_layout gives "
                                      "no ghosts; each box needs >= 2 cells along an axis of "
                                      "more than one cell");
    FUNNEL_EXPECTS(smallest >= halo,
                   "halo " + std::to_string(halo) + " is wider than the smallest local extent " +
                       std::to_string(smallest) + " along " + axis_name(axis) + " (" +
                       std::to_string(cells) + " cells over " + std::to_string(dims[axis]) +
                       " ranks); use a halo <= " + std::to_string(smallest) +
                       " or fewer ranks along " + axis_name(axis));
    const std::int64_t allocated = largest_extent(cells, dims[axis]) + 2 * std::int64_t{halo};
    FUNNEL_EXPECTS(!__builtin_mul_overflow(largest_allocated, allocated, &largest_allocated),
                   "a local box of global cells " + triple(global_cells) + " over dims " +
                       triple(dims) + " with halo " + std::to_string(halo) +
                       " overflows a 64-bit cell count");
  }
}

// Whether `dims` splits every axis into boxes of >= 2 cells (and >= halo), as check_extents
// demands; axes of one cell must have 1 rank.
bool feasible(const index3& global_cells, int halo, const std::array<int, 3>& dims) {
  for (int axis = 0; axis < 3; ++axis) {
    if (global_cells[axis] == 1) {
      if (dims[axis] != 1) return false;
      continue;
    }
    const std::int64_t smallest = smallest_extent(global_cells[axis], dims[axis]);
    if (smallest < 2 || smallest < halo) return false;
  }
  return true;
}

// Halo cells a largest box exchanges per step with `faces[axis]` faces along each split axis,
// x-faces counted twice: an x-face is one cell of every row (strided copies), y- and z-faces are
// contiguous runs.
double halo_cells(const index3& global_cells, const std::array<int, 3>& dims,
                  const std::array<double, 3>& faces) {
  double extent[3];
  for (int axis = 0; axis < 3; ++axis) {
    extent[axis] = static_cast<double>(largest_extent(global_cells[axis], dims[axis]));
  }
  double cells = 0.0;
  for (int axis = 0; axis < 3; ++axis) {
    if (dims[axis] == 1) continue;
    const double face = extent[(axis + 1) % 3] * extent[(axis + 2) % 3];
    cells += faces[axis] * face * (axis == 0 ? 2.0 : 1.0);
  }
  return cells;
}

// The split's cost: two faces along every split axis.
double exchange_cost(const index3& global_cells, const std::array<int, 3>& dims) {
  return halo_cells(global_cells, dims, {2.0, 2.0, 2.0});
}

// What the busiest box really exchanges: along a non-periodic axis of 2 ranks each box has one
// neighbour, not two. 1024^3 over 4 ranks: 1x2x2 boxes exchange 2 faces of 1024 x 512 cells,
// 1x1x4's inner boxes 2 of 1024 x 1024.
double busiest_box_cells(const index3& global_cells, const std::array<int, 3>& dims,
                         const std::array<bool, 3>& periodic) {
  std::array<double, 3> faces{};
  for (int axis = 0; axis < 3; ++axis) faces[axis] = periodic[axis] || dims[axis] >= 3 ? 2.0 : 1.0;
  return halo_cells(global_cells, dims, faces);
}

// Whether `a` is a better split than `b` at equal exchange_cost: fewer ranks along x (strided
// faces), then the busiest box exchanging fewer cells, then the slowest axes split most (z, then
// y), whose faces are contiguous.
bool better_tie(const index3& global_cells, const std::array<bool, 3>& periodic,
                const std::array<int, 3>& a, const std::array<int, 3>& b) {
  if (a[0] != b[0]) return a[0] < b[0];
  const double busy_a = busiest_box_cells(global_cells, a, periodic);
  const double busy_b = busiest_box_cells(global_cells, b, periodic);
  if (busy_a != busy_b) return busy_a < busy_b;
  return a[2] > b[2] || (a[2] == b[2] && a[1] > b[1]);
}

// Fills the 0 entries of `dims`: among the factorisations of `ranks` that keep the given
// entries and split every axis into boxes of >= max(2, halo) cells, the one with the least
// exchange_cost; ties as better_tie orders them. When none is feasible, the most balanced
// factorisation (as MPI_Dims_create would choose: larger counts first), which check_extents then
// rejects naming the axis.
std::array<int, 3> choose_dims(int ranks, const index3& global_cells, int halo,
                               const std::array<int, 3>& given,
                               const std::array<bool, 3>& periodic) {
  std::array<int, 3> best{};
  double best_cost = 0.0;
  bool found = false;
  for (int px = 1; px <= ranks; ++px) {
    if (ranks % px != 0 || (given[0] != 0 && given[0] != px)) continue;
    const int rest = ranks / px;
    for (int py = 1; py <= rest; ++py) {
      if (rest % py != 0 || (given[1] != 0 && given[1] != py)) continue;
      const int pz = rest / py;
      if (given[2] != 0 && given[2] != pz) continue;
      const std::array<int, 3> dims{px, py, pz};
      if (!feasible(global_cells, halo, dims)) continue;
      const double cost = exchange_cost(global_cells, dims);
      if (!found || cost < best_cost ||
          (cost == best_cost && better_tie(global_cells, periodic, dims, best))) {
        best = dims;
        best_cost = cost;
        found = true;
      }
    }
  }
  if (found) return best;
  std::array<int, 3> balanced = given;
  for (int px = 1; px <= ranks; ++px) {
    if (ranks % px != 0 || (given[0] != 0 && given[0] != px)) continue;
    for (int py = 1; py <= ranks / px; ++py) {
      const int pz = ranks / px / py;
      if ((ranks / px) % py != 0 || (given[1] != 0 && given[1] != py) ||
          (given[2] != 0 && given[2] != pz)) {
        continue;
      }
      const std::array<int, 3> dims{px, py, pz};
      const auto widest = [](const std::array<int, 3>& d) { return std::max({d[0], d[1], d[2]}); };
      if (balanced[0] * balanced[1] * balanced[2] != ranks || widest(dims) <= widest(balanced)) {
        balanced = dims;
      }
    }
  }
  return balanced;
}

}  // namespace

std::array<int, 3> checked_dims(int ranks, const index3& global_cells, int halo,
                                std::array<int, 3> dims, const std::array<bool, 3>& periodic) {
  FUNNEL_EXPECTS(ranks >= 1, "rank count " + std::to_string(ranks) + " must be >= 1");
  check_cells(global_cells);
  FUNNEL_EXPECTS(halo >= 1, "halo " + std::to_string(halo) + " must be >= 1");
  check_given_dims(ranks, global_cells, dims);
  // An axis of one cell takes one rank: when that leaves no axis free, the fixed entries must
  // make the rank count.
  std::int64_t fixed = 1;
  for (int axis = 0; axis < 3; ++axis) {
    if (global_cells[axis] == 1) dims[axis] = 1;
    fixed =
        dims[axis] == 0 || fixed == 0 ? 0 : std::min<std::int64_t>(fixed * dims[axis], ranks + 1LL);
  }
  FUNNEL_EXPECTS(
      fixed == 0 || fixed == ranks,
      "cannot split global cells " + triple(global_cells) + " over " + std::to_string(ranks) +
          " ranks: an axis of one cell takes one rank" +
          (fixed > 1 ? " and --dims fixes the others" : "") + ", so the grid takes " +
          (fixed > ranks ? "more than " + std::to_string(ranks) : std::to_string(fixed)) +
          " rank(s); run on that many ranks or give a larger grid");
  dims = choose_dims(ranks, global_cells, halo, dims, periodic);
  check_extents(global_cells, halo, dims);
  return dims;
}

box split_box(const index3& global_cells, const std::array<int, 3>& dims,
              const std::array<int, 3>& coords) noexcept {
  box b;
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t base = global_cells[axis] / dims[axis];
    const std::int64_t rem = global_cells[axis] % dims[axis];
    const std::int64_t c = coords[axis];
    b.lo[axis] = c * base + std::min(c, rem);
    b.hi[axis] = b.lo[axis] + base + (c < rem ? 1 : 0);
  }
  return b;
}

}  // namespace funnel::detail
