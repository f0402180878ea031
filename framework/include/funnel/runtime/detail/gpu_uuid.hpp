// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file gpu_uuid.hpp
 * @brief Formats the 16 bytes of a CUDA device UUID the way nvidia-smi prints them.
 *
 * Internal (funnel::detail): installed with the public headers, but not part of funnel's API.
 */
#pragma once

#include <string>

namespace funnel::detail {

/**
 * @brief Formats a CUDA UUID like `nvidia-smi -L`: "GPU-" then 8-4-4-4-12 lowercase hex digits.
 * @param bytes the 16 bytes of cudaUUID_t, most significant first
 * @return e.g. "GPU-8f8b1c2e-0d3a-4b5c-9e6f-0123456789ab"
 */
[[nodiscard]] std::string format_gpu_uuid(const unsigned char (&bytes)[16]);

}  // namespace funnel::detail
