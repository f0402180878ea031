// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pool_statistics.hpp
 * @brief Memory held and handed out by a funnel::memory_pool.
 */
#pragma once

#include <cstddef>

namespace funnel {

/**
 * @brief A snapshot of a memory pool's usage, in bytes.
 *
 * `reserved`: memory the pool holds from the device (or host); `used`: memory currently handed
 * out; the `_high` fields are their high-water marks since the pool was created.
 */
struct pool_statistics {
  std::size_t reserved = 0;       ///< bytes held by the pool now
  std::size_t used = 0;           ///< bytes handed out now
  std::size_t reserved_high = 0;  ///< most bytes ever held
  std::size_t used_high = 0;      ///< most bytes ever handed out at once
};

}  // namespace funnel
