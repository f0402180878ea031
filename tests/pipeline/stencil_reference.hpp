// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The reference stencil of the pipeline tests: an explicit heat update (7-point in 3D, 5-point
// in 2D) written once, so the whole-field reference and the per-chunk callback do the same
// arithmetic per cell and streamed results can be compared bitwise.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "funnel/decomposition/box.hpp"
#include "funnel/decomposition/field_layout.hpp"

namespace funnel::test {

template <class T>
void heat_step(const field_layout& f, const T* in, T* out, const box& region, T coefficient) {
  std::int64_t stride[3] = {1, f.allocated(0), f.allocated(0) * f.allocated(1)};
  for (std::int64_t k = region.lo[2]; k < region.hi[2]; ++k) {
    for (std::int64_t j = region.lo[1]; j < region.hi[1]; ++j) {
      for (std::int64_t i = region.lo[0]; i < region.hi[0]; ++i) {
        const std::int64_t c = f.index(i, j, k);
        T sum = 0;
        T count = 0;
        for (int a = 0; a < 3; ++a) {
          if (f.allocated(a) == 1) continue;
          sum += in[c - stride[a]] + in[c + stride[a]];
          count += 2;
        }
        out[c] = in[c] + coefficient * (sum - count * in[c]);
      }
    }
  }
}

// Applies `steps` whole-field steps (interior only; the halo keeps its boundary values).
template <class T>
std::vector<T> reference_steps(const field_layout& f, std::vector<T> field, int steps,
                               T coefficient) {
  std::vector<T> other = field;
  for (int s = 0; s < steps; ++s) {
    heat_step(f, field.data(), other.data(), f.interior_box(), coefficient);
    field.swap(other);
  }
  return field;
}

template <class T>
std::vector<T> random_field(const field_layout& f, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<T> value(-1, 1);
  std::vector<T> field(static_cast<std::size_t>(f.allocated_cells()));
  for (T& v : field) v = value(rng);
  return field;
}

template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// First index where a and b differ bitwise, or -1.
template <class T>
std::int64_t first_difference(const std::vector<T>& a, const std::vector<T>& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return static_cast<std::int64_t>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<std::int64_t>(std::min(a.size(), b.size()));
}

}  // namespace funnel::test
