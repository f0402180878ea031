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
  std::string problem;        ///< problem name, checked on restart
  std::string configuration;  ///< the full run configuration (e.g. JSON), stored verbatim
  std::array<double, 3> spacing{1, 1, 1};  ///< cell size along x, y, z
  file_mode mode = file_mode::automatic;   ///< shared file or file per rank
};

}  // namespace funnel::io
