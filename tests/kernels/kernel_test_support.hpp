// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the kernel tests: fresh random fields, poisoning, double-precision reference
// stencils and region splitting. Header-only so the unit, Kokkos and GPU tests use one copy.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"

namespace funnel::kernels::testing {

/// A seed that differs between runs; printed through SCOPED_TRACE so failures can be replayed.
inline std::uint64_t fresh_seed() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

/// Declares `std::mt19937_64 name` seeded afresh, and puts the seed in every failure message of
/// the enclosing scope so a failing draw can be replayed.
#define FUNNEL_TEST_SEEDED_RNG(name)                                          \
  const std::uint64_t name##_seed = ::funnel::kernels::testing::fresh_seed(); \
  SCOPED_TRACE("seed " + std::to_string(name##_seed));                        \
  std::mt19937_64 name(name##_seed)

/// A named region of a layout that a kernel test updates.
struct region_case {
  std::string name;
  field_layout layout;
  box region;
};

/// A layout of nx x ny x nz interior cells; `row_align` > 1 pads the rows (field_layout.hpp).
inline field_layout make_layout(std::int64_t nx, std::int64_t ny, std::int64_t nz, int halo = 1,
                                int row_align = 1) {
  field_layout layout;
  layout.interior = {nx, ny, nz};
  layout.halo = halo;
  layout.row_align = row_align;
  return layout;
}

/// Elements of the array that are no cell of `layout` (the padding of padded rows).
inline std::vector<std::size_t> padding_elements(const field_layout& layout) {
  std::vector<bool> cell(static_cast<std::size_t>(layout.allocated_cells()), false);
  for (std::int64_t k = 0; k < layout.allocated(2); ++k) {
    for (std::int64_t j = 0; j < layout.allocated(1); ++j) {
      for (std::int64_t i = 0; i < layout.allocated(0); ++i) {
        cell[static_cast<std::size_t>(layout.index(i, j, k))] = true;
      }
    }
  }
  std::vector<std::size_t> padding;
  for (std::size_t n = 0; n < cell.size(); ++n) {
    if (!cell[n]) padding.push_back(n);
  }
  return padding;
}

/// Uniform random values in [-1, 1) in every allocated cell (halo included).
template <class T>
std::vector<T> random_field(const field_layout& layout, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> field(static_cast<std::size_t>(layout.allocated_cells()));
  for (auto& v : field) v = static_cast<T>(dist(rng));
  return field;
}

/// A quiet NaN with a recognisable payload: a cell still holding it was never written.
template <class T>
T poison() {
  return std::numeric_limits<T>::quiet_NaN();
}

template <class T>
std::vector<T> poisoned_field(const field_layout& layout) {
  return std::vector<T>(static_cast<std::size_t>(layout.allocated_cells()), poison<T>());
}

inline bool contains(const box& b, std::int64_t i, std::int64_t j, std::int64_t k) {
  return i >= b.lo[0] && i < b.hi[0] && j >= b.lo[1] && j < b.hi[1] && k >= b.lo[2] && k < b.hi[2];
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Number of cells whose bits differ between two arrays.
template <class T>
std::int64_t differing_cells(const std::vector<T>& a, const std::vector<T>& b) {
  std::int64_t count = 0;
  for (std::size_t n = 0; n < a.size(); ++n) count += same_bits(a[n], b[n]) ? 0 : 1;
  return count;
}

/// The heat update in double precision, straight from its definition (not from the kernels'
/// arithmetic header), over whichever axes have neighbours.
template <class T>
double reference_heat(const field_layout& layout, const std::vector<T>& in, std::int64_t i,
                      std::int64_t j, std::int64_t k, double c) {
  const double center = in[static_cast<std::size_t>(layout.index(i, j, k))];
  double sum = 0.0;
  int neighbours = 0;
  const std::int64_t cell[3] = {i, j, k};
  for (int axis = 0; axis < 3; ++axis) {
    if (layout.allocated(axis) == 1) continue;
    for (int side : {-1, 1}) {
      std::int64_t n[3] = {cell[0], cell[1], cell[2]};
      n[axis] += side;
      sum += in[static_cast<std::size_t>(layout.index(n[0], n[1], n[2]))];
      ++neighbours;
    }
  }
  return center + c * (sum - neighbours * center);
}

/// The Jacobi update in double precision.
inline double reference_jacobi(const field_layout& layout, const std::vector<float>& a,
                               std::int64_t i, std::int64_t j) {
  auto at = [&](std::int64_t x, std::int64_t y) {
    return static_cast<double>(a[static_cast<std::size_t>(layout.index(x, y, 0))]);
  };
  return 0.25 * (at(i + 1, j) + at(i - 1, j) + at(i, j + 1) + at(i, j - 1));
}

/// Splits `region` into up to 8 boxes by one random cut per axis (a cut may leave a box empty).
inline std::vector<box> random_split(const box& region, std::mt19937_64& rng) {
  index3 cut{};
  for (int axis = 0; axis < 3; ++axis) {
    std::uniform_int_distribution<std::int64_t> dist(region.lo[axis], region.hi[axis]);
    cut[axis] = dist(rng);
  }
  std::vector<box> parts;
  for (int bits = 0; bits < 8; ++bits) {
    box part;
    for (int axis = 0; axis < 3; ++axis) {
      const bool upper = ((bits >> axis) & 1) != 0;
      part.lo[axis] = upper ? cut[axis] : region.lo[axis];
      part.hi[axis] = upper ? region.hi[axis] : cut[axis];
    }
    parts.push_back(part);
  }
  return parts;
}

/// The regions of heat3d_two_steps: `second`, and `first` = `second` grown by 0 or 1 cell on each
/// side (as a halo two deep gives after an exchange), both kept one cell from the array's edge.
struct two_step_case {
  std::string name;
  field_layout layout;
  box first;
  box second;
};

/// Random two-step regions of `layout`: a random `second` (at least one cell), and `first` grown
/// from it by a random 0 or 1 on each side where the array leaves room.
inline two_step_case random_two_step_case(const std::string& name, const field_layout& layout,
                                          std::mt19937_64& rng) {
  two_step_case c{name, layout, {}, {}};
  std::uniform_int_distribution<int> grow(0, 1);
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t lo = 1;
    const std::int64_t hi = layout.allocated(axis) - 1;
    std::uniform_int_distribution<std::int64_t> a(lo, hi - 1);
    std::int64_t x = a(rng);
    std::int64_t y = a(rng);
    if (x > y) std::swap(x, y);
    c.second.lo[axis] = x;
    c.second.hi[axis] = y + 1;
    c.first.lo[axis] = std::max(lo, x - grow(rng));
    c.first.hi[axis] = std::min(hi, y + 1 + grow(rng));
  }
  return c;
}

/// What heat3d_two_steps must leave in `out`: `out` as it was, with `second` replaced by the
/// second of two heat3d_step calls of the host implementation (the first into a copy of `out`).
template <class T, class Step>
std::vector<T> two_steps_expected(const two_step_case& c, const std::vector<T>& in,
                                  const std::vector<T>& out, Step step) {
  std::vector<T> mid = out;
  step(c.layout, in.data(), mid.data(), c.first);
  std::vector<T> last = in;
  step(c.layout, mid.data(), last.data(), c.second);
  std::vector<T> expected = out;
  for (std::int64_t k = c.second.lo[2]; k < c.second.hi[2]; ++k) {
    for (std::int64_t j = c.second.lo[1]; j < c.second.hi[1]; ++j) {
      for (std::int64_t i = c.second.lo[0]; i < c.second.hi[0]; ++i) {
        const auto n = static_cast<std::size_t>(c.layout.index(i, j, k));
        expected[n] = last[n];
      }
    }
  }
  return expected;
}

/// Tolerance of a float/double result against the double reference for values of order 1.
template <class T>
double reference_tolerance() {
  return 16.0 * std::numeric_limits<T>::epsilon();
}

}  // namespace funnel::kernels::testing
