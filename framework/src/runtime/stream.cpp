// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/runtime/stream.hpp"

#include <utility>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/runtime/detail/backend_checks.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel {
namespace {

#if FUNNEL_HAS_CUDA
cuda_stream_handle create_cuda_stream(stream_priority priority) {
  // CUDA numbers priorities so that lower is more urgent: "greatest" is the smallest number.
  int least = 0;
  int greatest = 0;
  FUNNEL_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest), "funnel::stream");
  const int value = priority == stream_priority::high ? greatest : least;
  cudaStream_t handle = nullptr;
  FUNNEL_CUDA_TRY(cudaStreamCreateWithPriority(&handle, cudaStreamNonBlocking, value),
                  "funnel::stream, priority " + std::to_string(value));
  return handle;
}
#endif

}  // namespace

stream::stream(backend_kind backend, stream_priority priority) : backend_(backend), handle_() {
  if (backend == backend_kind::host) return;
  detail::require_cuda("funnel::stream(cuda)");
#if FUNNEL_HAS_CUDA
  handle_ = create_cuda_stream(priority);
#else
  (void)priority;
#endif
}

stream stream::from_native_handle(cuda_stream_handle handle) {
  FUNNEL_EXPECTS(handle != nullptr,
                 "funnel::stream::from_native_handle: handle is nullptr (the legacy default "
                 "stream), which cannot be owned; pass a stream made by cudaStreamCreate*");
  if (!cuda_compiled()) detail::require_cuda("funnel::stream::from_native_handle");
  return stream{backend_kind::cuda, handle};
}

stream::~stream() { destroy(); }

stream::stream(stream&& other) noexcept
    : backend_(other.backend_), handle_(std::exchange(other.handle_, nullptr)) {}

stream& stream::operator=(stream&& other) noexcept {
  if (this != &other) {
    destroy();
    backend_ = other.backend_;
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

stream_view stream::view() const noexcept {
  return backend_ == backend_kind::cuda ? stream_view::from_native_handle(handle_)
                                        : stream_view::host();
}

void stream::synchronize() const { view().synchronize(); }

cuda_stream_handle stream::release() noexcept { return std::exchange(handle_, nullptr); }

void stream::destroy() noexcept {
  if (handle_ == nullptr) return;
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_LOG(cudaStreamDestroy(handle_));
#endif
  handle_ = nullptr;
}

}  // namespace funnel
