// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Host implementation of jacobi2d_step: OpenMP over rows. The norm is summed per row in double
// into a slot of its own and the slots are added in row order afterwards, so the norm does not
// depend on the number of threads.
#include <cstdint>
#include <vector>

#include "detail/backends.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"

namespace funnel::kernels::detail::host {
namespace {

// Updates one row of `n` cells; returns the row's sum of squared updates when `Norm`.
template <bool Norm>
double jacobi_row(const float* __restrict__ a, float* __restrict__ a_new, std::int64_t n,
                  std::int64_t sy) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const float value = jacobi_update(a[i + 1], a[i - 1], a[i + sy], a[i - sy]);
    a_new[i] = value;
    if constexpr (Norm) sum += static_cast<double>(squared_update(value, a[i]));
  }
  return sum;
}

}  // namespace

void jacobi2d_step(const field_layout& layout, const float* a, float* a_new, const box& region,
                   float* l2_norm) {
  const std::int64_t sy = layout.row_pitch();
  const std::int64_t n = region.extent(0);
  const std::int64_t rows = region.extent(1);
  const std::int64_t first = layout.index(region.lo[0], region.lo[1], 0);
  if (l2_norm == nullptr) {
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      jacobi_row<false>(a + first + r * sy, a_new + first + r * sy, n, sy);
    }
    return;
  }
  std::vector<double> row_sums(static_cast<std::size_t>(rows));
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < rows; ++r) {
    row_sums[static_cast<std::size_t>(r)] =
        jacobi_row<true>(a + first + r * sy, a_new + first + r * sy, n, sy);
  }
  double total = 0.0;
  for (const double s : row_sums) total += s;
  *l2_norm += static_cast<float>(total);
}

}  // namespace funnel::kernels::detail::host
