// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pipeline_choice.hpp
 * @brief The chunk count, slots and steps per pass the pipeline will use, and why.
 */
#pragma once

#include <string>

namespace funnel {

/// @brief Result of choose_pipeline.
struct pipeline_choice {
  int chunks = 1;                     ///< C
  int slots = 3;                      ///< S (chunks in flight; `--streams`)
  int steps_per_pass = 1;             ///< k
  double predicted_efficiency = 0.0;  ///< C/(C+1)-style fill/drain estimate for the plan printout
  std::string bound;   ///< predicted bound: "h2d", "d2h" or "kernel" ("" without a probe)
  std::string reason;  ///< how each value was chosen (override or auto, and the figures)

  /**
   * @brief The choice in words, for plan printouts.
   * @return one line: "chunks=C streams=S steps-per-pass=k (reason)"
   */
  [[nodiscard]] std::string describe() const;
};

}  // namespace funnel
