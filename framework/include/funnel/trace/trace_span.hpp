// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file trace_span.hpp
 * @brief One timed span on a trace track (a Chrome trace "complete" event).
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace funnel {

/// @brief A named integer attached to a span, shown in the viewer's details pane.
struct trace_arg {
  std::string key;         ///< e.g. "bytes", "chunk"
  std::int64_t value = 0;  ///< the value
};

/**
 * @brief Something that ran on one track from `start_us` for `duration_us` microseconds.
 */
struct trace_span {
  std::string name;             ///< e.g. "h2d"
  int track = 0;                ///< id from trace_recorder::track
  double start_us = 0.0;        ///< start, µs since the recorder's epoch
  double duration_us = 0.0;     ///< length in µs (≥ 0)
  std::vector<trace_arg> args;  ///< details (bytes, chunk id, step, ...)
};

}  // namespace funnel
