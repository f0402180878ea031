// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/runtime/stream_operations.hpp"

#include <cstring>
#include <string>

#include "funnel/config.hpp"
#include "funnel/error.hpp"
#include "funnel/runtime/detail/backend_checks.hpp"

#if FUNNEL_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace funnel {
namespace {

#if FUNNEL_HAS_CUDA
cudaStream_t native(stream_view stream) { return stream.native_handle(); }
#endif

}  // namespace

void wait_event(stream_view stream, event_view event) {
  constexpr const char* what = "funnel::wait_event";
  detail::expect_same_backend(what, stream.backend(), event.backend());
  // Host events complete when recorded, and host streams have no pending work to hold back.
  if (!stream.is_cuda()) return;
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaStreamWaitEvent(native(stream), event.native_handle(), 0), what);
#else
  detail::require_cuda(what);
#endif
}

void copy_async(stream_view stream, void* dst, const void* src, std::size_t bytes) {
  constexpr const char* what = "funnel::copy_async";
  detail::expect_pointer(what, "dst", dst);
  detail::expect_pointer(what, "src", src);
  detail::expect_size(what, "bytes", bytes);
  if (!stream.is_cuda()) {
    std::memcpy(dst, src, bytes);
    return;
  }
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, native(stream)),
                  std::string(what) + ", " + std::to_string(bytes) + " bytes");
#else
  detail::require_cuda(what);
#endif
}

void copy_2d_async(stream_view stream, void* dst, std::size_t dst_pitch, const void* src,
                   std::size_t src_pitch, std::size_t width_bytes, std::size_t height) {
  constexpr const char* what = "funnel::copy_2d_async";
  detail::expect_pointer(what, "dst", dst);
  detail::expect_pointer(what, "src", src);
  detail::expect_size(what, "width_bytes", width_bytes);
  detail::expect_size(what, "height", height);
  FUNNEL_EXPECTS(dst_pitch >= width_bytes,
                 std::string(what) + ": dst_pitch = " + std::to_string(dst_pitch) +
                     " is below width_bytes = " + std::to_string(width_bytes) +
                     "; a row must fit in the pitch");
  FUNNEL_EXPECTS(src_pitch >= width_bytes,
                 std::string(what) + ": src_pitch = " + std::to_string(src_pitch) +
                     " is below width_bytes = " + std::to_string(width_bytes) +
                     "; a row must fit in the pitch");
  if (!stream.is_cuda()) {
    auto* out = static_cast<unsigned char*>(dst);
    const auto* in = static_cast<const unsigned char*>(src);
    for (std::size_t row = 0; row < height; ++row) {
      std::memcpy(out + row * dst_pitch, in + row * src_pitch, width_bytes);
    }
    return;
  }
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width_bytes, height,
                                    cudaMemcpyDefault, native(stream)),
                  std::string(what) + ", " + std::to_string(height) + " rows of " +
                      std::to_string(width_bytes) + " bytes");
#else
  detail::require_cuda(what);
#endif
}

void memset_async(stream_view stream, void* dst, int value, std::size_t bytes) {
  constexpr const char* what = "funnel::memset_async";
  detail::expect_pointer(what, "dst", dst);
  detail::expect_size(what, "bytes", bytes);
  if (!stream.is_cuda()) {
    std::memset(dst, value, bytes);
    return;
  }
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaMemsetAsync(dst, value, bytes, native(stream)),
                  std::string(what) + ", " + std::to_string(bytes) + " bytes");
#else
  detail::require_cuda(what);
#endif
}

void launch_host_func(stream_view stream, void (*fn)(void*), void* user_data) {
  constexpr const char* what = "funnel::launch_host_func";
  detail::expect_pointer(what, "fn", reinterpret_cast<const void*>(fn));
  if (!stream.is_cuda()) {
    fn(user_data);
    return;
  }
#if FUNNEL_HAS_CUDA
  FUNNEL_CUDA_TRY(cudaLaunchHostFunc(native(stream), fn, user_data), what);
#else
  detail::require_cuda(what);
#endif
}

}  // namespace funnel
