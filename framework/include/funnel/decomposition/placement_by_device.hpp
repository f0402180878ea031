// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file placement_by_device.hpp
 * @brief A placement for cartesian_decomposition that keeps the ranks of one GPU together.
 */
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace funnel {

/**
 * @brief The ranks of `comm` in an order that gives the ranks of one node, and within it the
 * ranks of one device, consecutive boxes (collective).
 *
 * Launchers often bind rank r to GPU r mod n (funnel-run's default, round-robin), so
 * consecutive ranks, which cartesian_decomposition makes neighbours by default, sit on
 * different GPUs and their faces cross between GPUs. Given to cartesian_decomposition, this
 * order gives each GPU's ranks consecutive boxes counting x fastest, so a GPU's ranks fill
 * slabs across z (y in 2D) and the faces between GPUs are whole, contiguous planes: nodes in
 * the order of their lowest rank, then each node's devices likewise, then ranks. Ranks keep
 * their numbers; only their boxes change.
 * @param comm the ranks to order
 * @param device what identifies this rank's device across processes (a GPU's UUID); empty for
 * a rank without one, which is then a group of its own
 * @return every rank of `comm` once, in the order they take the boxes; empty (rank order, as
 * without a placement) when no device has two ranks and the nodes hold consecutive ranks
 * @throw funnel::mpi_error when an MPI call fails
 */
[[nodiscard]] std::vector<int> placement_by_device(MPI_Comm comm, const std::string& device);

}  // namespace funnel
