// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file fd_exchange.hpp
 * @brief Passing file descriptors between the MPI ranks of one node (Unix sockets, SCM_RIGHTS).
 */
#pragma once

#include <mpi.h>

#include <chrono>
#include <string>
#include <vector>

#include "funnel/ipc/unique_fd.hpp"

namespace funnel {

/**
 * @brief Gives every rank of a node a duplicate of every node rank's file descriptor.
 *
 * Collective over `node_comm` (all its ranks must be on this node, e.g. from
 * `MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`). Each rank listens on the Unix socket
 * `<job_dir>/fd-<rank>.sock`, connects to every other node rank and passes `my_fd` with
 * SCM_RIGHTS; the receiver checks with SO_PEERCRED that the peer runs as this user, and the
 * sender checks the same of the listener. `job_dir` is created with mode 0700 when missing
 * (its parent must exist) and refused when it exists with another owner, with any group/other
 * permission, or is not a directory. Every wait is bounded by `timeout`; when any rank fails,
 * every rank throws (none hangs). The sockets are removed before returning; so is `job_dir`
 * when this call made it, once every rank is done with it (a directory that existed, e.g. a
 * job_directory's, is left to its owner).
 *
 * @param node_comm communicator of the ranks of this node
 * @param my_fd this rank's descriptor (not consumed; the caller keeps it)
 * @param job_dir private per-job directory for the sockets, e.g. job_directory::path()
 * @param timeout bound on each wait for the peers
 * @return one descriptor per rank of `node_comm`, indexed by rank (this rank's entry is a
 * duplicate of `my_fd`)
 * @throw funnel::invalid_argument for a bad descriptor, a refused directory or a too-long path
 * @throw funnel::system_error when a socket call fails
 * @throw funnel::error on a timeout, a peer of another user, or when another rank failed
 */
[[nodiscard]] std::vector<unique_fd> allgather_fds(
    MPI_Comm node_comm, int my_fd, const std::string& job_dir,
    std::chrono::milliseconds timeout = std::chrono::seconds(60));

/**
 * @brief A fresh name for a per-job directory for node-local sockets (not created here).
 *
 * `$FUNNEL_JOB_DIR` when set; otherwise `<base>/funnel-<uid>-<jobid>-<random>`, or
 * `$FUNNEL_RUN_DIR/fd-<jobid>-<random>` when funnel-run exported its private directory of the
 * job, where `<base>` is `${TMPDIR:-/tmp}`, `<jobid>` is, as seen by rank 0 of `comm`,
 * `$SLURM_JOB_ID.$SLURM_STEP_ID` under Slurm, else the OpenMPI job id, else the PMIx namespace,
 * else `<pid>-<start seconds>` of rank 0, and `<random>` is 16 hex digits rank 0 draws, so that
 * nobody can take the name first. All ranks get the same name; allgather_fds() makes the
 * directory and removes it again.
 *
 * @deprecated Use job_directory::create(node_comm) and pass its path() to allgather_fds(): it
 * makes the directory private from the start and removes it when the node's last rank is done.
 * @param comm communicator whose ranks must agree (collective)
 * @return the directory path
 * @throw funnel::mpi_error when the broadcast fails
 */
[[deprecated("use funnel::job_directory::create(node_comm).path()")]] [[nodiscard]] std::string
default_job_directory(MPI_Comm comm);

}  // namespace funnel
