// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file solver.hpp
 * @brief What the run loop needs from a problem: step, check, hand its field to I/O.
 */
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "funnel/decomposition/cartesian_decomposition.hpp"
#include "funnel/memory/memory_pool.hpp"
#include "options.hpp"
#include "summary.hpp"

namespace funnel::stencil {

/// @brief The run-wide facts every solver is built from.
struct run_setup {
  const options* opts = nullptr;                           ///< resolved options
  backend_kind backend = backend_kind::host;               ///< where the field lives
  std::string kernel;                                      ///< cuda | host | kokkos
  const cartesian_decomposition* decomposition = nullptr;  ///< the split
  memory_pool* pool = nullptr;                             ///< the field's pool
  bool print = false;                                      ///< this rank prints (rank 0, not quiet)
  std::size_t device_budget_bytes = 0;  ///< streamed mode: device bytes the pipeline may use
  bool halo_overlap = true;  ///< resident mode: --halo-overlap resolved (auto decided by the job)
  /// resident mode: --halo-overlap resolved for steps run as CUDA graphs (auto decided by the job)
  bool graph_overlap = false;
};

/**
 * @brief One problem's time stepping on one rank (collective members: every rank calls them
 * in the same order).
 */
class solver {
 public:
  virtual ~solver() = default;

