// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pipeline_options.hpp
 * @brief Creation options of a funnel::pipeline_executor.
 */
#pragma once

#include "funnel/pipeline/host_staging.hpp"

namespace funnel {

/// @brief How a pipeline_executor runs its chunks.
struct pipeline_options {
  /// @brief S: chunks in flight.
  ///
  /// The executor holds S device slots (two chunk buffers each, for the ping-pong of k steps)
  /// and, when staging, S pinned buffers per direction. 3 lets one chunk copy in, one compute
  /// and one copy out at the same time; more absorbs jitter.
  int slots = 3;
  /// Whether host arrays go through pinned staging buffers.
  host_staging staging = host_staging::automatic;
};

}  // namespace funnel
