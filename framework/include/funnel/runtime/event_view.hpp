// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file event_view.hpp
 * @brief Non-owning view of a funnel event (CUDA event or host event).
 */
#pragma once

#include "funnel/runtime/backend_kind.hpp"

struct CUevent_st;  // the CUDA runtime's opaque event type (cudaEvent_t is CUevent_st*)

namespace funnel {

/// @brief The CUDA runtime's event handle type, usable without including CUDA headers.
using cuda_event_handle = CUevent_st*;

/**
 * @brief A non-owning reference to an event of either backend; copyable and cheap.
 *
 * Host events complete when they are recorded (host streams run work eagerly), so on the host
 * backend `query` is always true and `synchronize` returns at once.
 */
class event_view {
 public:
  /**
   * @brief A view of a host-backend event.
   * @return a view; all host events behave alike for waiting, so all such views compare equal
   */
  [[nodiscard]] static constexpr event_view host() noexcept {
    return event_view{backend_kind::host, nullptr};
  }
  /**
   * @brief A view of a CUDA event owned elsewhere.
   * @param handle the cudaEvent_t
   * @return the view; the event must outlive its use through it
   */
  [[nodiscard]] static constexpr event_view from_native_handle(cuda_event_handle handle) noexcept {
    return event_view{backend_kind::cuda, handle};
  }

  /**
   * @brief Which backend the event belongs to.
   * @return host or cuda
   */
  [[nodiscard]] constexpr backend_kind backend() const noexcept { return backend_; }
  /**
   * @brief Whether this is a CUDA event.
   * @return backend() == backend_kind::cuda
   */
  [[nodiscard]] constexpr bool is_cuda() const noexcept { return backend_ == backend_kind::cuda; }
  /**
   * @brief The underlying CUDA event, for code that calls CUDA directly.
   * @return the cudaEvent_t; nullptr on the host backend
   */
  [[nodiscard]] constexpr cuda_event_handle native_handle() const noexcept { return handle_; }

  /**
   * @brief Blocks until the work captured by the last record has completed.
   * @throw funnel::cuda_error if the CUDA runtime reports an error
   */
  void synchronize() const;
  /**
   * @brief Whether the work captured by the last record has completed, without blocking.
   * @return true when it has, when the event was never recorded, and always on the host backend
   * @throw funnel::cuda_error if the CUDA runtime reports an error other than "not ready"
   */
  [[nodiscard]] bool query() const;

  /// @brief Same backend and same handle.
  friend constexpr bool operator==(event_view a, event_view b) noexcept {
    return a.backend_ == b.backend_ && a.handle_ == b.handle_;
  }
  /// @brief Negation of ==.
  friend constexpr bool operator!=(event_view a, event_view b) noexcept { return !(a == b); }

 private:
  constexpr event_view(backend_kind backend, cuda_event_handle handle) noexcept
      : backend_(backend), handle_(handle) {}

  backend_kind backend_;
  cuda_event_handle handle_;
};

}  // namespace funnel