  /// @brief Sets the initial condition at step 0.
  virtual void initialize() = 0;
  /**
   * @brief Replaces the field with a host copy (restart): `fill` writes the interior of the
   * given host array (allocated layout, halo already initialised).
   * @param step step of the restored field
   * @param fill callback writing the interior
   */
  virtual void restore(std::int64_t step, const std::function<void(void* host)>& fill) = 0;
  /**
   * @brief Advances at least one step, and no further than `step_limit` when it can stop
   * there (resident: every step up to the limit, enqueued ahead of the GPU; streamed: one pass
   * of up to k steps). jacobi2d stops earlier when it converges.
   * @param step_limit the step the run must stop at next (output, check, a look for a stop
   * signal, or the last step)
   * @return seconds spent in the halo exchange (of the steps whose timing is in)
   */
  virtual double advance(std::int64_t step_limit) = 0;
  /// @brief Waits until every step enqueued so far is done (resident mode on a GPU runs the
  /// host ahead of the steps), without copying the field anywhere.
  virtual void wait_for_steps() = 0;
  /// @brief Halo seconds measured but not yet returned by advance() (waits for them).
  [[nodiscard]] virtual double halo_seconds_pending() { return 0.0; }
  /// @brief Steps done so far (the step the field belongs to).
  [[nodiscard]] virtual std::int64_t step() const = 0;
  /// @brief Simulated time of the field.
  [[nodiscard]] virtual double time() const = 0;
  /// @brief True when the problem stops early (jacobi2d: norm at or below the tolerance).
  [[nodiscard]] virtual bool converged() const = 0;
  /// @brief Periodic check after a step (heat3d error every --check-every steps).
  virtual void check() = 0;
  /// @brief Final figures (error or norm) into the summary.
  virtual void finish(run_summary& summary) = 0;
  /**
   * @brief Ends the run (collective): waits for the field's work and closes its halo exchange,
   * so no neighbour maps or writes the field when it is freed. The field stays readable.
   */
  virtual void close() = 0;
  /**
   * @brief Completes a non-blocking collective without waiting forever on a rank that stopped:
   * after the halo watchdog's timeout it throws funnel::stall_error naming the neighbours.
   * @param request from MPI_Iallreduce and the like
   */
  virtual void wait(MPI_Request& request) = 0;
  /// @brief The current field on the host (allocated layout). Valid until the next call.
  [[nodiscard]] virtual const void* host_field() = 0;
  /**
   * @brief Starts copying the current field (allocated layout) into `destination` without
   * waiting for the copy; the next steps may run meanwhile (resident mode on a GPU).
   * @param destination host memory of element_size() × allocated cells, pinned on the cuda
   * backend; not to be touched until the returned function has returned
   * @return waits for the copy (callable on another thread); empty when the copy is done
   */
  [[nodiscard]] virtual std::function<void()> download_async(void* destination) = 0;
  /// @brief Bytes per cell value.
  [[nodiscard]] virtual std::size_t element_size() const = 0;
  /// @brief Name of the field in snapshots and checkpoints.
  [[nodiscard]] virtual std::string field_name() const = 0;
  /// @brief Grid spacing along x, y, z (snapshot and checkpoint attributes).
  [[nodiscard]] virtual std::array<double, 3> spacing() const = 0;
  /// @brief Per-neighbour halo paths for the plan.
  [[nodiscard]] virtual std::vector<std::string> halo_paths() const = 0;
  /// @brief Why a neighbour on this node is reached over MPI rather than IPC ("" if none is).
  [[nodiscard]] virtual std::string halo_fallback() const = 0;
  /// @brief Device bytes this rank holds for the field.
  [[nodiscard]] virtual std::size_t field_bytes() const = 0;
  /// @brief Steps per CUDA graph of the resident steps (0: none; see --graphs).
  [[nodiscard]] virtual std::int64_t steps_per_graph() const { return 0; }
  /// @brief Resident steps per halo exchange (the halo depth; 1 but for deep halos).
  [[nodiscard]] virtual int steps_per_exchange() const { return 1; }
  /// @brief Resident steps per kernel launch (2: both steps after an exchange in one launch).
  [[nodiscard]] virtual int steps_per_launch() const { return 1; }
  /// @brief Resident mode: whether the graphs' steps push their halo exchange from the update
  /// kernel (resident_field, "Pushed exchanges").
  [[nodiscard]] virtual bool halo_pushed() const { return false; }
  /// @brief Resident mode: whether the steps update the inner cells while the faces travel.
  [[nodiscard]] virtual bool halo_overlapped() const { return false; }
  /// @brief Streamed mode: the pipeline's chunks, streams and steps per pass, and why ("" in
  /// resident mode).
  [[nodiscard]] virtual std::string pipeline_plan() const { return {}; }
};

/// @brief Name of the problem's field in snapshots and checkpoints ("u" or "a").
[[nodiscard]] std::string field_name_of(problem_kind problem);

/// @brief One rank's row as --row-align auto weighs it: its unpadded length and its box's size.
struct row_shape {
  std::int64_t row_cells = 0;  ///< interior plus ghosts along x, unpadded
  std::int64_t box_cells = 0;  ///< the rank's interior cells
};

/**
 * @brief The row that makes --row-align auto pad, or 0 where it does not: auto pads for resident
 * jacobi2d with funnel's cuda kernel where some rank's row of n + 2 cells is not a multiple of 16
 * bytes (that kernel then loads it 1 or 2 cells at a time: kernels/src/cuda/vector_rows.cuh) and
 * that rank's box holds at least 10^7 cells; padding measured faster on such boxes and slower on
 * smaller ones (docs/halo.md).
 * @param opts resolved options
 * @param kernel the resolved kernel (cuda, host or kokkos)
 * @param rows the ranks' rows (row_shapes_of)
 * @return the first such row's length in cells (unpadded), or 0
 */
[[nodiscard]] std::int64_t auto_padded_row(const options& opts, const std::string& kernel,
                                           const std::vector<row_shape>& rows);

/**
 * @brief The row alignment of the field's layout, in cells (field_layout::row_align): with
 * --row-align 16, or auto where auto_padded_row finds a row, every row's interior starts on 16
 * bytes; else 1 (rows of n + 2 cells). Every rank takes the same alignment (IPC neighbours check
 * each other's layouts).
 * @param opts resolved options
 * @param kernel the resolved kernel (cuda, host or kokkos)
 * @param rows the ranks' rows (row_shapes_of)
 */
[[nodiscard]] int row_align_of(const options& opts, const std::string& kernel,
                               const std::vector<row_shape>& rows);

/**
 * @brief The row of every distinct box width of `d` (one per x coordinate of its process grid),
 * as row_align_of takes them.
 * @param d a decomposition
 */
[[nodiscard]] std::vector<row_shape> row_shapes_of(const cartesian_decomposition& d);

/**
 * @brief The bytes each row's interior starts on in `d`'s layouts, as --row-align says them (16),
 * or 0 for unpadded rows: what the plan line and the summary report.
 * @param d the decomposition the fields use
 * @param element_size bytes per cell value
 */
[[nodiscard]] int row_align_bytes(const cartesian_decomposition& d, std::size_t element_size);

/**
 * @brief The decomposition a problem needs (global cells; the halo: 1 for jacobi2d, k steps per
 * pass when streamed, --halo-depth for resident heat3d, or 2 for two steps per launch; periodic
 * axes; rows as row_align_of says).
 * @param comm all ranks
 * @param opts resolved options
 * @param kernel the resolved kernel (cuda, host or kokkos)
 * @param placement which box each rank takes (cartesian_decomposition; empty: rank order)
 */
[[nodiscard]] cartesian_decomposition make_decomposition(MPI_Comm comm, const options& opts,
                                                         const std::string& kernel,
                                                         const std::vector<int>& placement);

/**
 * @brief Builds the solver for opts.problem / opts.dtype / opts.mode.
 * @param setup run-wide facts
 */
[[nodiscard]] std::unique_ptr<solver> make_solver(const run_setup& setup);

}  // namespace funnel::stencil
