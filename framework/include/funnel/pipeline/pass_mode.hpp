// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pass_mode.hpp
 * @brief What one executor pass runs: the real pipeline, or one of the benchmark baselines.
 */
#pragma once

#include <string>

namespace funnel {

/**
 * @brief Selects the work of one pipeline_executor pass.
 *
 * Only `pipelined` and `serial` compute results. The others time one part alone, for the
 * benchmark's bound and baselines, and leave the output array unspecified.
 */
enum class pass_mode {
  pipelined,     ///< H2D, kernels and D2H on their own streams, S chunks in flight
  serial,        ///< the same operations, one chunk at a time on one stream (the baseline)
  h2d_only,      ///< only the host → device copies
  d2h_only,      ///< only the device → host copies
  compute_only,  ///< only the kernels (on data copied in before the timed part)
  copies_only    ///< both copy directions at once, no kernels (the two-direction link rate)
};

/**
 * @brief The mode's name, for reports.
 * @param mode the mode
 * @return "pipelined", "serial", "h2d_only", "d2h_only", "compute_only" or "copies_only"
 */
[[nodiscard]] std::string to_string(pass_mode mode);

}  // namespace funnel
