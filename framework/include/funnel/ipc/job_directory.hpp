// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file job_directory.hpp
 * @brief A private directory the ranks of one node share for one job (e.g. for allgather_fds).
 */
#pragma once

#include <mpi.h>

#include <string>
#include <utility>

namespace funnel {

/**
 * @brief A private directory with an unpredictable name, shared by the ranks of one node and
 * removed when the node's last rank is done with it.
 *
 * create() is collective over a node communicator. Node rank 0 makes the directory with mkdtemp
 * (mode 0700), inside `$FUNNEL_RUN_DIR` when funnel-run exported it (funnel-run's private
 * directory of the job on this node, which funnel-run removes when the job's ranks are gone,
 * however they ended), else in `$TMPDIR` or /tmp, and one reference file per node rank in it; it
 * broadcasts the name, and every rank checks that the directory is this user's with mode 0700.
 * The name cannot be guessed beforehand, so another user cannot take it first.
 *
 * Each rank's destructor removes the rank's reference and then tries to remove the directory,
 * which succeeds for the last rank of the node: no collective call in the destructor. A rank
 * killed before that leaves its reference behind; under funnel-run the reaper removes it with
 * the job's directory.
 *
 * Move-only. A default-constructed or moved-from job_directory owns nothing.
 */
class job_directory {
 public:
  /**
   * @brief Makes the node's directory (collective over `node_comm`).
   * @param node_comm the ranks of this node (e.g. from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED))
   * @return this rank's share of the directory
   * @throw funnel::invalid_argument when FUNNEL_RUN_DIR is set but is not a private directory
   * of this user, or the directory made is not this user's with mode 0700
   * @throw funnel::system_error when the directory or a reference cannot be created
   * @throw funnel::error on every other rank when one rank failed (none hangs)
   */
  [[nodiscard]] static job_directory create(MPI_Comm node_comm);

  /// @brief Owns nothing.
  job_directory() noexcept = default;
  /// @brief Drops this rank's reference; the last rank removes the directory (logs, never throws).
  ~job_directory();
  job_directory(const job_directory&) = delete;
  job_directory& operator=(const job_directory&) = delete;
  /**
   * @brief Takes over `other`'s reference.
   * @param other the share to take; owns nothing afterwards
   */
  job_directory(job_directory&& other) noexcept;
  /**
   * @brief Drops this reference (the last one removes the directory), then takes over
   * `other`'s.
   * @param other the share to take; owns nothing afterwards
   * @return this share
   */
  job_directory& operator=(job_directory&& other) noexcept;

  /**
   * @brief The node's directory, e.g. for allgather_fds().
   * @return its path; "" when this object owns nothing
   */
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  job_directory(std::string path, std::string reference) noexcept
      : path_(std::move(path)), reference_(std::move(reference)) {}
  void drop() noexcept;

  std::string path_;
  std::string reference_;
};

}  // namespace funnel
