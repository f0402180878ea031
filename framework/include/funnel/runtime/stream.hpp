// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file stream.hpp
 * @brief Owning, move-only stream of either backend.
 */
#pragma once

#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/stream_priority.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel {

/**
 * @brief Owns a stream: a CUDA stream (created non-blocking, so it never serialises with the
 * legacy default stream) or the host backend's in-order stream.
 *
 * Move-only. A moved-from stream may only be destroyed or assigned to. Pass `view()` (or the
 * stream itself, which converts) to stream-ordered calls.
 */
class stream {
 public:
  /**
   * @brief Creates a stream.
   * @param backend which backend runs its work
   * @param priority `normal` (the device's least priority) or `high` (its greatest)
   * @throw funnel::unsupported for the CUDA backend without CUDA compiled in or a visible device
   * @throw funnel::cuda_error when the CUDA runtime cannot create the stream
   */
  explicit stream(backend_kind backend, stream_priority priority = stream_priority::normal);

  /**
   * @brief Takes ownership of a CUDA stream created elsewhere; it is destroyed with this object.
   * @param handle a cudaStream_t; not the legacy default stream (nullptr)
   * @return the owning stream
   * @throw funnel::invalid_argument when `handle` is nullptr
   * @throw funnel::unsupported when CUDA is not compiled in
   */
  [[nodiscard]] static stream from_native_handle(cuda_stream_handle handle);

  /// @brief Destroys the CUDA stream (after its pending work completes); logs, never throws.
  ~stream();
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  /**
   * @brief Takes over `other`'s stream.
   * @param other the stream to take; left empty
   */
  stream(stream&& other) noexcept;
  /**
   * @brief Destroys the stream held, then takes over `other`'s.
   * @param other the stream to take; left empty
   * @return this stream
   */
  stream& operator=(stream&& other) noexcept;

  /**
   * @brief A non-owning view for stream-ordered calls.
   * @return a view valid while this stream lives and is not moved from
   */
  [[nodiscard]] stream_view view() const noexcept;
  /**
   * @brief Same as view(), so a stream can be passed where a stream_view is expected.
   * @return view()
   */
  operator stream_view() const noexcept { return view(); }  // NOLINT(google-explicit-constructor)

  /**
   * @brief Which backend runs this stream's work.
   * @return the backend given at creation
   */
  [[nodiscard]] backend_kind backend() const noexcept { return backend_; }
  /**
   * @brief The underlying CUDA stream, for code that calls CUDA directly.
   * @return the cudaStream_t; nullptr on the host backend and after a move or release()
   */
  [[nodiscard]] cuda_stream_handle native_handle() const noexcept { return handle_; }

  /**
   * @brief Blocks until all work submitted to this stream has completed.
   * @throw funnel::cuda_error if the CUDA stream reports an error
   */
  void synchronize() const;

  /**
   * @brief Gives up ownership without destroying the stream.
   * @return the cudaStream_t (nullptr on the host backend); the caller must destroy it
   */
  [[nodiscard]] cuda_stream_handle release() noexcept;

 private:
  stream(backend_kind backend, cuda_stream_handle handle) noexcept
      : backend_(backend), handle_(handle) {}
  void destroy() noexcept;

  backend_kind backend_;
  cuda_stream_handle handle_;
};

}  // namespace funnel
