// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file stream_priority.hpp
 * @brief Scheduling priority of a funnel stream.
 */
#pragma once

namespace funnel {

/**
 * @brief Priority a stream's work is scheduled with on the GPU.
 *
 * Pipelines put halo exchanges on a high-priority stream so that the critical path overtakes
 * interior compute. The host backend runs work eagerly and ignores the priority.
 */
enum class stream_priority {
  normal,  ///< the device's least priority, CUDA's default
  high     ///< the device's greatest priority
};

}  // namespace funnel
