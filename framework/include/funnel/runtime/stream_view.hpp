// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file stream_view.hpp
 * @brief Non-owning view of a funnel stream (CUDA stream or host in-order stream).
 */
#pragma once

#include "funnel/runtime/backend_kind.hpp"

struct CUstream_st;  // the CUDA runtime's opaque stream type (cudaStream_t is CUstream_st*)

namespace funnel {

/// @brief The CUDA runtime's stream handle type, usable without including CUDA headers.
using cuda_stream_handle = CUstream_st*;

/**
 * @brief A non-owning reference to a stream of either backend.
 *
 * Copyable and cheap. On the host backend work submitted "to the stream" completes before the
 * submitting call returns, which is a valid in-order schedule; `synchronize` and `is_done` are
 * then trivially satisfied.
 */
class stream_view {
 public:
  /**
   * @brief The host backend's stream.
   * @return a view; every host stream behaves alike, so all such views compare equal
   */
  [[nodiscard]] static constexpr stream_view host() noexcept {
    return stream_view{backend_kind::host, nullptr};
  }
  /**
   * @brief A view of a CUDA stream owned elsewhere (e.g. by Kokkos or the application).
   * @param handle the cudaStream_t; nullptr means the legacy default stream
   * @return the view; the stream must outlive its use through it
   */
  [[nodiscard]] static constexpr stream_view from_native_handle(
      cuda_stream_handle handle) noexcept {
    return stream_view{backend_kind::cuda, handle};
  }

  /**
   * @brief Which backend runs this stream's work.
   * @return host or cuda
   */
  [[nodiscard]] constexpr backend_kind backend() const noexcept { return backend_; }
  /**
   * @brief Whether this is a CUDA stream.
   * @return backend() == backend_kind::cuda
   */
  [[nodiscard]] constexpr bool is_cuda() const noexcept { return backend_ == backend_kind::cuda; }
  /**
   * @brief The underlying CUDA stream, for code that calls CUDA directly.
   * @return the cudaStream_t; nullptr for the host backend or the legacy default stream
   */
  [[nodiscard]] constexpr cuda_stream_handle native_handle() const noexcept { return handle_; }

  /**
   * @brief Blocks until all work submitted so far has completed.
   * @throw funnel::cuda_error if the CUDA stream reports an error
   */
  void synchronize() const;
  /**
   * @brief Whether all work submitted so far has completed, without blocking.
   * @return true when it has (always on the host backend); false while work is pending, and
   * also when the CUDA stream reports an error
   */
  [[nodiscard]] bool is_done() const noexcept;

  /// @brief Same backend and same handle.
  friend constexpr bool operator==(stream_view a, stream_view b) noexcept {
    return a.backend_ == b.backend_ && a.handle_ == b.handle_;
  }
  /// @brief Negation of ==.
  friend constexpr bool operator!=(stream_view a, stream_view b) noexcept { return !(a == b); }

 private:
  constexpr stream_view(backend_kind backend, cuda_stream_handle handle) noexcept
      : backend_(backend), handle_(handle) {}

  backend_kind backend_;
  cuda_stream_handle handle_;
};

}  // namespace funnel
