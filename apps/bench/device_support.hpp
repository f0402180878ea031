// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file device_support.hpp
 * @brief The few device calls funnel-bench makes outside funnel's own API: the raw
 * cudaMalloc/cudaFree baseline, the synthetic kernel, and version strings. No CUDA headers
 * here; on the host backend each call has a CPU counterpart.
 */
#pragma once

#include <cstddef>
#include <string>

#include "funnel/runtime/backend_kind.hpp"
#include "funnel/runtime/stream_view.hpp"

namespace funnel::bench {

/**
 * @brief The allocator funnel's pool is measured against: cudaMalloc (cuda) or std::malloc
 * (host). Synchronous, like the code that calls it per step.
 * @param backend which one
 * @param bytes size (> 0)
 * @return the allocation
 * @throw funnel::out_of_memory / funnel::cuda_error when it fails
 */
[[nodiscard]] void* raw_allocate(backend_kind backend, std::size_t bytes);

/**
 * @brief cudaFree (which waits for the whole device) or std::free.
 * @param backend the backend `raw_allocate` was called with
 * @param ptr the allocation (nullptr: no-op)
 */
void raw_free(backend_kind backend, void* ptr) noexcept;

/// @brief Threads per block of the synthetic kernel.
inline constexpr int spin_threads_per_block = 256;

/**
 * @brief The synthetic under-occupying workload: `blocks` blocks of spin_threads_per_block
 * threads, each running a dependent chain of `iterations` fused multiply-adds (fixed work, so
 * blocks that share an SM slow each other down as real kernels do). On the host stream: the
 * same chains for one thread per block, run now.
 * @param stream where to launch
 * @param blocks grid size (≥ 1)
 * @param iterations chain length per thread (≥ 1)
 * @param sink blocks × spin_threads_per_block floats in the stream's memory space; written
 * only if the chain reaches an impossible value, which keeps the compiler from removing it
 * @throw funnel::cuda_error when the launch fails
 */
void spin(stream_view stream, int blocks, long long iterations, float* sink);

/// @brief CUDA runtime version as "13.0" ("" without CUDA compiled in).
[[nodiscard]] std::string cuda_runtime_version();
/// @brief CUDA driver API version as "13.0" ("" without CUDA or a driver).
[[nodiscard]] std::string cuda_driver_version();

/// @cond INTERNAL
namespace detail {
/// @brief The CUDA launch of spin() (spin_kernel.cu).
void launch_spin_kernel(cuda_stream_handle stream, int blocks, long long iterations, float* sink);
}  // namespace detail
/// @endcond

}  // namespace funnel::bench
