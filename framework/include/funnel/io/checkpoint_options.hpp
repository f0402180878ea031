// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file checkpoint_options.hpp
 * @brief Settings of a checkpoint directory.
 */
#pragma once

#include <array>
#include <string>

#include "funnel/io/file_mode.hpp"

namespace funnel::io {

/// @brief Where and how a checkpoint_writer writes checkpoints.
struct checkpoint_options {
  std::string directory;      ///< checkpoint directory (created when missing; locked)
  int keep_last = 2;          ///< complete checkpoints kept (>= 1); older ones are removed
  std::string problem;        ///< problem name, checked on restart (no control characters)
  std::string configuration;  ///< the full run configuration (e.g. JSON), stored verbatim
  std::array<double, 3> spacing{1, 1, 1};  ///< cell size along x, y, z
  file_mode mode = file_mode::automatic;   ///< shared file or file per rank
  /**
   * @brief The run whose checkpoint series this is, stored in every checkpoint (`run_id`).
   *
   * Empty for a fresh run: the writer makes a new id, and refuses a directory that already holds
   * checkpoints (they are another run's). A run restarted from a checkpoint passes that
   * checkpoint's checkpoint_reader::run_id(): its checkpoints continue the series, and a
   * directory holding checkpoints of that series is accepted. 1 to 64 letters, digits, '-', '_'
   * or '.'.
   */
  std::string run_id;
  /**
   * @brief Start the directory over: checkpoints of another run in it are removed (with `latest`)
   * when the writer opens it, instead of being refused. For an explicit user request only.
   */
  bool start_over = false;
};

}  // namespace funnel::io
