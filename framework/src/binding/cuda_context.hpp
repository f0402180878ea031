// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// The first CUDA calls of a rank, made explicitly by funnel::binding so that a refused context is
// reported as that (see detail::context_failure_message), not as whatever later call failed.
#pragma once

#include "funnel/binding/detail/binding_plan.hpp"

namespace funnel::detail {

/**
 * @brief The number of visible CUDA devices (0 without a device or without CUDA).
 * @param facts what the rank knows, for the message
 * @throw funnel::cuda_error with context_failure_message() when CUDA cannot even count them
 * (e.g. errors 805-810 under MPS, or a driver too old)
 */
[[nodiscard]] int visible_device_count(const context_failure& facts);

/**
 * @brief Makes `device` current and creates its primary context now.
 * @param device CUDA ordinal
 * @param facts what the rank knows, for the message
 * @throw funnel::cuda_error with context_failure_message() when the context cannot be created
 */
void create_context(int device, context_failure facts);

}  // namespace funnel::detail
