// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
#include "funnel/io/file_mode.hpp"

#include "funnel/config.hpp"
#include "funnel/error.hpp"

namespace funnel::io {

file_mode resolve(file_mode mode) {
  if (mode == file_mode::automatic) {
    return FUNNEL_HAS_PARALLEL_HDF5 ? file_mode::shared_file : file_mode::file_per_rank;
  }
  if (mode == file_mode::shared_file && !FUNNEL_HAS_PARALLEL_HDF5) {
    throw unsupported(
        "file_mode::shared_file needs parallel HDF5, and this build uses serial HDF5: use "
        "file_mode::file_per_rank or file_mode::automatic");
  }
  return mode;
}

}  // namespace funnel::io
