// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file host_staging.hpp
 * @brief Whether the pipeline copies host data through its own pinned staging buffers.
 */
#pragma once

namespace funnel {

/**
 * @brief How the pipeline moves the caller's host arrays across the link.
 *
 * Copies from pageable memory cannot run asynchronously at full link speed, so pageable arrays
 * are copied chunk by chunk into pinned staging buffers by host functions on their own streams,
 * overlapped with the copies and kernels of other chunks. Arrays the caller pinned (a
 * funnel::pinned_buffer, or pinned_buffer::register_memory) are copied directly.
 */
enum class host_staging {
  automatic,  ///< stage only arrays the CUDA runtime does not report as pinned (never on host)
  always,     ///< always stage (on the host backend: exercises the staging path)
  never       ///< never stage (the caller guarantees pinned arrays)
};

}  // namespace funnel
