// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Host implementation of heat3d_step (and heat3d_two_steps, a plain loop for tests and the
// host backend): OpenMP over (z, y) rows, a vectorisable loop along x.
// Each cell is computed by detail::heat_update_{1,2,3}d, the same expression the CUDA and
// Kokkos kernels use; this file is built with -ffp-contract=off so the results are bitwise equal.
#include <cstdint>

#include "detail/backends.hpp"
#include "funnel/kernels/detail/stencil_arithmetic.hpp"

namespace funnel::kernels::detail::host {
namespace {

// One row of `n` cells starting at `in`/`out`; sy and sz are the y and z strides.
template <int Dims, class T>
void heat_row(const T* __restrict__ in, T* __restrict__ out, std::int64_t n, std::int64_t sy,
              std::int64_t sz, T c) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) {
    if constexpr (Dims == 3) {
      out[i] = heat_update_3d(in[i], in[i - 1], in[i + 1], in[i - sy], in[i + sy], in[i - sz],
                              in[i + sz], c);
    } else if constexpr (Dims == 2) {
      out[i] = heat_update_2d(in[i], in[i - 1], in[i + 1], in[i - sy], in[i + sy], c);
    } else {
      out[i] = heat_update_1d(in[i], in[i - 1], in[i + 1], c);
    }
  }
}

template <int Dims, class T>
void heat_region(const field_layout& layout, const T* in, T* out, const box& region, T c) {
  const std::int64_t sy = layout.row_pitch();
  const std::int64_t sz = layout.plane_pitch();
  const std::int64_t n = region.extent(0);
  const std::int64_t k0 = region.lo[2];
  const std::int64_t j0 = region.lo[1];
  const std::int64_t nk = region.extent(2);
  const std::int64_t nj = region.extent(1);
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t k = 0; k < nk; ++k) {
    for (std::int64_t j = 0; j < nj; ++j) {
      const std::int64_t first = layout.index(region.lo[0], j0 + j, k0 + k);
      heat_row<Dims>(in + first, out + first, n, sy, sz, c);
    }
  }
}

}  // namespace

template <class T>
void heat3d_step(const field_layout& layout, const T* in, T* out, const box& region, T c) {
  if (layout.allocated(2) > 1) {
    heat_region<3>(layout, in, out, region, c);
  } else if (layout.allocated(1) > 1) {
    heat_region<2>(layout, in, out, region, c);
  } else {
    heat_region<1>(layout, in, out, region, c);
  }
}

template <class T>
void heat3d_two_steps(const field_layout& layout, const T* in, T* out, const box& first,
                      const box& second, T c) {
  const std::int64_t sy = layout.row_pitch();
  const std::int64_t sz = layout.plane_pitch();
  // The first step's value of a cell: computed from `in` on `first`, else `out` as it is (the
  // second step only writes cells of `first`, so what is read here is never written).
  const auto mid = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
    const std::int64_t idx = layout.index(i, j, k);
    const bool inside = i >= first.lo[0] && i < first.hi[0] && j >= first.lo[1] &&
                        j < first.hi[1] && k >= first.lo[2] && k < first.hi[2];
    if (!inside) return out[idx];
    return heat_update_3d(in[idx], in[idx - 1], in[idx + 1], in[idx - sy], in[idx + sy],
                          in[idx - sz], in[idx + sz], c);
  };
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t k = second.lo[2]; k < second.hi[2]; ++k) {
    for (std::int64_t j = second.lo[1]; j < second.hi[1]; ++j) {
      for (std::int64_t i = second.lo[0]; i < second.hi[0]; ++i) {
        out[layout.index(i, j, k)] =
            heat_update_3d(mid(i, j, k), mid(i - 1, j, k), mid(i + 1, j, k), mid(i, j - 1, k),
                           mid(i, j + 1, k), mid(i, j, k - 1), mid(i, j, k + 1), c);
      }
    }
  }
}

template void heat3d_step<float>(const field_layout&, const float*, float*, const box&, float);
template void heat3d_step<double>(const field_layout&, const double*, double*, const box&, double);
template void heat3d_two_steps<float>(const field_layout&, const float*, float*, const box&,
                                      const box&, float);
template void heat3d_two_steps<double>(const field_layout&, const double*, double*, const box&,
                                       const box&, double);

}  // namespace funnel::kernels::detail::host
