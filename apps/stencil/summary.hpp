// SPDX-FileCopyrightText: 2026 The funnel authors
// SPDX-License-Identifier: Apache-2.0
/**
 * @file summary.hpp
 * @brief What a run did and how fast: the human summary and the --summary JSON.
 */
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "funnel/decomposition/box.hpp"

namespace funnel::stencil {

/// @brief Error of the field against the exact solution (heat3d).
struct error_report {
  double max_abs = 0.0;  ///< largest |u - exact| over the global interior
  double l2 = 0.0;       ///< root mean square of u - exact over the global interior
};

/**
 * @brief Figures of the streamed mode's pipeline (absent in resident mode), summed over the
 * passes; times of the slowest rank, efficiency of the least efficient one.
 */
struct pipeline_report {
  int passes = 0;                ///< passes run (per rank)
  double efficiency = 0.0;       ///< max(T_H2D, T_D2H, T_kernel) / T_pass (worst rank)
  double pass_seconds = 0.0;     ///< T_pass: Σ over passes of first to last operation
  double h2d_seconds = 0.0;      ///< T_H2D: time the host-to-device copies took
  double d2h_seconds = 0.0;      ///< T_D2H: time the device-to-host copies took
  double kernel_seconds = 0.0;   ///< T_kernel: time the per-chunk kernels took
  double h2d_bytes_per_s = 0.0;  ///< host-to-device link bandwidth while copying (rank mean)
  double d2h_bytes_per_s = 0.0;  ///< device-to-host link bandwidth while copying (rank mean)
  std::string choice;            ///< streams / chunks / steps per pass used, and why
};

/**
 * @brief Everything the summaries report. Rates use the steps this invocation ran.
 */
struct run_summary {
  std::string version;                 ///< funnel version
  std::string problem;                 ///< heat3d | jacobi2d
  std::string dtype;                   ///< float | double
  std::string backend;                 ///< host | cuda
  std::string kernel;                  ///< cuda | host | kokkos
  std::string mode;                    ///< resident | streamed
  std::string halo_overlap;            ///< auto | on | off (--halo-overlap; resident mode)
  std::string halo_overlap_used;       ///< on | off | n/a (streamed): the steps that ran
  std::string graphs;                  ///< auto | off (--graphs; resident mode)
  std::string placement;               ///< device | rank (--placement)
  bool boxes_by_device = false;        ///< --placement device chose the boxes
  std::int64_t steps_per_graph = 0;    ///< rank 0's steps per CUDA graph (0: none)
  int halo_depth = 1;                  ///< resident steps per exchange (--halo-depth)
  int steps_per_launch = 1;            ///< resident steps per kernel launch
  int row_align_bytes = 0;             ///< bytes rows' interiors start on (--row-align; 0: none)
  bool halo_pushed = false;            ///< rank 0's graph steps push their exchange
  int ranks = 1;                       ///< MPI ranks
  int nodes = 1;                       ///< nodes (shared-memory domains)
  std::array<int, 3> dims{1, 1, 1};    ///< ranks along x, y, z
  index3 global_cells{1, 1, 1};        ///< interior cells of the whole grid
  std::int64_t first_step = 0;         ///< step the run started at (> 0 after a restart)
  std::int64_t last_step = 0;          ///< step the run ended at
  bool interrupted = false;            ///< stopped early by SIGTERM/SIGUSR1 (checkpointed)
  double seconds = 0.0;                ///< wall time of the step loop (slowest rank)
  double halo_seconds = 0.0;           ///< time spent waiting for halos (slowest rank)
  std::size_t element_size = 8;        ///< bytes per cell value
  std::optional<error_report> error;   ///< heat3d: error at the final step
  std::optional<double> final_norm;    ///< jacobi2d: last L2 norm computed
  std::size_t pool_reserved_high = 0;  ///< largest reserved high-water mark of any rank's pool
  std::size_t pool_used_high = 0;      ///< largest used high-water mark of any rank's pool
  std::optional<pipeline_report> pipeline;  ///< streamed mode figures
  double output_seconds = 0.0;  ///< step-loop time in snapshots and checkpoints (rank 0)
  double output_background_seconds =
      0.0;          ///< snapshot block writes overlapped with steps (slowest rank)
  int outputs = 0;  ///< steps at which snapshots/checkpoints were written

  /// @brief Steps run by this invocation.
  [[nodiscard]] std::int64_t steps() const noexcept { return last_step - first_step; }
  /// @brief Cell updates per step over the whole grid.
  [[nodiscard]] double cells() const noexcept {
    return static_cast<double>(global_cells[0]) * static_cast<double>(global_cells[1]) *
           static_cast<double>(global_cells[2]);
  }
  /// @brief Global cell updates per second.
  [[nodiscard]] double cell_updates_per_second() const noexcept;
  /// @brief Effective memory bandwidth: 2 * cells * sizeof(T) bytes per step over the time.
  [[nodiscard]] double effective_bandwidth() const noexcept;
  /// @brief Share of the step loop spent waiting for halos (0..1). Resident steps time one
  /// exchange in eight and let it stand for those in between (graphs are not timed), so this is
  /// an estimate; the timed one also waits for neighbours that lag, which can put the estimate
  /// above the loop time: it is capped at 1.
  [[nodiscard]] double halo_share() const noexcept;
};

/**
 * @brief The human summary (a few lines, no trailing blank line).
 * @param summary the figures
 */
[[nodiscard]] std::string format_summary(const run_summary& summary);

/**
 * @brief The JSON summary (one object, keys documented in docs/stencil.md).
 * @param summary the figures
 */
[[nodiscard]] std::string to_json(const run_summary& summary);

/**
 * @brief Writes to_json(summary) to `path` (replacing it).
 * @param path file to write
 * @param summary the figures
 * @throw funnel::system_error when the file cannot be written
 */
void write_summary_file(const std::string& path, const run_summary& summary);

}  // namespace funnel::stencil
