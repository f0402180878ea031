// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file activity_kind.hpp
 * @brief What kind of GPU work a busy span stands for.
 */
#pragma once

#include <cstdint>

namespace funnel::report {

/**
 * @brief The two kinds of GPU work a record keeps apart. Kernels and copies are kept apart
 * because `nvidia-smi`'s utilization counts kernels only: the report gives both.
 */
enum class activity_kind : std::uint32_t {
  kernel = 0,  ///< a kernel (CUPTI CONCURRENT_KERNEL), graph kernel nodes included
  copy = 1,    ///< a copy or memset (CUPTI MEMCPY, MEMCPY2, MEMSET)
};

/// @brief The kinds a record may hold, for loops.
inline constexpr activity_kind all_activity_kinds[] = {activity_kind::kernel, activity_kind::copy};

/**
 * @brief The kind's name in report.json.
 * @param kind a kind
 * @return "kernel" or "copy"
 */
[[nodiscard]] constexpr const char* to_string(activity_kind kind) noexcept {
  return kind == activity_kind::kernel ? "kernel" : "copy";
}

}  // namespace funnel::report
