// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
// MPI helpers of the io tests: a fresh directory shared by all ranks, the file modes this build
// supports, and rank 0 doing file surgery while the others wait.
#pragma once

#include <mpi.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "funnel/config.hpp"
#include "funnel/io/file_mode.hpp"

namespace funnel::io::test {

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

/// A new empty directory, the same path on every rank of `comm`; removed by the destructor.
class shared_directory {
 public:
  explicit shared_directory(MPI_Comm comm, const std::string& tag) : comm_(comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    std::string path;
    if (rank == 0) {
      path = (std::filesystem::temp_directory_path() /
              ("funnel-" + tag + "-" + std::to_string(::getpid()) + "-" +
               std::to_string(std::random_device{}())))
                 .string();
      std::filesystem::create_directories(path);
    }
    int length = static_cast<int>(path.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, comm);
    path.resize(static_cast<std::size_t>(length));
    MPI_Bcast(path.data(), length, MPI_CHAR, 0, comm);
    path_ = path;
  }
  ~shared_directory() {
    MPI_Barrier(comm_);
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    std::error_code ec;
    if (rank == 0) std::filesystem::remove_all(path_, ec);
  }
  shared_directory(const shared_directory&) = delete;
  shared_directory& operator=(const shared_directory&) = delete;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  MPI_Comm comm_;
  std::string path_;
};

/// The file modes this build can write.
inline std::vector<file_mode> supported_modes() {
  std::vector<file_mode> modes{file_mode::file_per_rank};
  if (FUNNEL_HAS_PARALLEL_HDF5) modes.push_back(file_mode::shared_file);
  return modes;
}

/// Test-name suffix of a mode.
inline std::string mode_name(file_mode mode) {
  return mode == file_mode::shared_file ? "SharedFile" : "FilePerRank";
}

}  // namespace funnel::io::test
