// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file binding.hpp
 * @brief Confirms (or makes) the rank-to-GPU binding and warns about time-sliced GPU sharing.
 */
#pragma once

#include <mpi.h>

#include <iosfwd>
#include <string>
#include <utility>

#include "funnel/binding/binding_report.hpp"
#include "funnel/runtime/backend_kind.hpp"

namespace funnel {

/**
 * @brief The binding of this rank, found collectively over a communicator.
 *
 * Started through funnel-run, the rank uses the GPU funnel-run chose (FUNNEL_GPU_UUID, looked up
 * among the visible devices); otherwise detect() makes the same round-robin choice in-process
 * (node-local rank mod visible devices) and makes that device current. Either way it counts the
 * node's ranks per GPU by UUID, checks whether MPS really serves the rank, and, when ranks share
 * a GPU without MPS, prints one loud warning line on rank 0: their kernels are time-sliced.
 *
 * Move-only; owns the node communicator, freed by the destructor while MPI is initialised.
 */
class binding {
 public:
  /**
   * @brief Finds this rank's binding (collective over `comm`).
   * @param comm the ranks of the job (e.g. MPI_COMM_WORLD; not freed)
   * @param backend backend_kind::cuda binds a GPU; backend_kind::host only finds the node-local
   * rank and size
   * @return the binding
   * @throw funnel::invalid_argument for MPI_COMM_NULL or malformed FUNNEL_* variables
   * @throw funnel::unsupported when the CUDA backend is asked for without a visible device
   * @throw funnel::mpi_error, funnel::cuda_error when MPI or CUDA fail
   */
  [[nodiscard]] static binding detect(MPI_Comm comm, backend_kind backend);

  /// @brief Frees the node communicator (errors are logged, never thrown).
  ~binding();
  binding(const binding&) = delete;
  binding& operator=(const binding&) = delete;
  /**
   * @brief Takes over `other`'s communicator.
   * @param other the binding to take; may then only be destroyed or assigned to
   */
  binding(binding&& other) noexcept;
  /**
   * @brief Frees this node communicator, then takes over `other`'s.
   * @param other the binding to take; may then only be destroyed or assigned to
   * @return this binding
   */
  binding& operator=(binding&& other) noexcept;

  /**
   * @brief What was found for this rank.
   * @return the report; binding_report::to_string() gives it as one line
   */
  [[nodiscard]] const binding_report& report() const noexcept { return report_; }

  /**
   * @brief The ranks of this node (MPI_COMM_TYPE_SHARED), ordered as in the communicator.
   * @return the communicator, still owned by this binding (do not free it); MPI_COMM_NULL after
   * a move
   */
  [[nodiscard]] MPI_Comm node_comm() const noexcept { return node_comm_; }

  /**
   * @brief Gathers every rank's binding line on rank 0 (collective).
   * @return on rank 0, one line per rank in rank order, each ending in a newline; elsewhere ""
   * @throw funnel::mpi_error when MPI fails
   */
  [[nodiscard]] std::string plan() const;

  /**
   * @brief Writes plan() to `out` on rank 0 (collective).
   * @param out where rank 0 writes
   * @throw funnel::mpi_error when MPI fails
   */
  void print_plan(std::ostream& out) const;

 private:
  binding(MPI_Comm comm, MPI_Comm node_comm, binding_report report) noexcept
      : comm_(comm), node_comm_(node_comm), report_(std::move(report)) {}
  void free_node_comm() noexcept;

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  binding_report report_;
};

}  // namespace funnel
