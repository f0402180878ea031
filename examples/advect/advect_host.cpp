// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The step on the host backend (a plain loop; funnel's host streams run work as it is submitted),
// and the dispatch to the CUDA kernel when the stream is a CUDA stream.
#include <cstdint>

#include "advect.hpp"

namespace advect {

void step(funnel::stream_view stream, const funnel::field_layout& layout, const double* in,
          double* out, const coefficients& k) {
#if FUNNEL_HAS_CUDA
  if (stream.backend() == funnel::backend_kind::cuda) {
    step_cuda(stream, layout, in, out, k);
    return;
  }
#endif
  const funnel::box b = layout.interior_box();
  for (std::int64_t z = b.lo[2]; z < b.hi[2]; ++z) {
    for (std::int64_t y = b.lo[1]; y < b.hi[1]; ++y) {
      for (std::int64_t x = b.lo[0]; x < b.hi[0]; ++x) {
        const std::int64_t i = layout.index(x, y, z);
        out[i] = updated(in, i, k);
      }
    }
  }
}

}  // namespace advect
