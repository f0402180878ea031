// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file file_mode.hpp
 * @brief How the ranks' blocks of a global array reach the file system.
 */
#pragma once

namespace funnel::io {

/**
 * @brief File organisation of a snapshot or checkpoint.
 *
 * Both organisations read back the same: the global array is one dataset of the main file.
 */
enum class file_mode {
  /// shared_file with parallel HDF5, else file_per_rank
  automatic,
  /// one file, written by all ranks with collective MPI-IO hyperslab writes (parallel HDF5 only)
  shared_file,
  /// one file per rank plus a main file whose virtual dataset stitches the blocks together
  /// (relative paths, so the directory can be moved); works with serial HDF5
  file_per_rank,
};

/**
 * @brief The organisation `automatic` stands for in this build.
 * @param mode the requested mode
 * @return `mode` itself, or what `automatic` resolves to
 * @throw funnel::unsupported for shared_file in a build without parallel HDF5
 */
[[nodiscard]] file_mode resolve(file_mode mode);

}  // namespace funnel::io
