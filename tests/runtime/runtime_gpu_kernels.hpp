// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Small kernels for runtime_gpu, compiled by nvcc in runtime_gpu_kernels.cu.
#pragma once

#include <cstddef>

#include "funnel/runtime/stream_view.hpp"

namespace funnel::test {

/**
 * @brief Enqueues a one-thread kernel that busy-waits `nanoseconds` of GPU global time, then
 * writes `value` to `*out` (device or pinned host memory; skipped when null).
 */
void launch_spin(stream_view stream, unsigned long long nanoseconds, int* out, int value);

/// @brief Enqueues a kernel that sets data[0..count) to `value`.
void launch_fill(stream_view stream, int* data, std::size_t count, int value);

}  // namespace funnel::test
