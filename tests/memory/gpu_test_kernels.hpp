// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// Small kernels the GPU tests of memory and ipc need (gpu_test_kernels.cu).
#pragma once

#include <cstddef>
#include <cstdint>

#include "funnel/runtime/stream_view.hpp"

namespace funnel::testing {

/// Occupies `stream` until `*release` becomes non-zero or `max_ns` nanoseconds have passed.
/// `release` must be device-accessible host memory (mapped pinned).
void launch_spin(cuda_stream_handle stream, const volatile int* release, std::uint64_t max_ns);

/// dst[i] = src[i] for i < count, by a kernel (so the reading device really reads).
void launch_copy_words(cuda_stream_handle stream, std::uint64_t* dst, const std::uint64_t* src,
                       std::size_t count);

}  // namespace funnel::testing
