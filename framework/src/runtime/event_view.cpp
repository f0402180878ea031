// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/runtime/event_view.hpp"

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/runtime/detail/backend_checks.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel {

// Host events complete when recorded, so there is never anything to wait for.
void event_view::synchronize() const {
  if (!is_cuda()) return;
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaEventSynchronize(handle_), "funnel::event::synchronize");
#else
  detail::require_cuda("funnel::event::synchronize");
#endif
}

bool event_view::query() const {
  if (!is_cuda()) return true;
#if FUNNEL_HAS_CUDA
  const cudaError_t status = cudaEventQuery(handle_);
  if (status == cudaErrorNotReady) return false;
  FUNNEL_CUDA_TRY(status, "funnel::event::query");
  return true;
#else
  detail::require_cuda("funnel::event::query");
  return false;
#endif
}

}  // namespace funnel
