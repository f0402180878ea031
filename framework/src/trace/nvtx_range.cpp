// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/trace/nvtx_range.hpp"

#include "funnel/config.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#endif

namespace funnel {

#if FUNNEL_HAS_CUDA
nvtx_range::nvtx_range(const char* name) noexcept { nvtxRangePushA(name); }
nvtx_range::~nvtx_range() { nvtxRangePop(); }
void nvtx_range::name_stream(stream_view stream, const char* name) noexcept {
  if (stream.is_cuda() && stream.native_handle() != nullptr) {
    nvtxNameCudaStreamA(stream.native_handle(), name);
  }
}
#else
nvtx_range::nvtx_range(const char* /*name*/) noexcept {}
nvtx_range::~nvtx_range() = default;
void nvtx_range::name_stream(stream_view /*stream*/, const char* /*name*/) noexcept {}
#endif

}  // namespace funnel
