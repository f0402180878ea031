// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file event.hpp
 * @brief Owning, move-only event of either backend.
 */
#pragma once

#include <chrono>

#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/event_flags.hpp"
#include "funnel/runtime/event_ipc_handle.hpp"
#include "funnel/runtime/event_view.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel {

/**
 * @brief Owns an event: a CUDA event, or on the host backend the steady-clock time it was last
 * recorded at.
 *
 * CUDA events are created with cudaEventDisableTiming unless `event_flags::timing` is given, so
 * synchronisation-only events stay cheap. Move-only; a moved-from event may only be destroyed or
 * assigned to.
 */
class event {
 public:
  /**
   * @brief Creates an event.
   * @param backend which backend's streams it is recorded on
   * @param flags `none`, `timing` or `interprocess` (not `timing | interprocess`)
   * @throw funnel::invalid_argument for unknown flags or `timing | interprocess`
   * @throw funnel::unsupported for `interprocess` on the host backend, or the CUDA backend
   * without CUDA compiled in or a visible device
   * @throw funnel::cuda_error when the CUDA runtime cannot create the event
   */
  explicit event(backend_kind backend, event_flags flags = event_flags::none);

  /**
   * @brief Takes ownership of a CUDA event created elsewhere; it is destroyed with this object.
   * @param handle the cudaEvent_t, not nullptr
   * @param flags the flags it was created with (`timing` when it was created without
   * cudaEventDisableTiming), so that elapsed_ms and export_ipc know what it supports
   * @return the owning event
   * @throw funnel::invalid_argument when `handle` is nullptr
   * @throw funnel::unsupported when CUDA is not compiled in
   */
  [[nodiscard]] static event from_native_handle(cuda_event_handle handle,
                                                event_flags flags = event_flags::none);

  /// @brief Destroys the CUDA event; logs, never throws.
  ~event();
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  /**
   * @brief Takes over `other`'s event.
   * @param other the event to take; left empty
   */
  event(event&& other) noexcept;
  /**
   * @brief Destroys the event held, then takes over `other`'s.
   * @param other the event to take; left empty
   * @return this event
   */
  event& operator=(event&& other) noexcept;

  /**
   * @brief Captures the work submitted to `stream` so far.
   * @param stream a stream of the same backend
   * @throw funnel::invalid_argument when the stream belongs to another backend
   * @throw funnel::cuda_error when the CUDA runtime fails
   */
  void record(stream_view stream);

  /**
   * @brief The same, and while `stream` is being captured into a CUDA graph the record becomes
   * a node of that graph, so every launch of the graph records the event (a record() during
   * capture only orders the captured work; it records nothing when the graph runs).
   * @param stream a stream of the same backend
   * @throw funnel::invalid_argument when the stream belongs to another backend
   * @throw funnel::cuda_error when the CUDA runtime fails
   */
  void record_in_graph(stream_view stream);

  /**
   * @brief Blocks until the captured work has completed.
   * @throw funnel::cuda_error if the CUDA runtime reports an error
   */
  void synchronize() const;
  /**
   * @brief Whether the captured work has completed, without blocking.
   * @return true when it has, or when the event was never recorded
   * @throw funnel::cuda_error if the CUDA runtime reports an error other than "not ready"
   */
  [[nodiscard]] bool query() const;

  /**
   * @brief A non-owning view, e.g. for wait_event.
   * @return a view valid while this event lives and is not moved from
   */
  [[nodiscard]] event_view view() const noexcept;
  /**
   * @brief Which backend the event belongs to.
   * @return the backend given at creation
   */
  [[nodiscard]] backend_kind backend() const noexcept { return backend_; }
  /**
   * @brief The flags the event was created with.
   * @return what decides whether elapsed_ms() and export_ipc() accept it
   */
  [[nodiscard]] event_flags flags() const noexcept { return flags_; }
  /**
   * @brief The underlying CUDA event, for code that calls CUDA directly.
   * @return the cudaEvent_t; nullptr on the host backend and after a move or release()
   */
  [[nodiscard]] cuda_event_handle native_handle() const noexcept { return handle_; }

  /**
   * @brief Milliseconds between two recorded events (waits for both on the CUDA backend).
   * @param start recorded first
   * @param end recorded after `start`
   * @return elapsed time in milliseconds
   * @throw funnel::invalid_argument when either lacks event_flags::timing, was never recorded
   * (host backend), or the two belong to different backends
   * @throw funnel::cuda_error when the CUDA runtime fails (e.g. an event never recorded)
   */
  [[nodiscard]] static float elapsed_ms(const event& start, const event& end);

  /**
   * @brief Exports an interprocess event so another process of the node can wait on it.
   * @return the handle to send to the other process
   * @throw funnel::unsupported on the host backend
   * @throw funnel::invalid_argument when the event lacks event_flags::interprocess
   * @throw funnel::cuda_error when the CUDA runtime fails
   */
  [[nodiscard]] event_ipc_handle export_ipc() const;

  /**
   * @brief Opens an event exported by another process (CUDA backend).
   * @param handle what export_ipc returned there; the exporting event must outlive its use here
   * @return an owning event with event_flags::interprocess
   * @throw funnel::unsupported without CUDA compiled in or a visible device
   * @throw funnel::cuda_error when the CUDA runtime fails (e.g. same process, or a bad handle)
   */
  [[nodiscard]] static event import_ipc(const event_ipc_handle& handle);

  /**
   * @brief Gives up ownership without destroying the event.
   * @return the cudaEvent_t (nullptr on the host backend); the caller must destroy it
   */
  [[nodiscard]] cuda_event_handle release() noexcept;

 private:
  event(backend_kind backend, event_flags flags, cuda_event_handle handle) noexcept
      : backend_(backend), flags_(flags), handle_(handle) {}
  void destroy() noexcept;

  backend_kind backend_;
  event_flags flags_;
  cuda_event_handle handle_;
  // Host backend: when record() last ran; unset until then.
  std::chrono::steady_clock::time_point recorded_at_{};
  bool recorded_ = false;
};

}  // namespace funnel
