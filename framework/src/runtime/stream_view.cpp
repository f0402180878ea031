// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/runtime/stream_view.hpp"

#include "funnel/config.hpp"
#include "funnel/error.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel {

// Host streams complete work eagerly, so they are always synchronised.
void stream_view::synchronize() const {
  if (!is_cuda()) return;
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaStreamSynchronize(handle_), "funnel::stream_view::synchronize");
#endif
}

bool stream_view::is_done() const noexcept {
  if (!is_cuda()) return true;
#if FUNNEL_HAS_CUDA
  return cudaStreamQuery(handle_) == cudaSuccess;
#else
  return true;
#endif
}

}  // namespace funnel
