// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file stream_operations.hpp
 * @brief Stream-ordered copies, fills, waits and host callbacks (stream first).
 *
 * On the CUDA backend each call enqueues work and returns; on the host backend the work runs on
 * the calling thread before the call returns. Sizes must be positive and pointers non-null.
 */
#pragma once

#include <cstddef>

#include "funnel/runtime/event_view.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel {

/**
 * @brief Makes later work on `stream` wait until `event`'s captured work completes.
 * @param stream the stream that waits
 * @param event an event of the same backend (host events are complete once recorded)
 * @throw funnel::invalid_argument when the two belong to different backends
 * @throw funnel::cuda_error when the CUDA runtime fails
 */
void wait_event(stream_view stream, event_view event);

/**
 * @brief Copies `bytes` bytes from `src` to `dst`, in any direction (host, pinned, device).
 * @param stream orders the copy
 * @param dst destination, not null
 * @param src source, not null
 * @param bytes number of bytes, > 0
 * @throw funnel::invalid_argument for a null pointer or a zero/negative size
 * @throw funnel::cuda_error when the CUDA runtime fails
 */
void copy_async(stream_view stream, void* dst, const void* src, std::size_t bytes);

/**
 * @brief Copies a 2D block of `height` rows of `width_bytes` bytes between pitched buffers.
 * @param stream orders the copy
 * @param dst destination, not null
 * @param dst_pitch bytes between the starts of two destination rows, >= width_bytes
 * @param src source, not null
 * @param src_pitch bytes between the starts of two source rows, >= width_bytes
 * @param width_bytes bytes per row, > 0
 * @param height number of rows, > 0
 * @throw funnel::invalid_argument for a null pointer, a zero/negative size or a pitch below
 * width_bytes
 * @throw funnel::cuda_error when the CUDA runtime fails
 */
void copy_2d_async(stream_view stream, void* dst, std::size_t dst_pitch, const void* src,
                   std::size_t src_pitch, std::size_t width_bytes, std::size_t height);

/**
 * @brief Sets `bytes` bytes at `dst` to the byte `value` (device memory on the CUDA backend).
 * @param stream orders the fill
 * @param dst destination, not null
 * @param value byte value (converted to unsigned char)
 * @param bytes number of bytes, > 0
 * @throw funnel::invalid_argument for a null pointer or a zero/negative size
 * @throw funnel::cuda_error when the CUDA runtime fails
 */
void memset_async(stream_view stream, void* dst, int value, std::size_t bytes);

/**
 * @brief Calls `fn(user_data)` once the work submitted to `stream` so far has completed.
 *
 * CUDA backend: cudaLaunchHostFunc, so `fn` must not call CUDA. Host backend: called now.
 * @param stream orders the call
 * @param fn the function, not null
 * @param user_data passed to `fn` unchanged
 * @throw funnel::invalid_argument when `fn` is null
 * @throw funnel::cuda_error when the CUDA runtime fails
 */
void launch_host_func(stream_view stream, void (*fn)(void*), void* user_data);

}  // namespace funnel
