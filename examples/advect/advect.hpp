// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The user's own numerics: one explicit step of 3D advection-diffusion,
//   du/dt + c . grad u = D laplace u,
// first-order upwind for the advection and the fourth-order central Laplacian for the diffusion.
// The Laplacian reaches two cells out along each axis, so the field needs 2-cell halos. Nothing
// here knows about funnel except the field layout it is handed.
#pragma once

#include <cstdint>
#include <funnel/config.hpp>
#include <funnel/decomposition/field_layout.hpp>
#include <funnel/runtime/backend_kind.hpp>
#include <funnel/runtime/stream_view.hpp>

#ifdef __CUDACC__
#define ADVECT_HOST_DEVICE __host__ __device__
#else
#define ADVECT_HOST_DEVICE
#endif

namespace advect {

/// Coefficients of one step, per axis; an axis of one cell has stride 0 and is skipped.
struct coefficients {
  double courant[3];       ///< c_a dt / h_a (signed: the flow direction picks the upwind side)
  double diffusion[3];     ///< D dt / h_a^2
  std::int64_t stride[3];  ///< distance between neighbours along the axis, in elements
};

/// The new value of cell `i` (an index into the allocated array) from the old field `u`.
ADVECT_HOST_DEVICE inline double updated(const double* u, std::int64_t i, const coefficients& k) {
  double du = 0.0;
  for (int a = 0; a < 3; ++a) {
    const std::int64_t s = k.stride[a];
    if (s == 0) continue;
    const double c = k.courant[a];
    du -= c > 0 ? c * (u[i] - u[i - s]) : c * (u[i + s] - u[i]);
    du += k.diffusion[a] *
          (-u[i - 2 * s] + 16.0 * u[i - s] - 30.0 * u[i] + 16.0 * u[i + s] - u[i + 2 * s]) / 12.0;
  }
  return u[i] + du;
}

/// One step on the interior of `in` into `out`, ordered on `stream` (a host loop on the host
/// backend, a CUDA kernel on the cuda backend).
void step(funnel::stream_view stream, const funnel::field_layout& layout, const double* in,
          double* out, const coefficients& k);

#if FUNNEL_HAS_CUDA
/// The CUDA kernel's launch (advect_cuda.cu).
void step_cuda(funnel::stream_view stream, const funnel::field_layout& layout, const double* in,
               double* out, const coefficients& k);
#endif

}  // namespace advect
