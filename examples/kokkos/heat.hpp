// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The user's own numerics, written as a Kokkos kernel: one explicit step of 3D diffusion with the
// 27-point box stencil,
//   u_new = u + rate * (mean of u over the 3x3x3 cells around the cell - u),
// (3x3 cells in 2D, where the axis of one cell is left out). The weights are symmetric and sum to
// one, so with periodic boundaries the total mass is conserved up to rounding, and 0 <= rate <= 1
// makes every new value a convex combination of old ones (stable). The stencil reaches one cell
// out along every axis, diagonals included, so the field needs 1-cell halos with their edge and
// corner ghosts. Nothing here knows about funnel: it is handed views and an index box.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>

namespace heat {

/// Coefficients of one step.
struct coefficients {
  double rate;    ///< how far a cell moves towards its neighbourhood's mean, in [0, 1]
  int reach[3];   ///< 1 along an axis with ghosts, 0 along an axis of one cell
  double weight;  ///< 1 / the number of cells in the stencil
};

/// The kernel body: `out(i, j, k)` from `in` around (i, j, k). A functor rather than a
/// KOKKOS_LAMBDA, because nvcc refuses extended lambdas inside a generic lambda.
template <class In, class Out>
struct box_step {
  In in;
  Out out;
  coefficients k;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, const std::int64_t j,
                                         const std::int64_t l) const {
    double sum = 0.0;
    for (int c = -k.reach[2]; c <= k.reach[2]; ++c) {
      for (int b = -k.reach[1]; b <= k.reach[1]; ++b) {
        for (int a = -k.reach[0]; a <= k.reach[0]; ++a) sum += in(i + a, j + b, l + c);
      }
    }
    out(i, j, l) = in(i, j, l) + k.rate * (sum * k.weight - in(i, j, l));
  }
};

/// One step on the cells [lo, hi) of `in` into `out`, on the execution space instance `space`
/// (so in the order of the stream it belongs to). x is the fastest index, as in the views.
template <class Space, class In, class Out>
void step(const Space& space, const In& in, const Out& out, const std::int64_t (&lo)[3],
          const std::int64_t (&hi)[3], const coefficients& k) {
  // [porting:kernel]
  using policy =
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<3, Kokkos::Iterate::Left, Kokkos::Iterate::Left>,
                            Kokkos::IndexType<std::int64_t>>;
  Kokkos::parallel_for("heat::step", policy(space, {lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}),
                       box_step<In, Out>{in, out, k});
  // [porting:end]
}

}  // namespace heat
