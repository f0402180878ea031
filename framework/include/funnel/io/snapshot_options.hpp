// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file snapshot_options.hpp
 * @brief Settings of a snapshot series.
 */
#pragma once

#include <array>
#include <string>

#include "funnel/io/file_mode.hpp"

namespace funnel::io {

/// @brief Where and how a snapshot_writer writes a series.
struct snapshot_options {
  std::string directory;                   ///< output directory (created when missing)
  std::string series = "snapshot";         ///< file prefix: `<series>-<step>.h5`, `<series>.xmf`;
                                           ///< 1-128 letters, digits, `_`, `-` (not last)
  std::string problem;                     ///< problem name, stored as attribute "problem"
  std::array<double, 3> spacing{1, 1, 1};  ///< cell size along x, y, z
  std::array<double, 3> origin{0, 0, 0};   ///< lower corner of cell (0,0,0) along x, y, z
  file_mode mode = file_mode::automatic;   ///< shared file or file per rank
};

}  // namespace funnel::io
