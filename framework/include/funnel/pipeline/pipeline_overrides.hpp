// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file pipeline_overrides.hpp
 * @brief Values the user fixed (`--chunks`, `--streams`, `--steps-per-pass`).
 */
#pragma once

#include <optional>

namespace funnel {

/// @brief What choose_pipeline must not pick itself; unset members are chosen automatically.
struct pipeline_overrides {
  std::optional<int> chunks;          ///< C
  std::optional<int> slots;           ///< S
  std::optional<int> steps_per_pass;  ///< k
};

}  // namespace funnel
